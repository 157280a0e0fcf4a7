// KA_RARE marks a function that runs on rare rows or once per call beside per-pair work: clang compiles it for size
// (minsize) and keeps it out of its callers, whose loops stay at the file's optimisation level (download size,
// docs/package.md, "What the bytes are"). Binaryen may still inline the small result into a single caller.
#pragma once

#if defined(__clang__)
#define KA_RARE __attribute__((minsize, noinline))
#else
#define KA_RARE
#endif

// Download size (docs/package.md, "What the bytes are"): code that runs once per call, head, row or search step beside
// per-pair work is compiled for size by clang (minsize), while the loops over pairs of points it calls stay at their
// file's -O3. No effect under GCC (the native builds).
//   KA_COLD  compiled for size.
//   KA_RARE  compiled for size and never inlined into its callers, whose own code stays -O3; for rare rows and
//            per-head steps inside hot functions. Binaryen may still inline the small result into a single caller.
#pragma once

#if defined(__clang__)
#define KA_COLD __attribute__((minsize))
#define KA_RARE __attribute__((minsize, noinline))
#else
#define KA_COLD
#define KA_RARE
#endif

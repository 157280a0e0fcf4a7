// doctest's main, in its own translation unit (it dominates build time). Runs natively under CTest and as wasm under
// Node.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

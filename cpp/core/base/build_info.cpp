#include "base/build_info.h"

#include "base/simd.h"

namespace ka {

const char* simd_name() { return xsimd::default_arch::name(); }

}  // namespace ka

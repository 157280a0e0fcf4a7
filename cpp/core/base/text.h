// Reasons and messages: the part of printf they use (%s, %lld, %.Nf, %g, %%), written here so that the module
// links no printf, whose float formatting was 4 kB of the download (issue 21).
#pragma once

#include <cstddef>

namespace ka {

// Formats like std::snprintf for those conversions, always terminated, truncated at `size`: the same digits, rounded
// from the exact binary value, for magnitudes from 1e-16 to 1e22 (beyond, a power of ten is no longer exact in a
// double and the last digit may differ).
void format_text(char* out, size_t size, const char* format, ...);

}  // namespace ka

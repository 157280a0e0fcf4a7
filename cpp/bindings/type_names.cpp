// Embind built without RTTI (EMSCRIPTEN_HAS_UNBOUND_TYPE_NAMES=0) names a type by its address, with
// sprintf("%p") in __getTypeName (compiled to musl's integer-only siprintf): only its "unbound type" errors call it,
// and it is the single-thread module's one printf caller. This siprintf writes that one format itself so that musl's
// printf (2 kB gzip) is not linked (issue 21, download size). Linked into the single-thread module only; any other
// format is copied as it stands.
#include <cstdarg>
#include <cstdint>

extern "C" int siprintf(char* out, const char* format, ...) {
  char* p = out;
  if (format[0] == '%' && format[1] == 'p' && format[2] == 0) {
    va_list args;
    va_start(args, format);
    const auto address = uintptr_t(va_arg(args, void*));
    va_end(args);
    *p++ = '0';
    *p++ = 'x';
    int shift = int(sizeof address) * 8 - 4;
    while (shift > 0 && ((address >> shift) & 15) == 0) shift -= 4;
    for (; shift >= 0; shift -= 4) *p++ = "0123456789abcdef"[(address >> shift) & 15];
  } else {
    for (const char* f = format; *f; ++f) *p++ = *f;
  }
  *p = 0;
  return int(p - out);
}

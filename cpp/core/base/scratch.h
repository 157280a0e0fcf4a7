// A scratch buffer that reports allocation failure instead of aborting (wasm builds have no exceptions).
#pragma once
#include <cstdint>
#include <cstdlib>

namespace ka {

template <class T>
class Scratch {
 public:
  Scratch() = default;
  explicit Scratch(int64_t count)
      : data_(count > 0 && fits(count) ? static_cast<T*>(std::malloc(sizeof(T) * size_t(count))) : nullptr),
        ok_(count <= 0 || data_ != nullptr) {}
  ~Scratch() { std::free(data_); }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  // Replaces the contents by `count` zeroed entries; false (and ok() false) when they cannot be had.
  bool reset_zeroed(int64_t count) {
    std::free(data_);
    data_ = count > 0 ? static_cast<T*>(std::calloc(size_t(count), sizeof(T))) : nullptr;
    return ok_ = count <= 0 || data_ != nullptr;
  }
  // Replaces the contents by `count` entries of `value` (NaN: "not computed yet"); false as reset_zeroed.
  bool reset_filled(int64_t count, T value) {
    if (!reset_zeroed(count)) return false;
    for (int64_t k = 0; k < count; ++k) data_[k] = value;
    return true;
  }
  void swap(Scratch& other) {
    T* const data = data_;
    const bool ok = ok_;
    data_ = other.data_;
    ok_ = other.ok_;
    other.data_ = data;
    other.ok_ = ok;
  }
  bool ok() const { return ok_; }
  T* get() const { return data_; }

 private:
  // Whether the byte count fits a size_t: 32 bits in WebAssembly, where a larger product would wrap around to a
  // small allocation that the caller then overruns.
  static bool fits(int64_t count) { return uint64_t(count) <= SIZE_MAX / sizeof(T); }

  T* data_ = nullptr;
  bool ok_ = true;
};

}  // namespace ka

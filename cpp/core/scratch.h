// A scratch buffer that reports allocation failure instead of aborting (wasm builds have no exceptions).
#pragma once
#include <cstdint>
#include <cstdlib>

namespace ka {

template <class T>
class Scratch {
 public:
  Scratch() = default;
  explicit Scratch(int64_t count) : data_(count > 0 ? static_cast<T*>(std::malloc(sizeof(T) * size_t(count))) : nullptr),
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
  bool ok() const { return ok_; }
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  bool ok_ = true;
};

}  // namespace ka

// Non-owning row-major matrix views: {data, rows, cols, stride}. Heads are column slices with stride > cols.
#pragma once
#include <cstdint>

namespace ka {

template <class T>
struct MatrixView {
  T* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t stride = 0;  // elements between consecutive rows, >= cols

  T* row(int64_t i) const { return data + i * stride; }
  // Columns [first, first + count) of every row.
  MatrixView columns(int64_t first, int64_t count) const { return {data + first, rows, count, stride}; }
  // Rows [first, first + count).
  MatrixView row_range(int64_t first, int64_t count) const { return {data + first * stride, count, cols, stride}; }
};

using ConstMatrix = MatrixView<const float>;
using Matrix = MatrixView<float>;

}  // namespace ka

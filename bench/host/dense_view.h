// A dense row-major TensorView at a given address, for the host-only tests and tools (validate() and make_plan()
// check shapes, strides and pointer alignment; they never read the data).
#pragma once

#include <cstdint>
#include <initializer_list>

#include "flashseek/tensor_view.h"

namespace flashseek {

inline TensorView dense_view(DType dtype, std::initializer_list<int64_t> shape, uintptr_t address = uintptr_t{1} << 20,
                             int device = 0) {
  TensorView t;
  t.data = reinterpret_cast<void*>(address);
  t.dtype = dtype;
  t.rank = static_cast<int>(shape.size());
  t.device = device;
  int i = 0;
  for (int64_t s : shape) t.shape[i++] = s;
  int64_t stride = 1;
  for (int j = t.rank - 1; j >= 0; --j) {
    t.stride[j] = stride;
    stride *= t.shape[j];
  }
  return t;
}

}  // namespace flashseek

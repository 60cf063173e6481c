// A framework-neutral view of a strided tensor: the only way tensors cross into the library.
#pragma once

#include <cstdint>
#include <string>

namespace flashseek {

enum class DType : int32_t {
  kUndefined = 0,
  kFloat16,
  kBFloat16,
  kFloat8E4M3,
  kFloat32,
  kInt32,
  kInt64,
  kOther,
};

const char* dtype_name(DType dtype);
int dtype_bytes(DType dtype);

constexpr int kMaxTensorRank = 4;

struct TensorView {
  void* data = nullptr;
  DType dtype = DType::kUndefined;
  int rank = -1;  // -1: the argument was not given
  int64_t shape[kMaxTensorRank] = {0, 0, 0, 0};
  int64_t stride[kMaxTensorRank] = {0, 0, 0, 0};  // in elements
  int device = -1;  // CUDA ordinal; -1 for host memory

  bool given() const { return rank >= 0; }
  int64_t numel() const {
    if (rank < 0) return 0;
    int64_t n = 1;
    for (int i = 0; i < rank; ++i) n *= shape[i];
    return n;
  }
  std::string shape_string() const;
};

}  // namespace flashseek

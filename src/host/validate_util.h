// Private helpers of the validation module. Each checks one rule and throws flashseek::Error with the message
// "<argument>: expected <rule>, got <actual>", so that every check in validate.cpp reads as one table row.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <cstdio>
#include <string>
#include <string_view>
#include <type_traits>

#include "flashseek/flashseek.h"

namespace flashseek::detail {

using Kind = Error::Kind;

// Most head-dim and stride rules come from the kernels' 16-byte async copies and TMA descriptors.
constexpr int kCopyAlignBytes = 16;
constexpr int kCopyAlignBytesFp8 = 8;
constexpr int kMaxHeadDim = 256;
constexpr int kHeadDimMultiple = 8;
constexpr int kMaxNumSplits = 1024;

// Formats without iostreams: the host library is linked into Python extensions next to other C++ runtimes,
// and plain to_string / snprintf keep it independent of their stream and locale state.
template <class T>
std::string str(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "True" : "False";
  } else if constexpr (std::is_integral_v<T>) {
    return std::to_string(value);
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%g", static_cast<double>(value));
    return buf;
  } else {
    return std::string(value);
  }
}

// Arguments are string views so that the checks that pass (every call's path) build no strings.
[[noreturn]] inline void fail(Kind kind, std::string_view arg, const std::string& expected,
                              const std::string& got) {
  throw Error(kind, std::string(arg) + ": expected " + expected + ", got " + got);
}

// What an optional argument holds, as the caller would say it.
inline std::string describe(const TensorView& t) {
  return t.given() ? "a tensor of shape " + t.shape_string() : std::string("None");
}

inline std::string strides_string(const TensorView& t) {
  TensorView strides = t;
  for (int i = 0; i < t.rank; ++i) strides.shape[i] = t.stride[i];
  return strides.shape_string();
}

inline std::string device_string(int device) {
  return device >= 0 ? "cuda:" + str(device) : std::string("a host tensor");
}

// Shape of a tensor that should have the given sizes, spelled like TensorView::shape_string.
inline std::string shape_string(std::initializer_list<int64_t> shape) {
  TensorView t;
  t.rank = static_cast<int>(shape.size());
  int i = 0;
  for (int64_t s : shape) t.shape[i++] = s;
  return t.shape_string();
}

inline void require_given(const TensorView& t, std::string_view arg, std::string_view why = {}) {
  if (!t.given()) fail(Kind::kValue, arg, "a tensor" + std::string(why), "None");
}

inline void require_absent(const TensorView& t, std::string_view arg, std::string_view why,
                           Kind kind = Kind::kValue) {
  if (t.given()) fail(kind, arg, "None " + std::string(why), describe(t));
}

// `dims` names the expected dimensions, e.g. "(total_q, Hq, d)".
inline void require_rank(const TensorView& t, std::string_view arg, int rank, std::string_view dims) {
  if (t.rank != rank)
    fail(Kind::kValue, arg, "rank " + str(rank) + " " + std::string(dims),
         "rank " + str(t.rank) + " with shape " + t.shape_string());
}

// `why` says where the expected sizes come from, e.g. " (Hq, total_q)".
inline void require_shape(const TensorView& t, std::string_view arg, std::initializer_list<int64_t> shape,
                          std::string_view why) {
  bool same = t.rank == static_cast<int>(shape.size());
  int i = 0;
  for (int64_t s : shape) same = same && t.shape[i++] == s;
  if (!same) fail(Kind::kValue, arg, "shape " + shape_string(shape) + std::string(why), t.shape_string());
}

inline void require_dtype(const TensorView& t, std::string_view arg, DType dtype, std::string_view why = {}) {
  if (t.dtype != dtype) fail(Kind::kType, arg, std::string("dtype ") + dtype_name(dtype) + std::string(why), dtype_name(t.dtype));
}

inline void require_dtype_in(const TensorView& t, std::string_view arg, std::initializer_list<DType> dtypes) {
  for (DType d : dtypes)
    if (t.dtype == d) return;
  std::string names;
  int i = 0;
  for (DType d : dtypes) {
    names += (i == 0 ? "" : (i + 1 == static_cast<int>(dtypes.size()) ? " or " : ", "));
    names += dtype_name(d);
    ++i;
  }
  fail(Kind::kType, arg, "dtype " + names, dtype_name(t.dtype));
}

// The kernels take every tensor from one device; `ref` names the tensor that fixed it.
inline void require_device(const TensorView& t, std::string_view arg, int device, std::string_view ref) {
  if (!t.given() || t.device == device) return;
  fail(Kind::kValue, arg, "a CUDA tensor on " + device_string(device) + " (the device of " + std::string(ref) + ")",
       device_string(t.device));
}

inline void require_cuda(const TensorView& t, std::string_view arg) {
  if (t.device < 0) fail(Kind::kValue, arg, "a CUDA tensor", device_string(t.device));
}

inline void require_last_dim_contiguous(const TensorView& t, std::string_view arg) {
  if (t.rank >= 1 && t.stride[t.rank - 1] != 1)
    fail(Kind::kValue, arg, "the last dim contiguous (stride 1)", "strides " + strides_string(t));
}

// As torch.Tensor.is_contiguous: strides of size-1 dims do not matter.
inline bool is_contiguous(const TensorView& t) {
  int64_t expected = 1;
  for (int i = 0; i < t.rank; ++i)
    if (t.shape[i] == 0) return true;  // an empty tensor is contiguous whatever its strides (torch gives (1, 1))
  for (int i = t.rank - 1; i >= 0; --i) {
    if (t.shape[i] != 1 && t.stride[i] != expected) return false;
    expected *= t.shape[i];
  }
  return true;
}

inline void require_contiguous(const TensorView& t, std::string_view arg) {
  if (!is_contiguous(t)) fail(Kind::kValue, arg, "a contiguous tensor", "strides " + strides_string(t));
}

// The bytes one copy moves: 16 (cp.async, TMA) for 16-bit rows; 8 for e4m3 rows, whose head dims (40, 72) are
// only multiples of 8 bytes.
inline int copy_align_bytes(DType dtype) { return dtype == DType::kFloat8E4M3 ? kCopyAlignBytesFp8 : kCopyAlignBytes; }

// The kernels move rows with aligned copies: every row start must be aligned to copy_align_bytes.
inline void require_aligned_rows(const TensorView& t, std::string_view arg) {
  require_last_dim_contiguous(t, arg);
  const int bytes = dtype_bytes(t.dtype);
  const int align = copy_align_bytes(t.dtype);
  const int64_t multiple = bytes > 0 && bytes < align ? align / bytes : 1;
  for (int i = 0; i + 1 < t.rank; ++i) {
    if (t.stride[i] < 0 || t.stride[i] % multiple != 0)
      fail(Kind::kValue, arg,
           "non-negative strides that are multiples of " + str(multiple) + " elements (" + str(align) +
               "-byte aligned rows)",
           "strides " + strides_string(t));
  }
  const auto address = reinterpret_cast<uintptr_t>(t.data);
  if (address % align != 0) {
    char hex[32];
    std::snprintf(hex, sizeof(hex), "0x%llx", static_cast<unsigned long long>(address));
    fail(Kind::kValue, arg, "a data pointer aligned to " + str(align) + " bytes", hex);
  }
}

// What require_vector asks, without a message: for callers whose message costs a string to build.
inline bool is_vector(const TensorView& t, int64_t size) {
  return t.rank == 1 && t.shape[0] == size && is_contiguous(t);
}

// A contiguous one-dimensional tensor of `size` entries (index tensors, sinks, metadata): the kernels read
// entry i at data + i.
inline void require_vector(const TensorView& t, std::string_view arg, int64_t size, std::string_view why) {
  require_shape(t, arg, {size}, why);
  require_contiguous(t, arg);
}

// d = head dim of q and k; dv = head dim of v. `d_arg` and `dv_arg` name where each came from.
inline void require_head_dims(int64_t d, int64_t dv, std::string_view d_arg, std::string_view dv_arg) {
  if (d < kHeadDimMultiple || d > kMaxHeadDim || d % kHeadDimMultiple != 0)
    fail(Kind::kValue, d_arg, "head dim d a multiple of 8 in [8, 256]", str(d));
  if (dv != d && !(d == 192 && dv == 128))
    fail(Kind::kValue, dv_arg, "head dim dv equal to d=" + str(d) + " (or 128 when d=192)", str(dv));
}

inline void require_window(int left, int right) {
  if (left < -1 || right < -1)
    fail(Kind::kValue, "window_size", "(left, right) each >= -1 (-1 = unbounded)",
         "(" + str(left) + ", " + str(right) + ")");
}

inline void require_num_splits(int num_splits) {
  if (num_splits < 0 || num_splits > kMaxNumSplits)
    fail(Kind::kValue, "num_splits", "a value in [0, 1024] (0 = heuristic, 1 = no split)", str(num_splits));
}

inline void require_non_negative(int64_t value, std::string_view arg) {
  if (value < 0) fail(Kind::kValue, arg, ">= 0", str(value));
}

}  // namespace flashseek::detail

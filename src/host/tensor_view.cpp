// Names and sizes of the dtypes a TensorView can carry, and its shape as error messages print it.
#include "flashseek/tensor_view.h"


namespace flashseek {

// Spelled as torch prints them (without "torch.") so that messages read like the Python caller's own types.
const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat16: return "float16";
    case DType::kBFloat16: return "bfloat16";
    case DType::kFloat8E4M3: return "float8_e4m3fn";
    case DType::kFloat32: return "float32";
    case DType::kInt32: return "int32";
    case DType::kInt64: return "int64";
    case DType::kOther: return "other";
    case DType::kUndefined: return "undefined";
  }
  return "undefined";
}

// 0 for dtypes whose size the library does not know (kOther, kUndefined).
int dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFloat8E4M3: return 1;
    case DType::kFloat16:
    case DType::kBFloat16: return 2;
    case DType::kFloat32:
    case DType::kInt32: return 4;
    case DType::kInt64: return 8;
    case DType::kOther:
    case DType::kUndefined: return 0;
  }
  return 0;
}

// Python's tuple spelling: "(4, 8, 128)", "(5,)", "()".
std::string TensorView::shape_string() const {
  if (rank < 0) return "not given";
  std::string s = "(";
  for (int i = 0; i < rank; ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  if (rank == 1) s += ',';
  return s + ')';
}

}  // namespace flashseek

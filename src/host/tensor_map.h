// Host side of the TMA producer: encodes a CUtensorMap through the driver entry point that the CUDA runtime
// hands out (cudaGetDriverEntryPointByVersion; the library does not link libcuda). Header-only, used by the
// experiment launcher (sm90/fwd_experiments.cu) and the primitive test (tests/gpu_prims/test_tma_load.cu).
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (types only)
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

namespace flashseek {

inline PFN_cuTensorMapEncodeTiled_v12000 tensor_map_encoder() {
  static PFN_cuTensorMapEncodeTiled_v12000 fn = []() -> PFN_cuTensorMapEncodeTiled_v12000 {
    void* ptr = nullptr;
    cudaDriverEntryPointQueryResult status{};
    if (cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &ptr, 12000, cudaEnableDefault, &status) !=
            cudaSuccess ||
        status != cudaDriverEntryPointSuccess) {
      return nullptr;
    }
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(ptr);
  }();
  return fn;
}

// A 3D tensor map over 16-bit elements at `base`: (dim0 = cols contiguous, dim1 = heads at head_stride elements,
// dim2 = rows at row_stride elements), box (64 columns = 128 bytes, 1 head, box_rows rows), 128-byte swizzle (the
// SwizzledTile layout of sm90/prims/smem_tile.h: one box is one 64-column block of a tile), zeros outside.
// Returns an empty string on success, else why the tensor cannot be described (the caller falls back).
inline std::string encode_rows_tensor_map(CUtensorMap* out, const void* base, int cols, int heads, int64_t rows,
                                          int64_t head_stride, int64_t row_stride, int box_rows) {
  if (base == nullptr || rows <= 0 || heads <= 0 || cols <= 0) return "empty tensor";
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "base not 16-byte aligned";
  if ((head_stride * 2) % 16 != 0 || (row_stride * 2) % 16 != 0) return "strides not multiples of 16 bytes";
  if (head_stride <= 0 || row_stride <= 0 || head_stride * 2 >= (int64_t{1} << 40) ||
      row_stride * 2 >= (int64_t{1} << 40))
    return "strides out of range";
  if (box_rows <= 0 || box_rows > 256) return "box rows out of range";
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return "cuTensorMapEncodeTiled not available from the driver";
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(heads),
                              static_cast<cuuint64_t>(rows)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(head_stride * 2), static_cast<cuuint64_t>(row_stride * 2)};
  const cuuint32_t box[3] = {64, 1, static_cast<cuuint32_t>(box_rows)};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUresult r = encode(out, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, const_cast<void*>(base), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                            CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) + ")";
  return std::string();
}

}  // namespace flashseek

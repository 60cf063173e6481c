// Host side of the TMA producer: encodes a CUtensorMap through the driver entry point that the CUDA runtime
// hands out (cudaGetDriverEntryPointByVersion; the library does not link libcuda). Header-only, used by the
// forward launch (host/run.cpp) and the primitive test (tests/gpu_prims/test_tma_load.cu).
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (types only)
#include <cudaTypedefs.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "experiment.h"
#include "l2_policy.h"

namespace flashseek {

inline CUtensorMapL2promotion l2_promotion_of(int bytes) {
  return bytes == 0     ? CU_TENSOR_MAP_L2_PROMOTION_NONE
         : bytes == 64  ? CU_TENSOR_MAP_L2_PROMOTION_L2_64B
         : bytes == 128 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B
                        : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

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

// Rows of 16-bit elements as a 4D tensor: (dim0 = `cols` contiguous columns, dim1 = `heads` at head_stride,
// dim2 = `rows` at row_stride, dim3 = `pages` at page_stride; strides in elements), box (64 columns = 128 bytes,
// 1 head, box_rows rows, 1 page), 128-byte swizzle (the SwizzledTile layout of sm90/prims/smem_tile.h: one box
// is box_rows rows of one 64-column block of a tile), zeros outside the tensor (rows past `rows`, columns past
// `cols`). Any order of the strides (NHD or HND caches). Returns an empty string on success, else why the tensor
// cannot be described (the caller then copies with cp.async). swizzle64: boxes of 32 columns (64 bytes) with the
// 64-byte swizzle instead (the layout of prims/fp8_fragments.h SwizzledTile8Sw64, e4m3 rows of 64 values seen as
// 32 pairs; not yet used by a kernel).
// box_heads: heads per box (the head-packed tiles; the box then lands as box_rows x box_heads rows, head fastest).
inline std::string encode_kv_tensor_map(CUtensorMap* out, const void* base, int cols, int heads, int64_t rows,
                                        int64_t pages, int64_t head_stride, int64_t row_stride,
                                        int64_t page_stride, int box_rows, bool swizzle64 = false,
                                        int box_heads = 1) {
  if (base == nullptr || rows <= 0 || heads <= 0 || cols <= 0 || pages <= 0) return "empty tensor";
  if (reinterpret_cast<uintptr_t>(base) % 16 != 0) return "base not 16-byte aligned";
  if (pages == 1) page_stride = rows * row_stride;  // never stepped over; any valid value
  if (box_heads < 1 || box_heads > heads || box_heads > 256) return "box heads out of range";
  if (heads == 1) head_stride = 8;
  const int64_t strides_in[3] = {head_stride, row_stride, page_stride};
  for (const int64_t s : strides_in) {
    if (s <= 0 || (s * 2) % 16 != 0 || s * 2 >= (int64_t{1} << 40)) return "strides not multiples of 16 bytes";
  }
  if (box_rows <= 0 || box_rows > 256 || box_rows > rows) return "box rows out of range";
  if (rows >= (int64_t{1} << 32) || pages >= (int64_t{1} << 32)) return "dims out of range";
  PFN_cuTensorMapEncodeTiled_v12000 encode = tensor_map_encoder();
  if (encode == nullptr) return "cuTensorMapEncodeTiled not available from the driver";
  const cuuint64_t dims[4] = {static_cast<cuuint64_t>(cols), static_cast<cuuint64_t>(heads),
                              static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(pages)};
  const cuuint64_t strides[3] = {static_cast<cuuint64_t>(head_stride * 2), static_cast<cuuint64_t>(row_stride * 2),
                                 static_cast<cuuint64_t>(page_stride * 2)};
  const cuuint32_t box[4] = {swizzle64 ? 32u : 64u, static_cast<cuuint32_t>(box_heads),
                            static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[4] = {1, 1, 1, 1};
  const CUresult r = encode(out, CU_TENSOR_MAP_DATA_TYPE_UINT16, 4, const_cast<void*>(base), dims, strides, box,
                            elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            swizzle64 ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
                            l2_promotion_of(kv_l2_promotion_bytes(Experiment::get().l2_promotion, swizzle64)), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) return "cuTensorMapEncodeTiled failed (" + std::to_string(static_cast<int>(r)) + ")";
  return std::string();
}

}  // namespace flashseek

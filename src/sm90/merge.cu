#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>

#include "merge.h"
#include "prims/pdl.h"

namespace flashseek::sm90 {
namespace {

constexpr int kRowsPerCta = 8;  // one warp per (token, head) row
constexpr int kRowChunks = 8;   // rows of head_dim <= 256 are loaded whole before the stores (MergeParams::load_first)

template <class T>
__device__ __forceinline__ float to_float(T x);
template <> __device__ __forceinline__ float to_float<float>(float x) { return x; }
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <class T>
__device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ float from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }

// An empty partial reports LSE +inf in FA3; it carries no probability mass, like -inf.
__device__ __forceinline__ float finite_or_neg_inf(float lse) { return isinf(lse) ? -INFINITY : lse; }

template <class T>
__global__ void __launch_bounds__(32 * kRowsPerCta) merge_kernel(const __grid_constant__ MergeParams p) {
  const int row = blockIdx.x * kRowsPerCta + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (row >= p.num_tokens * p.num_heads) return;
  pdl_wait();  // the partials may come from the kernel before (a no-op unless launched as its dependent)
  const int token = row / p.num_heads;
  const int head = row - token * p.num_heads;
  const int64_t lse_index = static_cast<int64_t>(head) * p.num_tokens + token;
  const float lp = finite_or_neg_inf(p.prefix_lse[lse_index]);
  const float ls = finite_or_neg_inf(p.suffix_lse[lse_index]);
  const T* po = static_cast<const T*>(p.prefix_out) + token * p.prefix_row_stride + head * p.prefix_head_stride;
  const T* so = static_cast<const T*>(p.suffix_out) + token * p.suffix_row_stride + head * p.suffix_head_stride;
  T* out = static_cast<T*>(p.out) + token * p.out_row_stride + head * p.out_head_stride;
  // Both rows in registers beside the LSE loads (one round trip); a zero-weight side is loaded but not read.
  const bool load_first = p.load_first && p.head_dim <= 32 * kRowChunks;
  float pre_p[kRowChunks], pre_s[kRowChunks];
  if (load_first) {
#pragma unroll
    for (int i = 0; i < kRowChunks; ++i) {
      const int c = lane + 32 * i;
      pre_p[i] = c < p.head_dim ? to_float<T>(po[c]) : 0.f;
      pre_s[i] = c < p.head_dim ? to_float<T>(so[c]) : 0.f;
    }
  }
  const float top = fmaxf(lp, ls);
  float wp = 0.f, ws = 0.f, total = 0.f;
  if (top != -INFINITY) {
    wp = expf(lp - top);
    ws = expf(ls - top);
    total = wp + ws;
    wp /= total;
    ws /= total;
  }
  if (load_first) {
#pragma unroll
    for (int i = 0; i < kRowChunks; ++i) {
      const int c = lane + 32 * i;
      if (c < p.head_dim) {
        float v = 0.f;
        if (wp > 0.f) v += wp * pre_p[i];
        if (ws > 0.f) v += ws * pre_s[i];
        out[c] = from_float<T>(v);
      }
    }
  } else {
    for (int c = lane; c < p.head_dim; c += 32) {
      // Skipping a zero-weight side keeps garbage (even NaN) in an empty partial out of the result.
      float v = 0.f;
      if (wp > 0.f) v += wp * to_float<T>(po[c]);
      if (ws > 0.f) v += ws * to_float<T>(so[c]);
      out[c] = from_float<T>(v);
    }
  }
  if (p.out_lse != nullptr && lane == 0) p.out_lse[lse_index] = total > 0.f ? top + logf(total) : -INFINITY;
}

}  // namespace

cudaError_t launch_merge_attn_states(const MergeParams& p, cudaStream_t stream) {
  const int64_t rows = static_cast<int64_t>(p.num_tokens) * p.num_heads;
  if (rows == 0) return cudaSuccess;
  const unsigned grid = static_cast<unsigned>((rows + kRowsPerCta - 1) / kRowsPerCta);
  switch (p.dtype) {
    case ScalarType::kBFloat16:
      return launch_kernel(merge_kernel<__nv_bfloat16>, grid, 32 * kRowsPerCta, 0, stream, p.programmatic, p);
    case ScalarType::kFloat16:
      return launch_kernel(merge_kernel<__half>, grid, 32 * kRowsPerCta, 0, stream, p.programmatic, p);
    default: return launch_kernel(merge_kernel<float>, grid, 32 * kRowsPerCta, 0, stream, p.programmatic, p);
  }
}

}  // namespace flashseek::sm90

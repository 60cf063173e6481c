#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "append_kv.h"
#include "prims/pdl.h"

namespace flashseek::sm90 {
namespace {

constexpr int kRowsPerCta = 8;  // one warp per row
constexpr int kRowChunks = 8;   // rows of head_dim <= 256 are loaded whole before the stores (load_first)

template <class T> __device__ __forceinline__ float to_float(T x);
template <> __device__ __forceinline__ float to_float<__nv_bfloat16>(__nv_bfloat16 x) { return __bfloat162float(x); }
template <> __device__ __forceinline__ float to_float<__half>(__half x) { return __half2float(x); }
template <class T> __device__ __forceinline__ T from_float(float x);
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) { return __float2bfloat16_rn(x); }
template <> __device__ __forceinline__ __half from_float<__half>(float x) { return __float2half_rn(x); }

// What element c of a row needs for its rotation by the angle table row `pos` (GPT-NeoX halves, or interleaved
// pairs): loaded by rotary_terms, combined by rotated(), so that a row's loads can all precede its stores.
struct RotaryTerms {
  float x1, x2, cs, sn;
  bool rotate, first;
};

__device__ __forceinline__ float rotated(const RotaryTerms& r) {
  if (!r.rotate) return r.x1;
  return r.first ? r.x1 * r.cs - r.x2 * r.sn : r.x1 * r.sn + r.x2 * r.cs;
}

template <class T>
__device__ __forceinline__ RotaryTerms rotary_terms(const AppendKVParams& p, const T* x, int c, int pos) {
  RotaryTerms r{};
  r.rotate = p.rotary_cos != nullptr && c < p.rotary_dim;
  if (!r.rotate) {
    r.x1 = to_float<T>(x[c]);
    return r;
  }
  const T* cos_row = static_cast<const T*>(p.rotary_cos) + static_cast<int64_t>(pos) * p.rotary_row_stride;
  const T* sin_row = static_cast<const T*>(p.rotary_sin) + static_cast<int64_t>(pos) * p.rotary_row_stride;
  const int half = p.rotary_dim / 2;
  int first, second, angle;
  if (p.rotary_interleaved) {
    first = c & ~1;
    second = first + 1;
    angle = c / 2;
  } else {
    angle = c < half ? c : c - half;
    first = angle;
    second = angle + half;
  }
  r.cs = to_float<T>(cos_row[angle]);
  r.sn = to_float<T>(sin_row[angle]);
  r.x1 = to_float<T>(x[first]);
  r.x2 = to_float<T>(x[second]);
  r.first = c == first;
  return r;
}

template <class T>
__device__ __forceinline__ float rotated(const AppendKVParams& p, const T* x, int c, int pos) {
  return rotated(rotary_terms(p, x, c, pos));
}

// Row `src` (rotated) to `dst`, and `src_v` to `dst_v` when given. With p.load_first (rows of head_dim <= 256) every
// load precedes the first store: the compiler cannot move a load above a store that may alias it, so the plain
// loop pays one memory round trip per 32 columns (entry 54). The same arithmetic either way.
template <class T>
__device__ __forceinline__ void copy_rotated_rows(const AppendKVParams& p, const T* src, T* dst, int dim,
                                                  const T* src_v, T* dst_v, int dim_v, int pos, int lane) {
  if (p.load_first && dim <= 32 * kRowChunks && dim_v <= 32 * kRowChunks) {
    RotaryTerms terms[kRowChunks];
    T values[kRowChunks];
#pragma unroll
    for (int i = 0; i < kRowChunks; ++i) {
      const int c = lane + 32 * i;
      if (c < dim) terms[i] = rotary_terms(p, src, c, pos);
      if (src_v != nullptr && c < dim_v) values[i] = src_v[c];
    }
#pragma unroll
    for (int i = 0; i < kRowChunks; ++i) {
      const int c = lane + 32 * i;
      if (c < dim) dst[c] = from_float<T>(rotated(terms[i]));
      if (src_v != nullptr && c < dim_v) dst_v[c] = values[i];
    }
    return;
  }
  for (int c = lane; c < dim; c += 32) dst[c] = from_float<T>(rotated(p, src, c, pos));
  if (src_v != nullptr) {
    for (int c = lane; c < dim_v; c += 32) dst_v[c] = src_v[c];
  }
}

template <class T>
__global__ void __launch_bounds__(32 * kRowsPerCta) append_kv_kernel(const __grid_constant__ AppendKVParams p) {
  const int64_t row = static_cast<int64_t>(blockIdx.x) * kRowsPerCta + threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  if (p.trigger_dependents) pdl_trigger();
  const int64_t kv_rows = p.k_new != nullptr ? static_cast<int64_t>(p.batch) * p.seqlen_new * p.num_heads_kv : 0;
  const int64_t q_rows = p.q_rotated != nullptr ? static_cast<int64_t>(p.batch) * p.seqlen_q * p.num_heads_q : 0;
  if (row < kv_rows) {
    const int h = static_cast<int>(row % p.num_heads_kv);
    const int i = static_cast<int>((row / p.num_heads_kv) % p.seqlen_new);
    const int b = static_cast<int>(row / (static_cast<int64_t>(p.num_heads_kv) * p.seqlen_new));
    const int pos = p.cache_seqlens[b] + i;
    int64_t k_dst, v_dst;
    if (p.paged) {
      const int col = pos / p.page_size;
      if (pos < 0 || col >= p.block_table_width) return;
      int page = p.block_table[static_cast<int64_t>(b) * p.block_table_stride + col];
      page = max(0, min(page, p.num_pages - 1));
      const int in_page = pos - col * p.page_size;
      k_dst = page * p.k_page_stride + in_page * p.k_row_stride;
      v_dst = page * p.v_page_stride + in_page * p.v_row_stride;
    } else {
      if (pos < 0 || pos >= p.page_size) return;
      int cache_row = p.cache_batch_idx != nullptr ? p.cache_batch_idx[b] : b;
      cache_row = max(0, min(cache_row, p.num_pages - 1));
      k_dst = cache_row * p.k_page_stride + static_cast<int64_t>(pos) * p.k_row_stride;
      v_dst = cache_row * p.v_page_stride + static_cast<int64_t>(pos) * p.v_row_stride;
    }
    const T* kn = static_cast<const T*>(p.k_new) + b * p.kn_batch_stride + i * p.kn_row_stride + h * p.kn_head_stride;
    const T* vn = static_cast<const T*>(p.v_new) + b * p.vn_batch_stride + i * p.vn_row_stride + h * p.vn_head_stride;
    T* kc = static_cast<T*>(p.k_cache) + k_dst + h * p.k_head_stride;
    T* vc = static_cast<T*>(p.v_cache) + v_dst + h * p.v_head_stride;
    const int angle_row = min(max(pos, 0), p.rotary_rows - 1);
    copy_rotated_rows(p, kn, kc, p.head_dim, vn, vc, p.head_dim_v, angle_row, lane);
    return;
  }
  const int64_t qrow = row - kv_rows;
  if (qrow >= q_rows) return;
  const int h = static_cast<int>(qrow % p.num_heads_q);
  const int i = static_cast<int>((qrow / p.num_heads_q) % p.seqlen_q);
  const int b = static_cast<int>(qrow / (static_cast<int64_t>(p.num_heads_q) * p.seqlen_q));
  const int pos = p.cache_seqlens[b] + (p.q_positions_advance ? i : 0);
  const int angle_row = min(max(pos, 0), p.rotary_rows - 1);
  const T* q = static_cast<const T*>(p.q) + b * p.q_batch_stride + i * p.q_row_stride + h * p.q_head_stride;
  T* qr = static_cast<T*>(p.q_rotated) + b * p.qr_batch_stride + i * p.qr_row_stride + h * p.qr_head_stride;
  copy_rotated_rows<T>(p, q, qr, p.head_dim, nullptr, nullptr, 0, angle_row, lane);
}

}  // namespace

cudaError_t launch_append_kv(const AppendKVParams& p, cudaStream_t stream) {
  const int64_t kv_rows = p.k_new != nullptr ? static_cast<int64_t>(p.batch) * p.seqlen_new * p.num_heads_kv : 0;
  const int64_t q_rows = p.q_rotated != nullptr ? static_cast<int64_t>(p.batch) * p.seqlen_q * p.num_heads_q : 0;
  const int64_t rows = kv_rows + q_rows;
  if (rows == 0) return cudaSuccess;
  const unsigned grid = static_cast<unsigned>((rows + kRowsPerCta - 1) / kRowsPerCta);
  if (p.dtype == ScalarType::kFloat16) {
    append_kv_kernel<__half><<<grid, 32 * kRowsPerCta, 0, stream>>>(p);
  } else {
    append_kv_kernel<__nv_bfloat16><<<grid, 32 * kRowsPerCta, 0, stream>>>(p);
  }
  return cudaGetLastError();
}

}  // namespace flashseek::sm90

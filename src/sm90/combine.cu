#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "combine.h"
#include "prims/float_ops.h"
#include "per_device_setup.h"
#include "prims/pdl.h"
#include "seqlen.h"
#include "sinks.h"

namespace flashseek::sm90 {
namespace {

constexpr int kRowsPerCta = 8;  // one warp per row

template <class Element>
__device__ __forceinline__ Element from_float(float x);
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}

// The (q row, query head) of combine row `row` of grid row `b`; false for a row past its sequence. Per sequence
// (the grid's y): rows token * Hq + head of sequence b, max_seqlen_q x Hq of them. Over q's rows (combine_mode
// bit 2, a varlen batch far shorter than batch x max_seqlen_q): row q_row * Hq + head for the rows the sequences
// cover, [cu_seqlens_q[0], cu_seqlens_q[batch]), clamped as SequenceInfo clamps them.
__device__ __forceinline__ bool combine_row(const FwdParams& p, int row, int b, int64_t& q_row, int& head) {
  if (p.combine_mode & 4) {
    q_row = row / p.num_heads_q;
    head = row - static_cast<int>(q_row) * p.num_heads_q;
    const int lo = max(0, min(p.cu_seqlens_q[0], p.total_q));
    const int hi = max(lo, min(p.cu_seqlens_q[p.batch], p.total_q));
    return q_row >= lo && q_row < hi;
  }
  const SequenceInfo seq = SequenceInfo::load(p, b);
  if (row >= seq.seqlen_q * p.num_heads_q) return false;
  const int token = row / p.num_heads_q;
  head = row - token * p.num_heads_q;
  q_row = seq.q_start + token;
  return true;
}

template <class Element, int kDvPadded>
__global__ void __launch_bounds__(32 * kRowsPerCta) combine_splits_kernel(const __grid_constant__ FwdParams p) {
  const int warp = threadIdx.x / 32;
  const int lane = threadIdx.x % 32;
  int64_t q_row;
  int head;
  if (!combine_row(p, blockIdx.x * kRowsPerCta + warp, blockIdx.y, q_row, head)) return;
  const int64_t split_stride = static_cast<int64_t>(p.total_q) * p.num_heads_q;
  const int64_t first = q_row * p.num_heads_q + head;
  // warp-combine-pdl: as the row combine below (the sequence bounds above are inputs, not the forward's writes)
  if ((p.combine_mode & (64 | 32)) == (64 | 32)) pdl_trigger();
  if ((p.combine_mode & (64 | 2)) == (64 | 2)) pdl_wait();

  float lse_max = -INFINITY;
  for (int s = lane; s < p.num_splits; s += 32) lse_max = max_propagate_nan(lse_max, p.lse_partial[first + s * split_stride]);
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) lse_max = max_propagate_nan(lse_max, __shfl_xor_sync(0xffffffff, lse_max, offset));

  const float sink = p.s_aux != nullptr ? sink_logit(p, head) : -INFINITY;
  const float top = max_propagate_nan(lse_max, sink);  // NaN when a split saw a NaN logit

  // Each lane owns columns 2 * lane + 64 * i. The weights of 32 splits at a time sit one per lane and are
  // broadcast; the loads of different splits are independent, so several are in flight at once (a serial
  // split loop is latency-bound: a 128-split row would cost tens of microseconds).
  constexpr int kPairs = (kDvPadded + 63) / 64;
  float2 acc[kPairs];
#pragma unroll
  for (int i = 0; i < kPairs; ++i) acc[i] = make_float2(0.f, 0.f);
  float total = 0.f;
  if (top != -INFINITY) {
    for (int chunk = 0; chunk < p.num_splits; chunk += 32) {
      const int mine = chunk + lane;
      const float lse = mine < p.num_splits ? p.lse_partial[first + mine * split_stride] : -INFINITY;
      const float w_mine = lse == -INFINITY ? 0.f : expf(lse - top);
      total += w_mine;
      const int count = min(32, p.num_splits - chunk);
#pragma unroll 4
      for (int j = 0; j < count; ++j) {
        const float w = __shfl_sync(0xffffffff, w_mine, j);
        // An empty split wrote zeros with weight 0; a split's NaN (from real inputs) still propagates.
        const float* o = p.o_partial + (first + (chunk + j) * split_stride) * kDvPadded;
#pragma unroll
        for (int i = 0; i < kPairs; ++i) {
          const int col = 2 * lane + 64 * i;
          if (col < kDvPadded) {
            const float2 v = *reinterpret_cast<const float2*>(o + col);
            acc[i].x += w * v.x;
            acc[i].y += w * v.y;
          }
        }
      }
    }
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) total += __shfl_xor_sync(0xffffffff, total, offset);
    if (p.s_aux != nullptr) total += expf(sink - top);
  }
  const float inv = total == 0.f ? 0.f : 1.f / total;  // NaN stays NaN

  Element* out = static_cast<Element*>(p.out) + q_row * p.o_row_stride + static_cast<int64_t>(head) * p.o_head_stride;
#pragma unroll
  for (int i = 0; i < kPairs; ++i) {
    const int col = 2 * lane + 64 * i;
    if (col < p.head_dim_v) {
      out[col] = from_float<Element>(acc[i].x * inv);
      out[col + 1] = from_float<Element>(acc[i].y * inv);
    }
  }
  if (p.lse != nullptr && lane == 0) {
    p.lse[static_cast<int64_t>(head) * p.total_q + q_row] = total == 0.f ? -INFINITY : top + logf(total);
  }
}

// One CTA per (token, query head) row: a thread per split reads the LSEs (splits <= kMaxCombineSplits), then
// groups of kDvPadded / 4 threads take splits round robin, each thread a float4 of columns, several splits'
// loads in flight per thread; the groups' sums are added in a fixed order (deterministic). A row's partials
// (splits x dv x 4 bytes, 64 KB at 128 splits) are read by one SM at full memory parallelism, and rows spread
// over SMs (the warp-per-row kernel put the 8 rows of a one-KV-head decode on one SM: ~20 us at 128 splits).
constexpr int kCombineThreads = 256;

template <class Element, int kDvPadded>
__global__ void __launch_bounds__(kCombineThreads) combine_rows_kernel(const __grid_constant__ FwdParams p) {
  constexpr int kColThreads = kDvPadded / 4;
  constexpr int kGroups = kCombineThreads / kColThreads;
  __shared__ float weight[kCombineThreads];
  __shared__ float4 partial[kGroups][kColThreads];
  __shared__ float reduce[kCombineThreads / 32];

  const int tid = threadIdx.x;
  const int lane = tid % 32;
  const int warp = tid / 32;
  int64_t q_row;
  int head;
  if (!combine_row(p, blockIdx.x, blockIdx.y, q_row, head)) return;
  const int64_t split_stride = static_cast<int64_t>(p.total_q) * p.num_heads_q;
  const int64_t first = q_row * p.num_heads_q + head;
  // pdl-chain: the next forward or merge places its CTAs meanwhile; its wait covers this grid's completion,
  // which follows the forward's.
  if (p.combine_mode & 32) pdl_trigger();
  if (p.combine_mode & 2) pdl_wait();

  const int num_splits = min(p.num_splits, kCombineThreads);
  const int group = tid / kColThreads;
  const int col = tid - group * kColThreads;
  const float* o = p.o_partial + first * kDvPadded + 4 * col;
  // Bit 3: each group's first kAhead partials are loaded beside the LSEs, so their L2 round trip overlaps the
  // LSEs' instead of following the weights (the sums below take them in the same order: the same bits).
  constexpr int kAhead = 4;
  const bool ahead = (p.combine_mode & 8) != 0 && group < kGroups;
  float4 early[kAhead];
#pragma unroll
  for (int i = 0; i < kAhead; ++i) {
    const int s = group + i * kGroups;
    early[i] = ahead && s < num_splits ? *reinterpret_cast<const float4*>(o + s * split_stride * kDvPadded)
                                       : make_float4(0.f, 0.f, 0.f, 0.f);
  }
  const float lse = tid < num_splits ? p.lse_partial[first + tid * split_stride] : -INFINITY;
  float m = lse;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) m = max_propagate_nan(m, __shfl_xor_sync(0xffffffff, m, offset));
  if (lane == 0) reduce[warp] = m;
  __syncthreads();
  float lse_max = reduce[0];
#pragma unroll
  for (int w = 1; w < kCombineThreads / 32; ++w) lse_max = max_propagate_nan(lse_max, reduce[w]);
  const float sink = p.s_aux != nullptr ? sink_logit(p, head) : -INFINITY;
  const float top = max_propagate_nan(lse_max, sink);  // NaN when a split saw a NaN logit
  const float w_mine = (top == -INFINITY || lse == -INFINITY) ? 0.f : expf(lse - top);
  weight[tid] = w_mine;
  float t = w_mine;
#pragma unroll
  for (int offset = 16; offset > 0; offset >>= 1) t += __shfl_xor_sync(0xffffffff, t, offset);
  __syncthreads();  // weight[] complete; reduce[] read by everyone
  if (lane == 0) reduce[warp] = t;

  float4 acc = make_float4(0.f, 0.f, 0.f, 0.f);
  if (group < kGroups && top != -INFINITY) {
    int s = group;
    if (ahead) {
#pragma unroll
      for (int i = 0; i < kAhead; ++i, s += kGroups) {
        if (s < num_splits) {
          const float w = weight[s];
          acc.x += w * early[i].x;
          acc.y += w * early[i].y;
          acc.z += w * early[i].z;
          acc.w += w * early[i].w;
        }
      }
    }
#pragma unroll 4
    for (; s < num_splits; s += kGroups) {
      const float w = weight[s];
      // An empty split wrote zeros with weight 0; a split's NaN (from real inputs) still propagates.
      const float4 v = *reinterpret_cast<const float4*>(o + s * split_stride * kDvPadded);
      acc.x += w * v.x;
      acc.y += w * v.y;
      acc.z += w * v.z;
      acc.w += w * v.w;
    }
  }
  if (group < kGroups) partial[group][col] = acc;
  __syncthreads();
  float total = 0.f;
  if (top != -INFINITY) {
#pragma unroll
    for (int w = 0; w < kCombineThreads / 32; ++w) total += reduce[w];
    if (p.s_aux != nullptr) total += expf(sink - top);
  }
  const float inv = total == 0.f ? 0.f : 1.f / total;  // NaN stays NaN
  if (tid < kColThreads) {
    float4 sum = partial[0][tid];
#pragma unroll
    for (int g = 1; g < kGroups; ++g) {
      const float4 x = partial[g][tid];
      sum.x += x.x;
      sum.y += x.y;
      sum.z += x.z;
      sum.w += x.w;
    }
    Element* out =
        static_cast<Element*>(p.out) + q_row * p.o_row_stride + static_cast<int64_t>(head) * p.o_head_stride;
    const int c = 4 * tid;
    if (c < p.head_dim_v) {  // head_dim_v is a multiple of 8
      out[c] = from_float<Element>(sum.x * inv);
      out[c + 1] = from_float<Element>(sum.y * inv);
      out[c + 2] = from_float<Element>(sum.z * inv);
      out[c + 3] = from_float<Element>(sum.w * inv);
    }
  }
  if (p.lse != nullptr && tid == 0) {
    p.lse[static_cast<int64_t>(head) * p.total_q + q_row] = total == 0.f ? -INFINITY : top + logf(total);
  }
}

}  // namespace

// combine_mode bit 4 (entry 80): the kernel prefers the whole unified L1 as shared memory. The forward kernels'
// 100-220 KB of shared memory put their SMs in that configuration; a combine left to the driver's choice may get a
// smaller carveout, and an SM changes its carveout only when idle, so its CTAs (launched early by PDL) would wait for
// the forward's last CTA there to leave, then for the reconfiguration, and the next call's forward again. Once per
// kernel and device.
namespace {
template <auto kKernel>
cudaError_t prefer_max_shared(const FwdParams& p) {
  if ((p.combine_mode & 16) == 0) return cudaSuccess;
  static PerDevice<cudaError_t> slots;
  return once_per_device(slots, [] {
    return cudaFuncSetAttribute(kKernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                cudaSharedmemCarveoutMaxShared);
  });
}
}  // namespace

template <class Element, int kDvPadded>
cudaError_t launch_combine_splits(const FwdParams& p, int max_seqlen_q, cudaStream_t stream) {
  const bool over_q_rows = (p.combine_mode & 4) != 0;
  const int rows = (over_q_rows ? p.total_q : max_seqlen_q) * p.num_heads_q;
  const int grid_y = over_q_rows ? 1 : p.batch;
  if ((p.combine_mode & 1) || p.num_splits > kCombineThreads) {  // the warp-per-row kernel (any split count)
    const dim3 grid((rows + kRowsPerCta - 1) / kRowsPerCta, grid_y);
    if (grid.x == 0 || grid.y == 0) return cudaSuccess;
    if (const cudaError_t e = prefer_max_shared<combine_splits_kernel<Element, kDvPadded>>(p); e != cudaSuccess) {
      return e;
    }
    return launch_kernel(combine_splits_kernel<Element, kDvPadded>, grid, 32 * kRowsPerCta, 0, stream,
                         (p.combine_mode & (64 | 2)) == (64 | 2), p);
  }
  const dim3 grid(rows, grid_y);
  if (grid.x == 0 || grid.y == 0) return cudaSuccess;
  if (const cudaError_t e = prefer_max_shared<combine_rows_kernel<Element, kDvPadded>>(p); e != cudaSuccess) return e;
  // Programmatic dependent launch (bit 1): the combine's launch overlaps the forward kernel's tail; its CTAs wait
  // (griddepcontrol.wait) for the forward grid's completion and memory before reading the partials.
  return launch_kernel(combine_rows_kernel<Element, kDvPadded>, grid, kCombineThreads, 0, stream,
                       (p.combine_mode & 2) != 0, p);
}

#define FLASHSEEK_INSTANTIATE_COMBINE(Element, Dv) \
  template cudaError_t launch_combine_splits<Element, Dv>(const FwdParams&, int, cudaStream_t);
FLASHSEEK_INSTANTIATE_COMBINE(__nv_bfloat16, 64)
FLASHSEEK_INSTANTIATE_COMBINE(__nv_bfloat16, 96)  // the d96 tiles
FLASHSEEK_INSTANTIATE_COMBINE(__nv_bfloat16, 128)
FLASHSEEK_INSTANTIATE_COMBINE(__nv_bfloat16, 192)
FLASHSEEK_INSTANTIATE_COMBINE(__nv_bfloat16, 256)
FLASHSEEK_INSTANTIATE_COMBINE(__nv_bfloat16, 512)  // MLA decode
FLASHSEEK_INSTANTIATE_COMBINE(__half, 64)
FLASHSEEK_INSTANTIATE_COMBINE(__half, 96)
FLASHSEEK_INSTANTIATE_COMBINE(__half, 128)
FLASHSEEK_INSTANTIATE_COMBINE(__half, 192)
FLASHSEEK_INSTANTIATE_COMBINE(__half, 256)
FLASHSEEK_INSTANTIATE_COMBINE(__half, 512)  // MLA decode
#undef FLASHSEEK_INSTANTIATE_COMBINE

}  // namespace flashseek::sm90

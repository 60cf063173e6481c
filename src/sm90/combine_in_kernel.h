// The split combine inside the forward kernel (FwdParams::combine_mode bit 4; FLASHSEEK_EXPERIMENT=
// combine-in-kernel, docs/perf-log.md entry 55): after a consumer warpgroup has stored its rows' partials, it counts
// itself in its row group's counter; the warpgroup that completes the count (the last of the num_splits CTAs of
// that m block, KV head and sequence) combines the group's rows and puts the counter back to zero. A small split
// decode then runs as one kernel. The sums follow combine_rows_kernel's order exactly (combine.cu: groups of
// kDv / 4 columns' threads over splits g, g + kGroups, ..., then the groups in order; the weights' sum as its warp
// reductions), so the bits are those of the combine kernel.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "fwd_params.h"
#include "kernel_traits.h"
#include "prims/float_ops.h"
#include "prims/mbarrier.h"
#include "seqlen.h"
#include "sinks.h"

namespace flashseek::sm90 {

// Row groups a launch's counters cover, and launches in flight at once (a ring, as the persistent scheduler's).
constexpr int kSplitGroupsPerSlot = 4096;
constexpr int kSplitCounterSlots = 64;
constexpr int kCombineInKernelMaxSplits = 32;  // a warp's lanes hold the splits' weights
constexpr int kCombineInKernelBit = 16;

template <class Traits>
struct CombineInKernel {
  static constexpr int kDv = Traits::kDv;
  // combine_rows_kernel's thread groups for this dv: kDv / 4 columns' threads each, 256 threads in all.
  static constexpr int kColThreads = kDv / 4;
  static constexpr int kGroups = 256 / kColThreads;

  __device__ __forceinline__ static float load_cg(const float* ptr) {
    float v;
    asm volatile("ld.global.cg.f32 %0, [%1];\n" : "=f"(v) : "l"(ptr));
    return v;
  }
  __device__ __forceinline__ static float4 load_cg4(const float* ptr) {
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];\n"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(ptr));
    return v;
  }

  // Called by all 128 threads of consumer warpgroup `wg` after store_partial. `flag` is a 4-byte word of shared
  // memory this warpgroup owns (its rows of the O staging tile, unused on the split path).
  __device__ static void run(const FwdParams& p, const SequenceInfo& seq, int kv_head, int row_begin, int wg,
                             int tid, uint32_t flag) {
    const uint32_t barrier = static_cast<uint32_t>(NamedBarrier::kConsumerWarpgroup0) + wg;
    const int group =
        ((static_cast<int>(blockIdx.z) * static_cast<int>(gridDim.x) + static_cast<int>(blockIdx.x)) *
             p.num_heads_kv + kv_head) * Traits::kConsumerWarpgroups + wg;
    __threadfence();  // this thread's partials visible device-wide before the count
    named_barrier_sync(barrier, 128);
    if (tid == 0) {
      const int before = atomicAdd(p.split_counters + group, 1);
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(flag), "r"(before == p.num_splits - 1 ? 1 : 0) : "memory");
    }
    named_barrier_sync(barrier, 128);
    int last;
    asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(last) : "r"(flag) : "memory");
    if (!last) return;
    __threadfence();  // the other CTAs' partials (read below through L2) after their counts

    // One warp per row: the warpgroup's 64 packed rows, 16 per warp.
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int G = p.qheads_per_kvhead;
    const int64_t split_stride = static_cast<int64_t>(p.total_q) * p.num_heads_q;
    for (int row = warp; row < 64; row += 4) {
      const int packed = row_begin + 64 * wg + row;
      const int token = p.qheads_div.div(packed);
      if (token >= seq.seqlen_q) break;  // rows only grow past the sequence
      const int head = kv_head * G + (packed - token * G);
      const int64_t q_row = seq.q_start + token;
      combine_row(p, q_row, head, split_stride, lane);
    }
    if (tid == 0) p.split_counters[group] = 0;  // the next launch on this slot starts from zero
  }

  __device__ __forceinline__ static void add_group(float4& sum, const float4& group_sum, bool& summed) {
    if (!summed) {
      sum = group_sum;
      summed = true;
    } else {
      sum.x += group_sum.x;
      sum.y += group_sum.y;
      sum.z += group_sum.z;
      sum.w += group_sum.w;
    }
  }

  // One row's combine by one warp (num_splits <= 32: lane s holds split s's LSE and weight), in
  // combine_rows_kernel's order. Its O loads go out eight at a time in that order, so a row costs about
  // num_splits / 8 L2 round trips.
  __device__ static void combine_row(const FwdParams& p, int64_t q_row, int head, int64_t split_stride, int lane) {
    const int num_splits = p.num_splits;
    const int64_t first = q_row * p.num_heads_q + head;
    const float lse = lane < num_splits ? load_cg(p.lse_partial + first + lane * split_stride) : -INFINITY;
    float lse_max = lse;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) {
      lse_max = max_propagate_nan(lse_max, __shfl_xor_sync(0xffffffff, lse_max, offset));
    }
    const float sink = p.s_aux != nullptr ? sink_logit(p, head) : -INFINITY;
    const float top = max_propagate_nan(lse_max, sink);  // NaN when a split saw a NaN logit
    const float w_mine = (top == -INFINITY || lse == -INFINITY) ? 0.f : expf(lse - top);
    float t = w_mine;
#pragma unroll
    for (int offset = 16; offset > 0; offset >>= 1) t += __shfl_xor_sync(0xffffffff, t, offset);
    // combine_rows_kernel: 0 + its warps' sums in order (the later warps' zeros change no bits), then the sink.
    float total = 0.f;
    if (top != -INFINITY) {
      total += t;
      if (p.s_aux != nullptr) total += expf(sink - top);
    }
    const float inv = total == 0.f ? 0.f : 1.f / total;  // NaN stays NaN

    constexpr int kPasses = (kDv + 127) / 128;
    constexpr int kBatch = 8;
#pragma unroll
    for (int i = 0; i < kPasses; ++i) {
      const int c = 4 * lane + 128 * i;
      const bool column = c < kDv;
      const float* o = p.o_partial + first * kDv + c;
      // Items in the kernel's order: group g = 0, 1, ... takes splits g, g + kGroups, ...; a group's sum starts
      // at zero; the total is group 0's sum, then each later group's added in order.
      float4 sum = make_float4(0.f, 0.f, 0.f, 0.f), acc = sum;
      bool summed = false;  // sum holds group 0's (and later) sums
      int g = 0, s = 0;
      for (int item = 0; item < num_splits; item += kBatch) {
        int split[kBatch];
        bool opens[kBatch];  // the item starts group g > 0
        float4 v[kBatch];
#pragma unroll
        for (int k = 0; k < kBatch; ++k) {
          const bool valid = item + k < num_splits;
          split[k] = s;
          opens[k] = valid && s == g && g > 0;
          v[k] = valid && column ? load_cg4(o + s * split_stride * kDv) : make_float4(0.f, 0.f, 0.f, 0.f);
          if (valid) {
            s += kGroups;
            if (s >= num_splits) s = ++g;
          }
        }
#pragma unroll
        for (int k = 0; k < kBatch; ++k) {
          if (item + k >= num_splits) break;
          const float w = __shfl_sync(0xffffffff, w_mine, split[k]);
          if (top == -INFINITY) continue;  // the kernel leaves every group's sum at zero
          if (opens[k]) {
            add_group(sum, acc, summed);
            acc = make_float4(0.f, 0.f, 0.f, 0.f);
          }
          // An empty split wrote zeros with weight 0; a split's NaN (from real inputs) still propagates.
          acc.x += w * v[k].x;
          acc.y += w * v[k].y;
          acc.z += w * v[k].z;
          acc.w += w * v[k].w;
        }
      }
      add_group(sum, acc, summed);
      // The kernel also adds the zero sums of its groups past the splits: +0 turns a -0 total into +0.
      if (num_splits < kGroups) add_group(sum, make_float4(0.f, 0.f, 0.f, 0.f), summed);
      if (column && c < p.head_dim_v) {  // head_dim_v is a multiple of 8
        uint16_t* out = static_cast<uint16_t*>(p.out) + q_row * p.o_row_stride +
                        static_cast<int64_t>(head) * p.o_head_stride + c;
        const float vals[4] = {sum.x * inv, sum.y * inv, sum.z * inv, sum.w * inv};
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          out[e] = p.out_type == ScalarType::kFloat16 ? __half_as_ushort(__float2half_rn(vals[e]))
                                                       : __bfloat16_as_ushort(__float2bfloat16_rn(vals[e]));
        }
      }
    }
    if (p.lse != nullptr && lane == 0) {
      p.lse[static_cast<int64_t>(head) * p.total_q + q_row] = total == 0.f ? -INFINITY : top + logf(total);
    }
  }
};

}  // namespace flashseek::sm90

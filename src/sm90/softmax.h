// Online softmax over the rows of one thread's share of an m64 x N accumulator (rows g and g + 8 of its warp's
// 16; the 4 threads of a quad hold one row between them). Scores are kept in their own units; exponentials are
// taken in base 2 with the scale folded in.
#pragma once

#include <cmath>

#include "prims/float_ops.h"

namespace flashseek::sm90 {

__device__ __forceinline__ float fast_exp2(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

__device__ __forceinline__ float fast_tanh(float x) {
  float y;
  asm("tanh.approx.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// s <- c * tanh(s * scale / c): the soft cap on scaled logits (its result is in logit units).
template <int kCount>
__device__ __forceinline__ void apply_softcap(float (&s)[kCount], float scale_over_cap, float cap) {
#pragma unroll
  for (int i = 0; i < kCount; ++i) s[i] = cap * fast_tanh(s[i] * scale_over_cap);
}

template <int kN>
struct OnlineSoftmax {
  float row_max[2];  // in score units; -inf while a row has seen no visible key
  float row_sum[2];  // this thread's partial sum of exp2((s - max) * scale_log2)

  __device__ __forceinline__ void init() {
    row_max[0] = row_max[1] = -INFINITY;
    row_sum[0] = row_sum[1] = 0.f;
  }

  // Replaces s by exp2((s - new_max) * scale_log2), updates the running sums, and returns in `correction`
  // the factor by which outputs accumulated under the old maxima must be multiplied.
  // kTreeMax: the row max as 4 independent chains (exact: max is associative, NaN still wins), so its latency
  // is ~kN / 32 + 2 dependent FMNMX instead of kN / 8.
  // kExpBiasLog2: the exponentials come out multiplied by 2^kExpBiasLog2 (native e4m3 P; Traits::kPScale), the
  // running sums too, so that their ratio, O / sum, is unchanged.
  template <bool kTreeMax = false, int kExpBiasLog2 = 0>
  __device__ __forceinline__ void update(float (&s)[kN / 2], float scale_log2, float (&correction)[2]) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float m = row_max[r];
      if constexpr (kTreeMax && kN % 32 == 0) {
        float part[4] = {m, -INFINITY, -INFINITY, -INFINITY};
#pragma unroll
        for (int j = 0; j < kN / 8; ++j) {
          part[j % 4] = max_propagate_nan(part[j % 4], max_propagate_nan(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]));
        }
        m = max_propagate_nan(max_propagate_nan(part[0], part[1]), max_propagate_nan(part[2], part[3]));
      } else {
#pragma unroll
        for (int j = 0; j < kN / 8; ++j) {
          m = max_propagate_nan(m, max_propagate_nan(s[4 * j + 2 * r], s[4 * j + 2 * r + 1]));
        }
      }
      m = max_propagate_nan(m, __shfl_xor_sync(0xffffffff, m, 1));
      m = max_propagate_nan(m, __shfl_xor_sync(0xffffffff, m, 2));
      // A row with no visible key yet keeps max -inf; subtracting 0 then leaves exp2(-inf) = 0, never NaN.
      // A NaN logit makes the max NaN, and with it every exponential, the sum and O of the row (IEEE, as the
      // naive softmax).
      const float m_scaled = m == -INFINITY ? 0.f : m * scale_log2;
      // (old - new) * scale, not old * scale - m_scaled: the compiler contracts that into an FMA whose result is
      // the product's rounding error, not 0, when the max did not move, so the correction was 1 +- 1 ulp and a row
      // that saw one more fully masked block (a larger tile's key range) came out with other bits.
      correction[r] = m == -INFINITY ? 1.f : fast_exp2((row_max[r] - m) * scale_log2);
      row_max[r] = m;
      float sum = 0.f;
#pragma unroll
      for (int j = 0; j < kN / 8; ++j) {
        const float shift = kExpBiasLog2 == 0 ? -m_scaled : static_cast<float>(kExpBiasLog2) - m_scaled;
        const float e0 = fast_exp2(fmaf(s[4 * j + 2 * r], scale_log2, shift));
        const float e1 = fast_exp2(fmaf(s[4 * j + 2 * r + 1], scale_log2, shift));
        s[4 * j + 2 * r] = e0;
        s[4 * j + 2 * r + 1] = e1;
        sum += e0 + e1;
      }
      row_sum[r] = row_sum[r] * correction[r] + sum;
    }
  }

  // Full row sums (over the quad). Call once, after the last update.
  __device__ __forceinline__ void reduce_sums() {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      row_sum[r] += __shfl_xor_sync(0xffffffff, row_sum[r], 1);
      row_sum[r] += __shfl_xor_sync(0xffffffff, row_sum[r], 2);
    }
  }
};

// Scales the O accumulator rows (g: elements 4j, 4j+1; g + 8: elements 4j+2, 4j+3).
template <int kCount>
__device__ __forceinline__ void scale_rows(float (&o)[kCount], const float (&factor)[2]) {
#pragma unroll
  for (int j = 0; j < kCount / 4; ++j) {
    o[4 * j + 0] *= factor[0];
    o[4 * j + 1] *= factor[0];
    o[4 * j + 2] *= factor[1];
    o[4 * j + 3] *= factor[1];
  }
}

}  // namespace flashseek::sm90

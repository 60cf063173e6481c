// The weights of one row's split partials, as the cluster combine applies them (consumer_keys_as_m.h
// combine_in_cluster), in log2 units: host and device, so that the CPU tests check the arithmetic against a softmax
// over the row's whole key range (tests/cpp/test_split_weights.cpp).
//
// Split s saw its keys' logits x (in log2 units: logit x scale_log2), kept m_s = max x (-inf: no key) and
// l_s = sum 2^(x - m_s), and O_s = sum 2^(x - m_s) v. With top = max(m_s, the sink's logit), w_s = 2^(m_s - top):
//   out = sum_s w_s O_s / total,  total = sum_s w_s l_s + 2^(sink - top),  LSE = (top + log2 total) ln 2.
// A NaN logit (a NaN input) poisons top and every weight, as in a plain softmax.
#pragma once

#include <cmath>

#include "host_device.h"
#ifdef __CUDACC__
#include "prims/float_ops.h"
#endif

namespace flashseek::sm90 {

FLASHSEEK_HOST_DEVICE inline float max_keep_nan(float a, float b) {
#ifdef __CUDA_ARCH__
  return max_propagate_nan(a, b);
#else
  return std::isnan(a) || std::isnan(b) ? NAN : (a > b ? a : b);
#endif
}

struct SplitTotal {
  float top;    // the largest logit (log2 units), the sink's included; -inf when no split saw a key and no sink
  float total;  // sum_s w_s l_s (+ the sink's weight); 0 when no split saw a key and no sink
  // The row's LSE in natural-log units (-inf for a row with nothing to attend to).
  FLASHSEEK_HOST_DEVICE float lse() const { return total == 0.f ? -INFINITY : (top + log2f(total)) * 0.6931471805599453f; }
  // The factor of sum_s w_s O_s that gives the output (0 for an empty row; NaN stays NaN).
  FLASHSEEK_HOST_DEVICE float inverse() const { return total == 0.f ? 0.f : 1.f / total; }
};

// The weights w[s] of `splits` (<= kMaxSplits) partials, m_log2[s] and sum[s] as above; sink_log2 -inf without a
// sink.
template <int kMaxSplits>
FLASHSEEK_HOST_DEVICE inline SplitTotal split_weights(const float (&m_log2)[kMaxSplits], const float (&sum)[kMaxSplits],
                                                      int splits, float sink_log2, float (&w)[kMaxSplits]) {
  float top = sink_log2;
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s) {
    if (s < splits) top = max_keep_nan(top, m_log2[s]);
  }
  float total = 0.f;
#pragma unroll
  for (int s = 0; s < kMaxSplits; ++s) {
    w[s] = 0.f;
    if (s < splits && top != -INFINITY) {
      w[s] = m_log2[s] == -INFINITY ? 0.f : exp2f(m_log2[s] - top);
      total += w[s] * sum[s];
    }
  }
  if (top != -INFINITY && sink_log2 != -INFINITY) total += exp2f(sink_log2 - top);
  return SplitTotal{top, total};
}

}  // namespace flashseek::sm90

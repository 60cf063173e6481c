// split_weights (src/sm90/split_weights.h), the cluster combine's arithmetic: partials of a row's keys cut into
// splits, merged, equal a softmax over all the row's keys (in double, written here from the definition).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "../../src/sm90/split_weights.h"

namespace {

using flashseek::sm90::max_keep_nan;
using flashseek::sm90::split_weights;
using flashseek::sm90::SplitTotal;

constexpr int kMax = 8;
constexpr double kLog2e = 1.4426950408889634;

struct Merged {
  float out, lse;
};

// Keys [cuts[s], cuts[s + 1]) are split s's: its max, sum and O as the kernel keeps them (log2 units), then merged.
Merged merge(const std::vector<float>& logits, const std::vector<float>& values, const std::vector<int>& cuts,
             float sink) {
  const int splits = static_cast<int>(cuts.size()) - 1;
  float m[kMax], l[kMax], o[kMax], w[kMax];
  for (int s = 0; s < kMax; ++s) {
    m[s] = -INFINITY;
    l[s] = o[s] = 0.f;
    if (s >= splits) continue;
    for (int k = cuts[s]; k < cuts[s + 1]; ++k) m[s] = max_keep_nan(m[s], logits[k] * static_cast<float>(kLog2e));
    for (int k = cuts[s]; k < cuts[s + 1]; ++k) {
      const float p = exp2f(logits[k] * static_cast<float>(kLog2e) - m[s]);
      l[s] += p;
      o[s] += p * values[k];
    }
  }
  const float sink_log2 = std::isinf(sink) ? -INFINITY : sink * static_cast<float>(kLog2e);
  const SplitTotal t = split_weights(m, l, splits, sink_log2, w);
  float acc = 0.f;
  for (int s = 0; s < kMax; ++s) {
    if (s >= splits) EXPECT_EQ(w[s], 0.f) << "a weight past the splits";
    acc += w[s] * o[s];
  }
  return Merged{acc * t.inverse(), t.lse()};
}

TEST(SplitWeights, MergedSplitsEqualTheSoftmaxOverAllKeys) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.f, 3.f);
  for (int trial = 0; trial < 200; ++trial) {
    const int keys = 1 + static_cast<int>(rng() % 300);
    const int splits = 1 + static_cast<int>(rng() % kMax);
    std::vector<float> logits(keys), values(keys);
    for (int k = 0; k < keys; ++k) {
      logits[k] = normal(rng) + (trial % 5 == 0 ? 40.f : 0.f);  // large logits too: the max shift must hold
      values[k] = normal(rng);
    }
    // cut points, some splits empty (two equal cuts)
    std::vector<int> cuts{0};
    for (int s = 1; s < splits; ++s) cuts.push_back(static_cast<int>(rng() % (keys + 1)));
    cuts.push_back(keys);
    std::sort(cuts.begin() + 1, cuts.end() - 1);
    const float sink = trial % 3 == 0 ? normal(rng) : -INFINITY;
    double top = std::isinf(sink) ? -1e300 : sink;
    for (float x : logits) top = std::max(top, static_cast<double>(x));
    double total = std::isinf(sink) ? 0.0 : std::exp(sink - top), weighted = 0.0;
    for (int k = 0; k < keys; ++k) {
      total += std::exp(logits[k] - top);
      weighted += std::exp(logits[k] - top) * values[k];
    }
    const Merged got = merge(logits, values, cuts, sink);
    EXPECT_NEAR(got.out, weighted / total, 1e-5 * (1.0 + std::abs(weighted / total))) << "trial " << trial;
    EXPECT_NEAR(got.lse, top + std::log(total), 1e-5 * (1.0 + std::abs(top))) << "trial " << trial;
  }
}

TEST(SplitWeights, ARowWithNoKeysIsZeroWithLseMinusInfinity) {
  const Merged got = merge({}, {}, {0, 0, 0, 0}, -INFINITY);
  EXPECT_EQ(got.out, 0.f);
  EXPECT_EQ(got.lse, -INFINITY);
}

TEST(SplitWeights, ARowWithOnlyTheSinkIsZeroWithTheSinksLse) {
  const Merged got = merge({}, {}, {0, 0, 0}, 2.5f);
  EXPECT_EQ(got.out, 0.f);
  EXPECT_NEAR(got.lse, 2.5f, 1e-6f);
}

TEST(SplitWeights, ANanLogitPoisonsTheRow) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const Merged got = merge({1.f, nan, 0.5f, 2.f}, {1.f, 1.f, 1.f, 1.f}, {0, 2, 4}, -INFINITY);
  EXPECT_TRUE(std::isnan(got.out));
  EXPECT_TRUE(std::isnan(got.lse));
  const Merged with_sink = merge({1.f, nan, 0.5f, 2.f}, {1.f, 1.f, 1.f, 1.f}, {0, 2, 4}, 0.f);
  EXPECT_TRUE(std::isnan(with_sink.out));
}

}  // namespace

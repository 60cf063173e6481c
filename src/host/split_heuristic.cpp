#include "split_heuristic.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace flashseek {
namespace {

// Fitted to scripts/split_sweep.py on the H200 (docs/perf-log.md entry 30: forced split counts 1-128 over 20
// split-considered decodes, cold L2, graph replay).
constexpr double kCtaRateGBps = 58.0;     // a lone CTA's K/V stream (two TMA issue warps; entry 26)
constexpr double kHbmGBps = 4000.0;       // what all SMs together read on long streams
// soft_min's power 4: the per-CTA rate bends into the HBM share instead of a corner (64 CTAs of one long stream
// measured 3.1 TB/s, 128 measured 3.8).
constexpr double kBlockMinUs = 0.85;      // a key block's consumer chain: d64 blocks stream no faster than this
constexpr double kCtaFixedUs = 4.0;       // Q load, first block-table and row-offset latencies, epilogue
constexpr double kCombineLaunchUs = 2.5;  // second kernel: launch gap (PDL hides part) and its latency chain
constexpr double kCombineRowUs = 0.0024;  // the combine runs a CTA per row: 4096 rows took 12 us, 256 took 2.5
constexpr double kCombineGBps = 3000.0;   // partials written by the splits and read by the combine

// min(a, b), softened: (a^-4 + b^-4)^(-1/4), by products and two square roots: the planner evaluates it for every
// candidate split count on every call (std::pow cost 3 us a call at 128 candidates).
double soft_min(double a, double b) {
  const double ia = 1.0 / (a * a), ib = 1.0 / (b * b);
  return 1.0 / std::sqrt(std::sqrt(ia * ia + ib * ib));
}

long long tiles_of(const SplitInputs& in) {
  const long long per_kv_head =
      in.tiles_per_kv_head > 0 ? in.tiles_per_kv_head : static_cast<long long>(in.batch) * in.num_m_blocks;
  return per_kv_head * in.num_heads_kv;
}

int n_blocks_of(const SplitInputs& in) {
  return in.block_n > 0 ? (in.max_seqlen_k + in.block_n - 1) / in.block_n : 0;
}

}  // namespace

double estimate_split_time_us(const SplitInputs& in, int splits) {
  const int n_blocks = n_blocks_of(in);
  const long long tiles = tiles_of(in);
  const int slots = std::max(1, in.num_sms * std::max(1, in.ctas_per_sm));
  const double block_bytes = in.kv_block_bytes > 0 ? in.kv_block_bytes : in.block_n * 512.0;
  const double rate = in.cta_rate_gbps > 0 ? in.cta_rate_gbps : kCtaRateGBps;
  const long long ctas = tiles * splits;
  const long long waves = (ctas + slots - 1) / slots;
  const long long running = std::min<long long>(ctas, slots);
  const int blocks_per_split = (n_blocks + splits - 1) / splits;
  const double rows = in.combine_rows > 0 ? static_cast<double>(in.combine_rows) : static_cast<double>(tiles);
  const double partials_us = rows * splits * (in.head_dim_v + 1) * 4.0 * 2.0 / (kCombineGBps * 1e3);
  if (in.model_v1) {  // entry 5's constants: 35 GB/s a CTA, a hard HBM corner, no per-row combine cost
    const double v1_rate = (in.cta_rate_gbps > 0 ? in.cta_rate_gbps : 35.0);
    const double cta_rate = std::min(v1_rate, 3800.0 / static_cast<double>(running)) * 1e3;
    return waves * (2.0 + blocks_per_split * block_bytes / cta_rate) + (splits > 1 ? 2.5 + partials_us : 0.0);
  }
  // A key-split CTA runs key_split blocks' consumer chains at once (decode tile 4; an untested assumption until
  // entry 41 measures it): its lone rate and shortest block time scale by it.
  const double lanes = std::max(1, in.key_split);
  const double cta_rate = soft_min(rate * lanes, kHbmGBps / static_cast<double>(running)) * 1e3;  // bytes per us
  double t = waves * (kCtaFixedUs + blocks_per_split * std::max(kBlockMinUs / lanes, block_bytes / cta_rate));
  if (splits > 1) t += kCombineLaunchUs + rows * kCombineRowUs + partials_us;
  return t;
}

int choose_num_splits(const SplitInputs& in) {
  if (in.requested == 1) return 1;
  const int n_blocks = n_blocks_of(in);
  const long long tiles = tiles_of(in);
  const int slots = std::max(1, in.num_sms * std::max(1, in.ctas_per_sm));
  if (n_blocks <= 1 || tiles <= 0) return 1;
  if (in.forced > 0) {
    // The smallest count with the forced count's blocks per split: no split is left empty. Before the wave rule
    // below, so that a sweep also reaches full grids (a mixed batch whose one long sequence is its critical path).
    const int s = std::min({in.forced, in.requested > 1 ? in.requested : kMaxSplits, n_blocks});
    const int per_split = (n_blocks + s - 1) / s;
    return (n_blocks + per_split - 1) / per_split;
  }
  if (tiles >= static_cast<long long>(0.8 * slots)) return 1;

  int max_splits = in.requested > 1 ? std::min(in.requested, kMaxSplits) : 128;
  if (in.requested == 0 && in.cap > 0) max_splits = std::min(max_splits, in.cap);
  max_splits = std::min({max_splits, slots, n_blocks});
  if (max_splits <= 1) return 1;
  auto blocks_per_split = [&](int s) { return (n_blocks + s - 1) / s; };
  // A split count is worth trying only if it changes the blocks per split (otherwise some splits are empty).
  auto eligible = [&](int s) { return s == 1 || blocks_per_split(s) != blocks_per_split(s - 1); };

  if (!in.fa_rule) {
    int best_s = 1;
    double best_t = estimate_split_time_us(in, 1);
    for (int s = 2; s <= max_splits; ++s) {
      if (!eligible(s)) continue;
      const double t = estimate_split_time_us(in, s);
      if (t < 0.98 * best_t) {  // a larger count must win clearly: fewer partials, less combine traffic
        best_t = t;
        best_s = s;
      }
    }
    return best_s;
  }

  std::vector<float> efficiency(max_splits + 1, 0.f);
  float best = 0.f;
  for (int s = 1; s <= max_splits; ++s) {
    if (!eligible(s)) continue;
    const float waves = static_cast<float>(tiles * s) / slots;
    efficiency[s] = waves / std::ceil(waves);
    best = std::max(best, efficiency[s]);
  }
  for (int s = 1; s <= max_splits; ++s) {
    if (eligible(s) && efficiency[s] >= 0.85f * best) return s;
  }
  return 1;
}

bool combine_by_warps(long long combined_rows, int splits, int min_rows) {
  return min_rows > 0 && splits > 1 && splits <= 32 && combined_rows >= min_rows;
}

}  // namespace flashseek

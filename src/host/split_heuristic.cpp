#include "split_heuristic.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace flashseek {

int choose_num_splits(const SplitInputs& in) {
  if (in.requested == 1) return 1;
  const int n_blocks = in.block_n > 0 ? (in.max_seqlen_k + in.block_n - 1) / in.block_n : 0;
  const long long tiles = static_cast<long long>(in.batch) * in.num_heads_kv * in.num_m_blocks;
  const int slots = std::max(1, in.num_sms * std::max(1, in.ctas_per_sm));
  if (n_blocks <= 1 || tiles <= 0) return 1;
  if (tiles >= static_cast<long long>(0.8 * slots)) return 1;

  int max_splits = in.requested > 1 ? std::min(in.requested, kMaxSplits) : 128;
  max_splits = std::min({max_splits, slots, n_blocks});
  auto blocks_per_split = [&](int s) { return (n_blocks + s - 1) / s; };
  // A split count is worth trying only if it changes the blocks per split (otherwise some splits are empty).
  auto eligible = [&](int s) { return s == 1 || blocks_per_split(s) != blocks_per_split(s - 1); };

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

}  // namespace flashseek

// How many KV splits a call gets. Plain host code, unit-tested on the CPU.
#pragma once

namespace flashseek {

struct SplitInputs {
  int batch;
  int num_heads_kv;
  int num_m_blocks;     // per (sequence, KV head)
  int max_seqlen_k;
  int block_n;
  int requested;        // the call's num_splits: 0 heuristic, 1 none, n > 1 an upper bound
  int num_sms;
  int ctas_per_sm;      // resident CTAs per SM for this tile (shared memory bound)
};

constexpr int kMaxSplits = 256;

// With fewer CTAs than SM slots, splitting the keys lets idle SMs stream part of them; the partial results cost
// a combine pass. Picks the smallest split count whose wave efficiency is within 85% of the best, each split
// keeping at least one key block (the rule FlashAttention uses, with the upper bound the caller gives).
int choose_num_splits(const SplitInputs& in);

}  // namespace flashseek

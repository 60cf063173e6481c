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
  // Cost model inputs (0: d = dv = 128 bf16, one row per tile).
  int kv_block_bytes = 0;       // K + V bytes of one key block of one KV head
  long long combine_rows = 0;   // (token, query head) rows the combine merges
  int head_dim_v = 128;         // padded
  int key_split = 1;            // consumer warpgroups of a CTA taking alternate key blocks (decode tile 4)
  // Tiles per KV head when the call knows them better than batch x num_m_blocks (a varlen batch whose sequences
  // are far shorter than the longest: run()'s flat grid, sm90/tile_index.h); 0: batch x num_m_blocks.
  long long tiles_per_kv_head = 0;
  // Experiment switches (FLASHSEEK_EXPERIMENT): the FlashAttention rule, a cap, the per-CTA rate in GB/s.
  bool fa_rule = false;
  int cap = 0;
  bool model_v1 = false;  // the model before entry 30's refit (an A/B switch)
  int forced = 0;  // n > 0: n splits whatever the model says (a sweep's A/B), within the bounds below
  int cta_rate_gbps = 0;
};

constexpr int kMaxSplits = 256;

// With fewer CTAs than SM slots, splitting the keys lets idle SMs stream part of them; the partial results cost
// a combine pass. Default: the split count that minimises a time model (below); with fa_rule, the smallest
// count whose wave efficiency is within 85% of the best (FlashAttention's rule). Either way each split keeps at
// least one key block and the caller's upper bound holds.
//
// The model (microseconds): waves x (t_cta + blocks_per_split x max(t_block, block_bytes / rate)) + combine, where
// a CTA streams at the soft minimum of a lone CTA's rate and the HBM bandwidth's share per running CTA, t_cta is a
// CTA's fixed cost (Q, first block-table latency, epilogue), t_block a key block's shortest consumer chain, and
// combine = launch + a cost per combined row (a CTA each) + the partials written and read once. A lone CTA is far
// from the chip's bandwidth (~60 GB/s against 4 TB/s), so one long sequence wants about one CTA per SM; the
// combine's per-row cost keeps short work with many rows (a context-parallel GQA step, 8 sequences of 1k keys
// at 8 KV heads) unsplit, where the sweep measured the split losing 5-28%.
int choose_num_splits(const SplitInputs& in);

// The model's estimate (microseconds) for `splits` splits; exposed for tests.
double estimate_split_time_us(const SplitInputs& in, int splits);

// Whether a split call's combine takes the warp-per-row kernel (sm90/combine.cu, 8 rows a CTA) instead of the
// row-per-CTA one (min_rows: Experiment::combine_warp_rows, 2048 by default since perf-log entry 99; 0: never): at
// least min_rows combined rows and at most 32 splits. The row-per-CTA kernel spreads a row's many partials over 256 threads (a
// one-KV-head decode's 128 splits); a cascade's prefix pass has thousands of rows of a few splits, where a CTA of
// 256 threads a row is mostly idle (combine-warp: cascade p4k -4.8%, p1k -3.3%, perf-log entry 98).
bool combine_by_warps(long long combined_rows, int splits, int min_rows);

}  // namespace flashseek

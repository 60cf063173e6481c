// The plain parameter block of one forward launch: the only border between the host library and the kernels.
// Strides are in elements; everything the kernel must not recompute per element is precomputed here.
#pragma once

#include <cstdint>

#include "prims/tma_descriptor.h"

namespace flashseek {

// Division by a run-time constant with a multiply and a shift (dividends below 2^31).
struct FastDiv {
  uint32_t divisor = 1;
  uint32_t multiplier = 0;
  uint32_t shift = 0;

  static FastDiv make(uint32_t d) {
    FastDiv f;
    f.divisor = d;
    if (d > 1) {
      uint32_t log2_ceil = 0;
      while ((1ull << log2_ceil) < d) ++log2_ceil;
      const uint32_t p = 31 + log2_ceil;
      f.multiplier = static_cast<uint32_t>(((1ull << p) + d - 1) / d);
      f.shift = p - 32;
    }
    return f;
  }
#ifdef __CUDACC__
  __device__ __forceinline__ int div(int n) const {
    return divisor == 1 ? n : static_cast<int>(__umulhi(static_cast<uint32_t>(n), multiplier) >> shift);
  }
#endif
  int div_host(int n) const {
    return divisor == 1 ? n
                        : static_cast<int>((static_cast<uint64_t>(static_cast<uint32_t>(n)) * multiplier >> 32) >>
                                           shift);
  }
};

enum class KVLayout : int32_t {
  kVarlen = 0,   // rows of all sequences back to back; sequence b starts at cu_seqlens_k[b]
  kPaged = 1,    // block_table[b][j / page_size] names the page of key j
  kBatched = 2,  // one page per sequence (page = the sequence's cache row, page_size = its capacity)
};

enum class ScalarType : int32_t { kFloat32 = 0, kBFloat16 = 1, kFloat16 = 2 };

// How the fp8 producer moves an e4m3 K/V cache (FwdParams::fp8_mode bits; FLASHSEEK_EXPERIMENT picks them).
// kFp8Copy16: 16-byte cp.async.cg copies (L1 bypass) of 16-value chunks instead of 8-byte cp.async.ca, set by the
//   host only when every K/V row start is 16-byte aligned (d, dv, strides, base pointers).
// kFp8SkipConvert, kFp8SkipCopy: DIAGNOSTIC ONLY (wrong results): leave out the conversion, or the copies, to
//   measure what each costs in one build.
// kFp8KeyedTranspose: the native e4m3 producer transposes every V block on the last block's path (each key's
// address computed, keys past the end zeroed) instead of full blocks' constant offsets: the same bits, the
// transpose's cost before docs/perf-log.md entry 24 (an A/B switch).
enum Fp8Mode : int { kFp8Copy16 = 1, kFp8SkipConvert = 2, kFp8SkipCopy = 4, kFp8KeyedTranspose = 8 };

// An fp32 per-(sequence, KV head) factor of an fp8 operand (q_descale, k_descale, v_descale of shape (B, Hkv)),
// read at b * batch_stride + kv_head * head_stride (either stride may be 0: broadcast views). Null: 1.
struct Descale {
  const float* ptr;
  int64_t batch_stride;
  int64_t head_stride;
#ifdef __CUDACC__
  __device__ __forceinline__ float load(int b, int kv_head) const {
    return ptr == nullptr ? 1.f : ptr[b * batch_stride + kv_head * head_stride];
  }
#endif
};

// The K and V tensor maps of the TMA producer (sm90/producer_tma.h), encoded by the host per call: 4D
// (head-dim column, KV head, row, page) with box (64, 1, FwdParams::kv_tma_rows, 1) and the 128-byte swizzle of
// the K/V tiles. A dense (varlen) K/V is one page of total_k rows; a batched cache has one page per cache row.
// q (q-tma, entry 69; FwdParams::q_tma_box_tokens): the queries as (head-dim column, query head,
// token, 1) with box (64, qheads_per_kvhead, q_tma_box_tokens, 1): one box is one 64-column block of a packed Q tile.
struct KvTensorMaps {
  sm90::TmaDescriptor k;
  sm90::TmaDescriptor v;
  sm90::TmaDescriptor q;
};

struct FwdParams {
  // Queries: row = token, (total_q, Hq, d). Sequence b's tokens start at cu_seqlens_q[b], or b * fixed_seqlen_q.
  // q_fp8: q holds e4m3 values (fp8 kernels only), converted exactly to the 16-bit compute type when loaded.
  const void* q;
  bool q_fp8;
  int64_t q_row_stride;
  int64_t q_head_stride;
  const int* cu_seqlens_q;
  int fixed_seqlen_q;
  int total_q;

  // Keys and values (see KVLayout). page_stride: stride between pages (paged) or cache rows (batched).
  const void* k;
  const void* v;
  int64_t k_row_stride, k_head_stride, k_page_stride;
  int64_t v_row_stride, v_head_stride, v_page_stride;
  KVLayout kv_layout;
  const int* cu_seqlens_k;
  const int* seqused_k;
  const int* block_table;
  int64_t block_table_stride;
  int block_table_width;
  int num_pages;  // rows of the cache's first dim: page ids are clamped to it
  int total_k;    // varlen: rows of k; start rows are clamped to it
  int page_size;
  FastDiv page_div;
  const int* leftpad_k;
  const int* cache_batch_idx;
  // > 0: full key blocks arrive by TMA (the launch's KvTensorMaps), in boxes of this many rows (block_n for a
  // dense or batched K/V; gcd(page_size, block_n), a multiple of 8, for a paged one). 0: every block by cp.async.
  int kv_tma_rows;
  // Head-packed tiles (kernel_traits.h kHeadPacked): KV heads per CTA (a power of two; 1 elsewhere) and its log2.
  // num_heads_kv and qheads_per_kvhead then count CTAs' head groups and their stacked query heads; a block holds
  // kBlockN >> kv_head_pack_log2 keys, and kv_tma_rows counts keys per box (each box spans the group's heads).
  int kv_head_pack;
  int kv_head_pack_log2;
  // Producer warps that issue the TMA boxes: 2 (warp 0 K, warp 1 V), 1 (warp 0 both, FLASHSEEK_EXPERIMENT=
  // tma-one-warp) or 4 (warps 0-1 K, 2-3 V: tma-warps=4; ProducerTma::issue_roles). A warp issues its lanes' boxes
  // one after another (UTMALDG takes uniform operands), ~42-55 ns a box (bench/micro/tma_stream.cu): at page 16 a
  // 128-key d128 block is 32 boxes, so one warp caps a CTA at ~49 GB/s (docs/perf-log.md entry 26).
  int kv_issue_warps;
  // Programmatic dependent launch of the forward kernel (prims/pdl.h). bit 0: launched as the dependent of the
  // stream's previous kernel (waits before its first global read); bit 1: lets its dependent (the PDL combine, or
  // under pdl-chain the next forward or merge) launch at its start.
  int pdl;

  // Output (total_q, Hq, dv) of dtype out_type (q's dtype, bf16 for an e4m3 q); LSE (Hq, total_q) float32 when
  // non-null.
  void* out;
  ScalarType out_type;
  int64_t o_row_stride;
  int64_t o_head_stride;
  float* lse;

  // Split-KV partials: o_partial (num_splits, total_q, Hq, head_dim_v_padded), lse_partial (num_splits, total_q, Hq).
  float* o_partial;
  float* lse_partial;
  int num_splits;
  int combine_mode;  // bit 0: the warp-per-row combine kernel; bit 1: combine by programmatic dependent launch;
                     // bit 2: a grid over q's rows instead of max_seqlen_q rows per sequence (sm90/combine.cu);
                     // bit 3: the first partial-O loads beside the LSE loads; bit 4: the combine kernels prefer
                     // the whole L1 as shared memory, the forward kernels' carveout (entry 80); bit 5: the row
                     // combine lets its own dependent launch at its start (pdl-chain, entry 113); bit 6: bits 1 and
                     // 5 hold for the warp-per-row combine too (warp-combine-pdl, entry 117)

  int batch;
  int flat_tiles;  // 1: blockIdx.x enumerates the (sequence, m block) tiles of all sequences (tile_index.h)
  int num_heads_q;
  int num_heads_kv;
  int qheads_per_kvhead;
  FastDiv qheads_div;
  int head_dim;    // the call's d and dv; the kernel's tile may be wider (zero-padded)
  int head_dim_v;

  // Logits: s = q.k * softmax_scale; with softcap c > 0, s = c * tanh(s / c). Then sinks and masks.
  float softmax_scale;
  float softcap;               // 0: off
  float score_scale_log2;      // folds softmax_scale (or 1 with softcap) and log2(e) for exp2
  // fp8 operands are converted exactly and their descales applied outside the GEMMs: q_descale * k_descale
  // joins the score scale of the CTA's (sequence, KV head), v_descale multiplies O in the epilogue. Null for
  // 16-bit operands (their descales are ignored, as FA3 does).
  Descale q_descale, k_descale, v_descale;
  int fp8_mode;  // Fp8Mode bits, fp8 caches only (0: 8-byte copies, the default)
  bool causal;
  int window_left;             // -1: unbounded
  int window_right;            // -1: unbounded (causal forces 0)
  const void* s_aux;           // (Hq,) sinks, or null
  ScalarType s_aux_type;

  // MLA decode (d 64, dv 512): logits = q.k + q_v.v with q_v (total_q, Hq, dv); null otherwise.
  const void* q_v;
  int64_t qv_row_stride;
  int64_t qv_head_stride;

  // Context parallel: local key j is global key j * cp_world_size + cp_rank, and causal limits use the global
  // length cp_tot_seqused_k[b] (null when cp_world_size is 1).
  int cp_world_size;
  int cp_rank;
  const int* cp_tot_seqused_k;

  // kLoopTileFastDiv (entry 64): the persistent launcher's divisors of a tile number, num_heads_kv x num_splits
  // and the grid's m blocks, and of its y index, num_heads_kv (unset elsewhere).
  FastDiv tile_y_div;
  FastDiv tile_m_div;
  FastDiv heads_kv_div;
  // The one-tile kernel's launch order (entry 66; run.cpp lpt_section_of): 0, each (sequence, KV head) pair's m
  // blocks from the heaviest (the flat grid: each KV head's tiles from the last), pair after pair; n > 0, sections
  // of n pairs (as many as whose K/V fit a share of L2), and in each section every pair's heaviest tile before any
  // pair's next one.
  int lpt_section;
  // Tokens per Q box where the TMA producer loads Q by KvTensorMaps::q (block_m / qheads_per_kvhead; q-tma,
  // entry 69); 0: 16-byte copies (producer.h load_q).
  int q_tma_box_tokens;
  // 1: the 16-bit TMA producer reads a block's box coordinates (its block-table entries) one block ahead and clamps
  // them there, waiting for the read before the current block's boxes (before entry 76; kv-coords-early, for the
  // A/B). 0: two blocks ahead, each read waited for only where its block is issued.
  int kv_coords_early;
  // Which end of a flat grid's batch launches first (tile_index.h flat_tiles_forward): 0, the last sequence's tiles
  // first; 1, the end whose sequence sees more keys (the first and last sequences compared); 2, the first.
  int flat_order;
  // > 0: a tile under a bounded left window takes its key blocks from its first visible key where that saves a
  // block, rounded down to a multiple of this many keys (sm90/key_origin.h; a paged cache's TMA box rows, 1 elsewhere; entry 102). 0: key
  // blocks from key 0.
  int window_origin_rows;
  // > 1 (cluster-combine, entry 120; keys-as-M decode tiles only): the call's num_splits CTAs of a (sequence, KV
  // head, m block) run as one cluster, grid y = KV head x splits + split, and combine their partials through
  // distributed shared memory instead of the combine kernel. 0: y = split x KV heads + KV head, partials to the
  // workspace.
  int cluster_splits;
};

}  // namespace flashseek

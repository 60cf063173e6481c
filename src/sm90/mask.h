// The attention mask of one CTA: it decides which key blocks the mainloop visits, which of those need
// element-wise masking, and masks an S accumulator tile.
//
// Query token i (of seqlen_q) sees key j (of seqlen_k) iff j < seqlen_k and
//   i + (seqlen_k - seqlen_q) - left <= j <= i + (seqlen_k - seqlen_q) + right     (bottom-right aligned),
// where an unbounded side is kUnbounded. Packed rows: row r of a CTA is token r / G, query head r % G.
// Context parallel (W ranks, this one r): local key j is global key j * W + r, the limits above apply to global
// keys and seqlen_k in the diagonal is the global length; a global limit converts to a local one by floor /
// ceiling division (identity for W = 1).
#pragma once

#include <cmath>

#include "fwd_params.h"
#include "mask_bits.h"

namespace flashseek::sm90 {

struct AttentionMask {
  static constexpr int kUnbounded = 1 << 30;

  int seqlen_q;
  int seqlen_k;
  int diag;   // seqlen_k - seqlen_q
  int left;
  int right;
  int tok_min;  // first and last query token of this CTA's rows that exist
  int tok_max;
  int cp_world;  // context parallel: W and r (1 and 0 without)
  int cp_rank;

  // seqlen_k: the keys this CTA holds; seqlen_k_total: the global length under context parallel (-1: seqlen_k).
  __device__ __forceinline__ static AttentionMask make(const FwdParams& p, int seqlen_q, int seqlen_k,
                                                       int row_begin, int row_count, int seqlen_k_total = -1) {
    AttentionMask m;
    m.seqlen_q = seqlen_q;
    m.seqlen_k = seqlen_k;
    m.diag = (seqlen_k_total >= 0 ? seqlen_k_total : seqlen_k) - seqlen_q;
    m.cp_world = max(1, p.cp_world_size);
    m.cp_rank = m.cp_world > 1 ? p.cp_rank : 0;
    m.right = p.causal ? 0 : (p.window_right < 0 ? kUnbounded : p.window_right);
    m.left = p.window_left < 0 ? kUnbounded : p.window_left;
    const int rows_in_seq = seqlen_q * p.qheads_per_kvhead;
    const int row_end = min(row_begin + row_count, rows_in_seq);
    m.tok_min = p.qheads_div.div(row_begin);
    m.tok_max = p.qheads_div.div(max(row_end - 1, row_begin));
    return m;
  }

  // The tile's keys from key `origin` on (FwdParams::window_origin_rows): key j becomes key j - origin.
  __device__ __forceinline__ void shift_keys(int origin) {
    seqlen_k -= origin;
    diag -= origin;
  }

  // The last local key at or before global key g, and the first at or after it.
  __device__ __forceinline__ int local_last(int g) const {
    if (cp_world == 1) return g;
    const int x = g - cp_rank;
    return x >= 0 ? x / cp_world : -((cp_world - 1 - x) / cp_world);
  }
  __device__ __forceinline__ int local_first(int g) const { return cp_world == 1 ? g : local_last(g - 1) + 1; }

  // Key blocks [n_begin, n_end) that hold at least one visible key for some row of the CTA.
  // The blocks of split `split` of `num_splits`: an equal share of [n_begin, n_end) (possibly empty).
  __device__ __forceinline__ static void split_block_range(int num_splits, int split, int& n_begin, int& n_end) {
    if (num_splits <= 1) return;
    const int per_split = (n_end - n_begin + num_splits - 1) / num_splits;
    const int first = min(n_begin + split * per_split, n_end);
    n_end = min(first + per_split, n_end);
    n_begin = first;
  }

  __device__ __forceinline__ void block_range(int block_n, int& n_begin, int& n_end) const {
    int key_end = seqlen_k;
    if (right != kUnbounded) key_end = min(key_end, local_last(tok_max + diag + right) + 1);
    n_end = key_end <= 0 ? 0 : (key_end + block_n - 1) / block_n;
    n_begin = 0;
    if (left != kUnbounded) {
      const int key_begin = local_first(tok_min + diag - left);
      n_begin = key_begin <= 0 ? 0 : key_begin / block_n;
    }
    if (n_begin > n_end) n_begin = n_end;
  }

  // Whether some element of key block n is masked for some row (else the block skips masking).
  __device__ __forceinline__ bool block_needs_mask(int n, int block_n) const {
    const int first = n * block_n;
    const int last = first + block_n - 1;
    return last >= seqlen_k || (right != kUnbounded && last > local_last(tok_min + diag + right)) ||
           (left != kUnbounded && first < local_first(tok_max + diag - left));
  }

  // The blocks block_needs_mask leaves unmasked: [lo, hi) (mask_bits.h unmasked_block_range).
  __device__ __forceinline__ void unmasked_blocks(int block_n, int& lo, int& hi) const {
    unmasked_block_range(block_n, seqlen_k, right != kUnbounded,
                         right != kUnbounded ? local_last(tok_min + diag + right) : 0, left != kUnbounded,
                         left != kUnbounded ? local_first(tok_max + diag - left) : 0, lo, hi);
  }

  // The keys query token `tok` sees: [lo, hi] (local key indices; the limits above, seqlen_k included).
  __device__ __forceinline__ void visible_keys(int tok, int& lo, int& hi) const {
    hi = min(seqlen_k - 1, right == kUnbounded ? kUnbounded : local_last(tok + diag + right));
    lo = left == kUnbounded ? -kUnbounded : local_first(tok + diag - left);
  }

  // Masks the m64 x kN accumulator tile of one thread: rows `row_tok[0..1]` (tokens of accumulator rows g and
  // g + 8), columns n * kN + 8 * j + 2 * (lane % 4) + {0, 1}; by one bit mask per (row, e) (mask_bits.h, entry 75).
  template <int kN>
  __device__ __forceinline__ void apply(float (&s)[kN / 2], int n, const int (&row_tok)[2], int lane) const {
    static_assert(kN <= 248, "a thread's columns of one row fit row_column_bits' 32 bits");
    const int col0 = n * kN + 2 * (lane & 3);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      int lo, hi;
      visible_keys(row_tok[r], lo, hi);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const uint32_t visible = row_column_bits<kN>(lo, hi, col0, e);
#pragma unroll
        for (int j = 0; j < kN / 8; ++j) {
          if (((visible >> j) & 1u) == 0) s[4 * j + 2 * r + e] = -INFINITY;
        }
      }
    }
  }

  // Head-packed tiles (kernel_traits.h kHeadPacked): column t of block n is key n * (kN >> heads_log2) +
  // (t >> heads_log2) of the CTA's head t & (2^heads_log2 - 1); a row sees only its own head's columns
  // (`row_head`: the head of accumulator rows g and g + 8), within the limits above. At most 8 heads: a thread's
  // columns 8 j + 2 (lane % 4) + e then have the head of 2 (lane % 4) + e whatever j, and keys j * (8 >> heads_log2)
  // apart. `keys`: some key of the block is masked for some row (block_needs_mask over its keys); else only the
  // other heads' columns are, one select per element.
  template <int kN>
  __device__ __forceinline__ void apply_head_packed(float (&s)[kN / 2], int n, const int (&row_tok)[2],
                                                    const int (&row_head)[2], int lane, int heads_log2,
                                                    bool keys) const {
    const int t0 = 2 * (lane & 3);
    const int key_step = 8 >> heads_log2;
    if (!keys) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const bool own_head = ((t0 + e) & ((1 << heads_log2) - 1)) == row_head[r];
#pragma unroll
          for (int j = 0; j < kN / 8; ++j) s[4 * j + 2 * r + e] = own_head ? s[4 * j + 2 * r + e] : -INFINITY;
        }
      }
      return;
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      int lo, hi;
      visible_keys(row_tok[r], lo, hi);
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const bool own_head = ((t0 + e) & ((1 << heads_log2) - 1)) == row_head[r];
        const int key0 = n * (kN >> heads_log2) + ((t0 + e) >> heads_log2);
#pragma unroll
        for (int j = 0; j < kN / 8; ++j) {
          const int key = key0 + j * key_step;
          if (!own_head || key > hi || key < lo) s[4 * j + 2 * r + e] = -INFINITY;
        }
      }
    }
  }
};

// Keys per mainloop block: the tile's rows, or those over the KV heads a head-packed tile stacks in them.
template <class Traits>
__device__ __forceinline__ int keys_per_block(const FwdParams& p) {
  if constexpr (Traits::kHeadPacked) {
    return Traits::kBlockN >> p.kv_head_pack_log2;
  } else {
    return Traits::kBlockN;
  }
}

}  // namespace flashseek::sm90

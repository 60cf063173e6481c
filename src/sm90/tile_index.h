// Which (sequence, m block) a CTA works on when blockIdx.x enumerates the tiles of every sequence of a varlen
// batch (FwdParams::flat_tiles). A grid sized by the longest sequence times the batch would launch mostly empty
// CTAs for a chunked prefill beside hundreds of decodes, and an empty CTA is not free: it reads its sequence's
// lengths before leaving, at one CTA per SM.
//
// Sequence b's tiles start at T(b) = floor(cu_seqlens_q[b] * G / kBlockM) + b (G query heads per KV head).
// T needs no prefix sum of per-sequence tile counts, increases with b, and T(b + 1) - T(b) is the tile count of
// b or one more, so [0, floor(total_q * G / kBlockM) + batch) holds every tile with at most one hole per
// sequence. Device data is untrusted: lengths are clamped, and a tile that maps outside its sequence exits.
#pragma once

#include "fwd_params.h"
#include "seqlen.h"

namespace flashseek::sm90 {

template <int kBlockM>
__device__ __forceinline__ int first_tile_of_start(const FwdParams& p, int cu_seqlen_q, int b) {
  const int64_t start = max(0, min(cu_seqlen_q, p.total_q));
  return static_cast<int>(start * p.qheads_per_kvhead / kBlockM) + b;
}

template <int kBlockM>
__device__ __forceinline__ int first_tile_of(const FwdParams& p, int b) {
  return first_tile_of_start<kBlockM>(p, p.cu_seqlens_q[b], b);
}

// One round of the search below: [lo, lo + count) narrowed to the stride-wide part of the last lane whose first
// sequence's tile is at or before the one sought (`ballot`, lane i standing for lo + i * stride).
__device__ __forceinline__ void narrow_to_ballot(unsigned ballot, int stride, int& lo, int& count) {
  const int last = ballot == 0 ? 0 : 31 - __clz(ballot);
  lo += last * stride;
  count = min(stride, count - last * stride);
}

// The last b in [lo, lo + count) with first_tile_of(b) <= tile: a 32-way search across the warp (two rounds up to
// 1024 sequences), every warp of the CTA on its own so that no barrier is needed before the roles split.
template <int kBlockM>
__device__ __forceinline__ int sequence_of_tile_in(const FwdParams& p, int tile, int lo, int count) {
  const int lane = threadIdx.x & 31;
  while (count > 1) {
    const int stride = (count + 31) / 32;
    const int b = lo + lane * stride;
    const bool at_or_before = b < lo + count && first_tile_of<kBlockM>(p, b) <= tile;
    narrow_to_ballot(__ballot_sync(0xffffffffu, at_or_before), stride, lo, count);
  }
  return lo;
}

template <int kBlockM>
__device__ __forceinline__ int sequence_of_tile(const FwdParams& p, int tile) {
  return sequence_of_tile_in<kBlockM>(p, tile, 0, p.batch);
}

// Whether a flat grid launches its first sequence's tiles first (FwdParams::flat_order), for a longest-first order
// without a sort: from the end of the batch whose sequence has the heavier heaviest tile (more keys), and on a tie
// the end whose lightest tile is heavier, so that the light tiles come last. From the last suits a batch that ends
// in its long sequences (decodes first, then a chunked prefill); a batch that begins with its longest (a chunked
// prefill, then short decodes) wants the opposite, or its heavy tiles start in the last wave and run alone (edge
// nan-tail: 28 of 32 8-block tiles behind a wave of 1-block decodes). A prefill beside decodes of as many keys keeps
// the decodes first (their tiles are as heavy as its heaviest; from the first, mixed L70t4 q2k_32q1s2k was 1.31x
// slower).
// Order 1 looks at the first and last sequences only, on the one-tile kernel (the persistent kernel keeps order 0:
// its d64 tile's producer spilled more, and its dynamic dealing already fills the SMs around a late heavy tile).
__device__ __forceinline__ bool flat_tiles_forward(const FwdParams& p) {
  if (p.flat_order != 1) return p.flat_order == 2;
  const SequenceInfo first = SequenceInfo::load(p, 0);
  const SequenceInfo last = SequenceInfo::load(p, p.batch - 1);
  if (first.seqlen_k != last.seqlen_k) return first.seqlen_k > last.seqlen_k;
  // A causal sequence's first query row sees seqlen_k - seqlen_q + 1 keys (bottom-right aligned).
  return p.causal && first.seqlen_q < last.seqlen_q;
}

// The sequence of a flat grid's tile at launch index bx, and that tile's index (`tile`, counted from the first
// sequence's first tile) and direction (`forward`: flat_tiles_forward). The direction's loads issue beside the
// search's first round, so that choosing it costs no round trip of its own.
template <int kBlockM>
__device__ __forceinline__ int sequence_of_flat_tile(const FwdParams& p, int bx, int grid_x, int& tile,
                                                     bool& forward) {
  const int stride = (p.batch + 31) / 32;
  const int b = (threadIdx.x & 31) * stride;
  const bool in = b < p.batch;
  const int start = in ? p.cu_seqlens_q[b] : 0;  // used only after the direction's loads are issued
  forward = flat_tiles_forward(p);
  tile = forward ? bx : grid_x - 1 - bx;
  int lo = 0, count = p.batch;
  narrow_to_ballot(__ballot_sync(0xffffffffu, in && first_tile_of_start<kBlockM>(p, start, b) <= tile), stride, lo,
                   count);
  return sequence_of_tile_in<kBlockM>(p, tile, lo, count);
}

}  // namespace flashseek::sm90

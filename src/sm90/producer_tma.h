// The TMA producer (16-bit K/V; the default where the host could describe K/V with tensor maps): two warps of the
// producer warpgroup stream every full key block with bulk tensor copies, K's boxes from warp 0 and V's from
// warp 1 (FwdParams::kv_issue_warps). A dense or batched K/V is one box per
// 64-column block of a tile; a paged cache one box per page (or per gcd(page_size, block_n) rows), each lane of
// the warp issuing the boxes of one page with the page id it read from the block table a block ahead. So the
// producer issues a handful of instructions per block instead of ~16 cp.async per thread and their address
// arithmetic: on the bf16 d128 prefill that took the kernel from 409 to 657 TFLOP/s (docs/perf-log.md, entry 9).
//
// The block that holds the sequence's end (the only one with rows past seqlen_k, which belong to the next
// sequence or to unused cache slots and must be zero-filled, not copied) goes through the cp.async path of
// producer.h with all 128 threads, as do the packed GQA query rows. That block is the first one visited (blocks
// run last to first), so the other three warps are done after it.
//
// Barrier protocol unchanged: a full barrier expects 128 arrivals; the TMA path gives them in one
// mbarrier.arrive with count 128, after raising the phase's transaction count by the tile's bytes (the boxes of
// other lanes may land before or after that: the transaction count may go negative, and the phase cannot
// complete before the arrivals are in).
#pragma once

#include "fwd_params.h"
#include "kernel_traits.h"
#include "prims/async_copy.h"
#include "prims/mbarrier.h"
#include "prims/tma.h"
#include "producer.h"
#include "seqlen.h"

namespace flashseek::sm90 {

template <class Traits>
struct ProducerTma {
  using Element = typename Traits::Element;
  using Base = Producer<Traits>;
  static constexpr int kThreads = 128;

  // Whether this CTA's full blocks can come by TMA: the call has tensor maps and, in a paged cache, the
  // sequence's first key starts a box (left padding may shift it), so that no box straddles two pages.
  __device__ __forceinline__ static bool usable(const FwdParams& p, const SequenceInfo& seq) {
    return p.kv_tma_rows > 0 && (p.kv_layout != KVLayout::kPaged || seq.k_first % p.kv_tma_rows == 0);
  }

  // Row and page coordinates (in the tensor maps) of the box of keys [key0, key0 + kv_tma_rows).
  struct BoxCoord {
    int row;
    int page;
  };
  // box_coord without the page clamp (kLoopPageIdsAhead): the block-table value stays unread until
  // clamp_page(), so a warp that fetches a coordinate ahead does not wait for the load there.
  __device__ __forceinline__ static BoxCoord box_coord_raw(const FwdParams& p, const SequenceInfo& seq, int b,
                                                           int key0) {
    const int kp = seq.k_first + key0;
    if (p.kv_layout == KVLayout::kPaged) {
      const int col = p.page_div.div(kp);
      return BoxCoord{kp - col * p.page_size, p.block_table[static_cast<int64_t>(b) * p.block_table_stride + col]};
    }
    return BoxCoord{kp, p.kv_layout == KVLayout::kBatched ? seq.cache_row : 0};
  }
  __device__ __forceinline__ static BoxCoord clamp_page(const FwdParams& p, BoxCoord c) {
    return BoxCoord{c.row, max(0, min(c.page, p.num_pages - 1))};
  }

  __device__ __forceinline__ static BoxCoord box_coord(const FwdParams& p, const SequenceInfo& seq, int b,
                                                       int key0) {
    const int kp = seq.k_first + key0;
    if (p.kv_layout == KVLayout::kPaged) {
      const int col = p.page_div.div(kp);
      // Page ids are device data: clamped to the cache like the cp.async path's (seqlen.h key_row_offsets).
      const int page = p.block_table[static_cast<int64_t>(b) * p.block_table_stride + col];
      return BoxCoord{kp - col * p.page_size, max(0, min(page, p.num_pages - 1))};
    }
    return BoxCoord{kp, p.kv_layout == KVLayout::kBatched ? seq.cache_row : 0};
  }

  // The warps that issue one tile's boxes (FwdParams::kv_issue_warps): box (lane's rows, column block cb) goes
  // to warp `index` of `count` (a power of two) when (lane x column blocks + cb) mod count == index.
  struct BoxShare {
    int index;
    int count;
  };
  // Which warps issue K's and V's boxes: 1 issuing warp takes both tiles, 2 one tile each, 4 two per tile.
  struct IssueRoles {
    bool k, v;
    BoxShare k_share, v_share;
  };
  __device__ __forceinline__ static IssueRoles issue_roles(const FwdParams& p, int warp) {
    const int per_tile = p.kv_issue_warps >= 4 ? 2 : 1;
    const int v_first = p.kv_issue_warps >= 2 ? per_tile : 0;
    return IssueRoles{warp < per_tile, warp >= v_first && warp < v_first + per_tile, BoxShare{warp, per_tile},
                      BoxShare{warp - v_first, per_tile}};
  }

  // Lane `lane`'s boxes of one tile (K or V): the 64-column blocks of its rows that `share` gives this warp.
  template <class Tile>
  __device__ __forceinline__ static void load_box(const TmaDescriptor* tmap, uint32_t tile_smem, int kv_head,
                                                  BoxCoord c, int lane, int box_rows, uint32_t full_bar,
                                                  BoxShare share = BoxShare{0, 1}) {
    const uint32_t dst = tile_smem + lane * box_rows * Tile::kRowBytes;
#pragma unroll
    for (int cb = 0; cb < Tile::kColumnBlocks; ++cb) {
      if (((lane * Tile::kColumnBlocks + cb) & (share.count - 1)) == share.index) {
        // The box's first column in the map's 16-bit units: a column block is kRowBytes / 2 of them.
        tma_load_4d(dst + cb * Tile::kColumnBlockBytes, tmap, cb * (Tile::kRowBytes / 2), kv_head, c.row, c.page,
                    full_bar);
      }
    }
  }

  // One key block's boxes of one operand: wait until the consumers freed the stage (`empty` at `empty_phase`), the
  // share's first lane raises the transaction count, every box lands on `full`, then that lane gives the arrivals
  // the barrier expects (the consumers' 128 for a tile they read, one for a raw stage only the producer reads).
  template <class Tile, int kArrivals>
  __device__ __forceinline__ static void issue_block(const TmaDescriptor* tmap, uint32_t tile_smem, uint32_t full,
                                                     uint32_t empty, uint32_t empty_phase, int kv_head, BoxCoord c,
                                                     int lane, int box_rows, bool has_box, BoxShare share) {
    mbarrier_wait(empty, empty_phase);
    const bool lead = lane == 0 && share.index == 0;
    if (lead) mbarrier_expect_tx(full, Tile::kBytes);
    if (has_box) load_box<Tile>(tmap, tile_smem, kv_head, c, lane, box_rows, full, share);
    if (lead) {
      if constexpr (kArrivals == 1) {
        mbarrier_arrive(full);
      } else {
        mbarrier_arrive_count(full, kArrivals);
      }
    }
  }

  // One key block's boxes of K and of V, those of them that this warp issues (`roles`), into stage `stage`.
  __device__ __forceinline__ static void issue_kv_block(const KvTensorMaps& maps, uint32_t smem_base, int stage,
                                                        uint32_t phase, int kv_head, BoxCoord c, int lane,
                                                        int box_rows, bool has_box, const IssueRoles& roles) {
    if (roles.k) {
      const uint32_t tile = smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes;
      issue_block<typename Traits::KTile, kThreads>(&maps.k, tile, smem_base + Traits::k_full_barrier(stage),
                                                     smem_base + Traits::k_empty_barrier(stage), phase ^ 1, kv_head,
                                                     c, lane, box_rows, has_box, roles.k_share);
    }
    if (roles.v) {
      const uint32_t tile = smem_base + Traits::kVOffset + stage * Traits::VTile::kBytes;
      issue_block<typename Traits::VTile, kThreads>(&maps.v, tile, smem_base + Traits::v_full_barrier(stage),
                                                     smem_base + Traits::v_empty_barrier(stage), phase ^ 1, kv_head,
                                                     c, lane, box_rows, has_box, roles.v_share);
    }
  }

  // q-tma (entry 69, run()'s choice where the boxes pay; FwdParams::q_tma_box_tokens): the tile's packed Q rows by one TMA box per
  // 64-column block instead of kBlockM x column chunks of 16-byte copies, each with a division (producer.h load_q;
  // on a short GQA prefill those copies and the Q wait were ~13% of the persistent kernel's samples, entry 69).
  // A box is q_tma_box_tokens tokens x the group's query heads, head fastest: the rows (token, head) that the
  // copies write, in the same swizzle. Rows past the sequence's end hold the next sequence's queries (zeros past
  // the call's) instead of zeros: a row's scores, softmax and output are its own, and rows past the end are never
  // stored. Columns past the call's head dim are zeros (the map's extent). One thread raises the transaction count
  // and gives the barrier's 128 arrivals, as issue_block does. Compiled only into the loop values with kLoopQTma:
  // as a run-time branch of every kernel it rescheduled the default d128 loop (65 / 1077 -> 1079 instructions).
  template <bool kQTma>
  __device__ __forceinline__ static void load_q(const FwdParams& p, const KvTensorMaps& maps, const SequenceInfo& seq,
                                                int row_begin, int kv_head, uint32_t smem_base, int tid) {
    using QTile = typename Traits::QTile;
    if constexpr (kQTma && QTile::kSwizzleBytes == 128 && Traits::kElementBytes == 2) {
      if (p.q_tma_box_tokens > 0 && p.q_tma_box_tokens * p.qheads_per_kvhead == Traits::kBlockM) {
        if (tid == 0) {
          const uint32_t full = smem_base + Traits::q_full_barrier();
          mbarrier_expect_tx(full, QTile::kBytes);
          const int token0 = seq.q_start + p.qheads_div.div(row_begin);
          const int head0 = kv_head * p.qheads_per_kvhead;
#pragma unroll
          for (int cb = 0; cb < QTile::kColumnBlocks; ++cb) {
            tma_load_4d(smem_base + Traits::kQOffset + cb * QTile::kColumnBlockBytes, &maps.q, cb * 64, head0, token0,
                        0, full);
          }
          mbarrier_arrive_count(full, kThreads);
        }
        return;
      }
    }
    Base::load_q(p, seq, row_begin, kv_head, smem_base, tid);
  }

  // kPersistent (fwd_persistent.h): `pipe` key blocks went through the stage ring in this CTA's earlier tiles and
  // `q_count` Q tiles before this one; Q is refilled once the consumers released the previous one (q_empty).
  template <bool kPersistent = false, bool kQTma = false>
  __device__ static void run(const FwdParams& p, const KvTensorMaps& maps, const SequenceInfo& seq, int b,
                             int kv_head, int row_begin, int n_begin, int n_end, uint8_t* smem, int tid, int pipe = 0,
                             int q_count = 0) {
    const uint32_t smem_base = smem_addr(smem);
    const int lane = tid % 32;
    const int pipe0 = kPersistent ? __shfl_sync(0xffffffffu, pipe, 0) : 0;  // warp-uniform for ptxas (consumer.h)
    auto stage_of = [&](int it) { return (pipe0 + it) % Traits::kStages; };
    auto phase_of = [&](int it) { return static_cast<uint32_t>(((pipe0 + it) / Traits::kStages) & 1); };
    if constexpr (kPersistent) {
      if (q_count > 0) mbarrier_wait(smem_base + Traits::kPersistQEmptyBarrier, (q_count - 1) & 1);
    }
    if (tid == 0 && (!kPersistent || q_count == 0)) {
      prefetch_tensormap(&maps.k);
      prefetch_tensormap(&maps.v);
      if constexpr (kQTma) {
        if (p.q_tma_box_tokens > 0) prefetch_tensormap(&maps.q);
      }
    }
    load_q<kQTma>(p, maps, seq, row_begin, kv_head, smem_base, tid);

    const int n_iters = n_end - n_begin;
    int it = 0;
    if (n_end * Traits::kBlockN > seq.seqlen_k) {
      // The sequence's last (partial) block, visited first: every producer thread, cp.async with zero fill.
      const Element* k = static_cast<const Element*>(p.k) + static_cast<int64_t>(kv_head) * p.k_head_stride;
      const Element* v = static_cast<const Element*>(p.v) + static_cast<int64_t>(kv_head) * p.v_head_stride;
      int64_t* k_off = reinterpret_cast<int64_t*>(smem + Traits::kRowOffsetsOffset);
      int64_t* v_off = k_off + Traits::kBlockN;
      const int n = n_end - 1;
      Base::compute_row_offsets(p, seq, b, n, Base::fetch_page(p, seq, b, n, tid), k_off, v_off, tid);
      named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
      // The first block of a CTA: stage 0, phase 0, whose "empty" phase counts as complete; a later tile of a
      // persistent CTA waits for its stage.
      const int s0 = stage_of(0);
      if constexpr (kPersistent) mbarrier_wait(smem_base + Traits::k_empty_barrier(s0), phase_of(0) ^ 1);
      Base::template load_rows<typename Traits::KTile>(k, k_off, p.head_dim / 8,
                                                       smem_base + Traits::kKOffset + s0 * Traits::KTile::kBytes, tid);
      cp_async_arrive_on(smem_base + Traits::k_full_barrier(s0));
      if constexpr (kPersistent) mbarrier_wait(smem_base + Traits::v_empty_barrier(s0), phase_of(0) ^ 1);
      Base::template load_rows<typename Traits::VTile>(v, v_off, p.head_dim_v / 8,
                                                       smem_base + Traits::kVOffset + s0 * Traits::VTile::kBytes, tid);
      cp_async_arrive_on(smem_base + Traits::v_full_barrier(s0));
      it = 1;
    }
    // Warp 0 issues K's boxes, warp 1 V's (kv_issue_warps 2): a warp issues its lanes' boxes one after another,
    // so two warps double the boxes a CTA can have issued per microsecond (docs/perf-log.md entry 26). Each
    // reads the block table for itself. With 1, warp 0 issues both, K first; with 4, warps 0-1 share K's boxes
    // and 2-3 V's. The first warp of a tile's share raises the transaction count and gives the 128 arrivals;
    // the others' boxes may land before that (the count goes negative; the phase waits for the arrivals).
    const IssueRoles roles = issue_roles(p, tid / 32);
    if (roles.k || roles.v) {
      const int box_rows = p.kv_tma_rows;
      const bool has_box = lane * box_rows < Traits::kBlockN;
      auto coord_of = [&](int i) {
        return i < n_iters && has_box ? box_coord(p, seq, b, (n_end - 1 - i) * Traits::kBlockN + lane * box_rows)
                                      : BoxCoord{0, 0};
      };
      if (kPersistent || p.kv_coords_early) {
        // The next block's coordinates read a block ahead, but clamped at once, so the read is waited for before
        // the current block's boxes go out (one block-table round trip per block): the persistent kernel's
        // (prefill tiles, whose consumers are slower than the round trip; two ahead spilled its 32-register
        // producer), and the one-tile kernel's before entry 76.
        BoxCoord next = coord_of(it);
        for (; it < n_iters; ++it) {
          const BoxCoord c = next;
          next = coord_of(it + 1);
          issue_kv_block(maps, smem_base, stage_of(it), phase_of(it), kv_head, c, lane, box_rows, has_box, roles);
        }
      } else {
        // A paged cache's block-table reads two blocks ahead, each clamped (its load waited for) only where its
        // block's boxes are issued: while the stages are free the boxes of several blocks go out per round trip
        // (entry 76: the one-tile decode's producer had waited one round trip before every block's boxes).
        auto raw_coord_of = [&](int i) {
          return i < n_iters && has_box
                     ? box_coord_raw(p, seq, b, (n_end - 1 - i) * Traits::kBlockN + lane * box_rows)
                     : BoxCoord{0, 0};
        };
        const bool paged = p.kv_layout == KVLayout::kPaged;
        BoxCoord ahead0 = raw_coord_of(it);
        BoxCoord ahead1 = raw_coord_of(it + 1);
        for (; it < n_iters; ++it) {
          const BoxCoord c = paged ? clamp_page(p, ahead0) : ahead0;
          ahead0 = ahead1;
          ahead1 = raw_coord_of(it + 2);
          issue_kv_block(maps, smem_base, stage_of(it), phase_of(it), kv_head, c, lane, box_rows, has_box, roles);
        }
      }
    }
    if constexpr (!kPersistent) asm volatile("cp.async.wait_all;\n" ::: "memory");
  }
};

}  // namespace flashseek::sm90

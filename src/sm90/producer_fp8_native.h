// The producer of the native e4m3 tiles (q, k and v all e4m3; kernel_traits.h kFp8Native, docs/perf-log.md entry
// 17). e4m3 wgmma reads both operands K-major, so:
//   Q (packed GQA rows) by cp.async into the e4m3 Q tile, once;
//   K by TMA straight into the stage's K tile (warp 0, boxes as producer_tma.h);
//   V by TMA into a raw stage (keys x dv bytes; warp 1), then all 128 producer threads transpose it into the
//   stage's V^T tile (dv x keys, keys in the order the consumers' P fragment carries them:
//   prims/fp8_fragments.h), zeroing the keys past the sequence's end, fence the async proxy and arrive on the
//   stage's v_full barrier.
// The transpose of block j runs while the copies of blocks j + 1 .. j + kRawStages - 1 are in flight (lag
// kRawStages - 1), and before the copies of block j + kLag are issued (entry 22); each warp arrives on the raw
// stage's v_raw_empty barrier once it has read it, and the next TMA into that raw stage waits for all four.
// Rows past the sequence's end come in with the boxes (no zero fill by copies): their K columns are masked to
// -inf, their V rows zeroed by the transpose. Box coordinates past the end are clamped to the sequence's last key
// (a paged cache's block table is read only inside the sequence's pages).
//
// By copies (p.kv_tma_rows == 0): all 128 producer threads copy K and the raw V in 16-byte cp.async chunks, one
// key row's offsets per thread computed a block ahead and its page id read two blocks ahead (as producer.h), each
// thread arriving on the full barriers when its copies land (v_raw_full then expects 128 arrivals). It is the path
// of the calls TMA cannot describe (pages of 1-4 rows, left padding) only: everywhere else it ran 1.18x the time
// of TMA boxes (entry 32), the transposing threads issuing copies slower than the TMA unit takes boxes.
//
// Head-packed tiles (variants 203 and 204, tile_table.h kFp8NativeHeadPackTiles; experiments): the CTA streams
// kv_head_pack heads at once, each box spanning those heads for its keys (rows land key-major, [key][head]); the
// keys per block, box coordinates, and the rows the transpose keeps count in keys_per_block. TMA only. Eight times
// fewer boxes streamed no faster (entry 37): one SM's box rate is not what holds e4m3 decode near 3.2 TB/s.
#pragma once

#include "fwd_params.h"
#include "kernel_traits.h"
#include "mask.h"
#include "prims/async_copy.h"
#include "prims/fp8_fragments.h"
#include "prims/mbarrier.h"
#include "prims/tma.h"
#include "prims/wgmma.h"
#include "producer.h"
#include "producer_tma.h"
#include "seqlen.h"

namespace flashseek::sm90 {

template <class Traits>
struct ProducerFp8Native {
  static_assert(Traits::kFp8Native, "native e4m3 tiles only");
  static constexpr int kThreads = 128;
  static constexpr int kLag = Traits::kRawStages - 1;
  static_assert(kLag >= 1, "two raw stages at least: one in flight while one is transposed");
  // The transpose (widening) of block j runs at step j + kLag, after the copies of block j + kLag - 1, whose K stage
  // waits for QK^T of block j + kLag - 1 - kStages: with kLag <= kStages that is block j - 1 or earlier, so V of
  // block j never waits for QK^T of block j (which the consumers follow with their softmax and then V's wait).
  static_assert(kLag <= Traits::kStages, "the raw V lag within the K/V stage count (tile_table.h)");
  using Tma = ProducerTma<Traits>;

  // Rows of `row_off` (byte offsets from `base`, -1 past the sequence) into a tile of 16-byte chunks, zero-filled
  // past the sequence and past `valid_chunks` chunks of a row.
  template <class Tile>
  __device__ __forceinline__ static void copy_rows(const uint8_t* base, const int64_t* row_off, int valid_chunks,
                                                   uint32_t tile_smem, int tid) {
    constexpr int kChunks = Tile::kChunksPerRow;
#pragma unroll 4
    for (int idx = tid; idx < Traits::kBlockN * kChunks; idx += kThreads) {
      const int row = idx / kChunks;
      const int chunk = idx - row * kChunks;
      const int64_t off = row_off[row];
      const bool valid = off >= 0 && chunk < valid_chunks;
      cp_async_16_zfill(tile_smem + Tile::chunk_offset(row, chunk), valid ? base + off + chunk * 16 : base, valid);
    }
  }

  // V^T of block j (the j-th visited, last block first) from its raw stage, by every producer thread; then the
  // stage's v_full arrival and each warp's release of the raw stage.
  // kBatchLoads (kLoopTransposeBatch): the full-block transposes load all their passes (block_n 64) or two at a time
  // (block_n 128 beside a register split) before storing (entry 39).
  // pipe0: the key blocks earlier tiles of a persistent CTA sent through the stage and raw rings (0 elsewhere).
  template <bool kBatchLoads = false>
  __device__ __forceinline__ static void transpose_block(const FwdParams& p, const SequenceInfo& seq, int j, int n_end,
                                                         uint32_t smem_base, int tid, int pipe0 = 0) {
    if (j < 0) return;
    const int lane = tid % 32;
    const bool keyed = (p.fp8_mode & kFp8KeyedTranspose) != 0;
    // Block j: V^T from its raw stage, by every producer thread.
    const int n = n_end - 1 - j;
    const int ring = pipe0 + j;
    const int stage = ring % Traits::kStages;
    const uint32_t phase = (ring / Traits::kStages) & 1;
    const int raw = ring % Traits::kRawStages;
    mbarrier_wait(smem_base + Traits::v_raw_full_barrier(raw), (ring / Traits::kRawStages) & 1);
    mbarrier_wait(smem_base + Traits::v_empty_barrier(stage), phase ^ 1);
    // Rows of the block inside the sequence (head-packed: its keys times the heads, rows being key-major).
    const int valid_keys = Traits::kHeadPacked
                               ? min(Traits::kBlockN, (seq.seqlen_k - n * keys_per_block<Traits>(p))
                                                          << p.kv_head_pack_log2)
                               : min(Traits::kBlockN, seq.seqlen_k - n * Traits::kBlockN);
    const uint32_t raw_tile = smem_base + Traits::kRawOffset + raw * Traits::kRawStageBytes;
    const uint32_t vt_tile = smem_base + Traits::kVOffset + stage * Traits::VTile::kBytes;
    if constexpr (Traits::kF16Pv) {
      // fp16 P*V (entry 78): V widened into the stage's 16-bit V tile, not transposed.
      widen_v_e4m3_f16<Traits::kBlockN, Traits::kDv, typename Traits::VRawTile, typename Traits::VTile, kThreads>(
          raw_tile, vt_tile, tid, valid_keys);
    } else if constexpr (Traits::kBlockN == 128 && Traits::kDv == 128) {
      // Bank-conflict-free lane mapping; one pass at a time beside the consumers' register split (40 here).
      transpose_v_e4m3_128<!Traits::kReallocateRegisters ? 8 : kBatchLoads ? 2 : 1>(raw_tile, vt_tile, tid, valid_keys,
                                                                                  keyed);
    } else {
      // The generic lane mapping: 64-byte raw V rows (d64) or 64-byte V^T rows (d256's block_n 64) take the
      // 64-byte swizzle; full blocks at constant offsets, the last block per key.
      using RawLayout = std::conditional_t<Traits::kDv == 64, SwizzledTile8Sw64<Traits::kBlockN>,
                                           SwizzledTile8<Traits::kBlockN, Traits::kDv>>;
      using VtLayout = std::conditional_t<Traits::kBlockN == 64, SwizzledTile8Sw64<Traits::kDv>,
                                          SwizzledTile8<Traits::kDv, Traits::kBlockN>>;
      // The constant-offset path unrolls every pass: at d256 (8 passes) beside two consumer warpgroups the
      // producer's 40 registers spilled, so it keeps the per-key path there (a rolled constant-offset loop is
      // the next step, entry 28).
      constexpr bool kFullPath = Traits::kBlockN * Traits::kDv / 16 / 128 <= 4 || !Traits::kReallocateRegisters;
      if (kFullPath && valid_keys >= Traits::kBlockN && !keyed) {
        constexpr int kPasses = Traits::kBlockN * Traits::kDv / 16 / 128;
        transpose_v_e4m3_full<Traits::kBlockN, Traits::kDv, RawLayout, VtLayout, kBatchLoads ? kPasses : 1>(
            raw_tile, vt_tile, tid);
      } else {
        transpose_v_e4m3<Traits::kBlockN, Traits::kDv, RawLayout, VtLayout>(raw_tile, vt_tile, tid, kThreads,
                                                                             valid_keys);
      }
    }
    fence_proxy_async_shared();
    mbarrier_arrive(smem_base + Traits::v_full_barrier(stage));
    // This warp is done reading the raw stage: the next TMA into it waits for all four (v_raw_empty), and no
    // warp waits for the issuing warp (a named barrier here held warps 1-3 behind warp 0's issue, entry 19).
    __syncwarp();
    if (lane == 0) mbarrier_arrive(smem_base + Traits::v_raw_empty_barrier(raw));
  }

  // kFlags (experiments, entry 39): kLoopPageIdsAhead reads each block's block-table entries two blocks ahead and
  // clamps them when the block is issued (ncu: the default clamps right after the load, a block ahead, and the
  // issuing warp waits for the load there; entry 37); kLoopTransposeBatch batches the transpose's loads.
  // kPersistent (fwd_persistent.h, fp8-persist): `pipe` key blocks went through the stage and raw rings in this
  // CTA's earlier tiles and `q_count` Q tiles before this one, as ProducerTma's; each tile drains its own lag (its
  // last blocks' transposes run before the next tile's copies). TMA only: the persistent launcher takes the calls
  // TMA streams.
  template <int kFlags = kDefaultLoopFlags, bool kPersistent = false>
  __device__ static void run(const FwdParams& p, const KvTensorMaps& maps, const SequenceInfo& seq, int b,
                             int kv_head, int row_begin, int n_begin, int n_end, uint8_t* smem, int tid, int pipe = 0,
                             int q_count = 0) {
    constexpr bool kAhead = (kFlags & kLoopPageIdsAhead) != 0;
    if constexpr (Traits::kShape.native_copies && !kPersistent) {
      if (p.kv_tma_rows == 0) {
        run_by_copies(p, seq, b, kv_head, row_begin, n_begin, n_end, smem, tid);
        return;
      }
    }
    const uint32_t smem_base = smem_addr(smem);
    const int lane = tid % 32;
    const int pipe0 = kPersistent ? __shfl_sync(0xffffffffu, pipe, 0) : 0;  // warp-uniform for ptxas (consumer.h)
    if constexpr (kPersistent) {
      if (q_count > 0) mbarrier_wait(smem_base + Traits::kPersistQEmptyBarrier, (q_count - 1) & 1);
    }
    if (tid == 0 && (!kPersistent || q_count == 0)) {
      prefetch_tensormap(&maps.k);
      prefetch_tensormap(&maps.v);
    }
    Producer<Traits>::load_q(p, seq, row_begin, kv_head, smem_base, tid);  // 16 e4m3 values per chunk

    const int n_iters = n_end - n_begin;
    const int box_rows = p.kv_tma_rows;  // keys per box
    const int block_keys = keys_per_block<Traits>(p);
    const bool has_box = lane * box_rows < block_keys;
    const int last_key = max(0, seq.seqlen_k - 1);
    auto coord_of = [&](int i) {
      if (!(i < n_iters && has_box)) return typename Tma::BoxCoord{0, 0};
      const int key = min((n_end - 1 - i) * block_keys + lane * box_rows, last_key);
      if constexpr (kAhead) {
        return Tma::box_coord_raw(p, seq, b, key);
      } else {
        return Tma::box_coord(p, seq, b, key);
      }
    };
    // Head-packed: a box spans the group's heads from its first (the map's head coordinate), so it fills
    // box_rows x heads rows of the tile.
    const int box_head = Traits::kHeadPacked ? kv_head << p.kv_head_pack_log2 : kv_head;
    const int box_tile_rows = Traits::kHeadPacked ? box_rows << p.kv_head_pack_log2 : box_rows;
    // The next block's box coordinates (a block-table read for a paged cache) are read a block ahead, as the 16-bit
    // TMA producer does: read in the issue path, its latency stood before every block's copies (entry 19).
    // Warp 0 issues K's boxes, warp 1 the raw V's (FwdParams::kv_issue_warps 2; 1: warp 0 both; 4: two warps per
    // tile, ProducerTma::issue_roles), each reading the block table for itself: a warp issues its boxes one after
    // another (entry 26).
    const typename Tma::IssueRoles roles = Tma::issue_roles(p, tid / 32);
    const bool issues_k = roles.k, issues_v = roles.v;
    typename Tma::BoxCoord next{0, 0}, after_next{0, 0};
    if (issues_k || issues_v) {
      next = coord_of(0);
      if constexpr (kAhead) after_next = coord_of(1);
    }
    // Each step transposes block it - kLag first, then issues the copies of block it. The copies of block it wait
    // for the consumers to release its K stage (QK^T of block it - kStages); issued first, as before entry 22, they
    // held the transpose of block it - kLag behind that wait, i.e. behind QK^T of the very block the consumers were
    // about to need V^T of (kLag == kStages at block_m 128): every block's transpose stood in series with its
    // QK^T, and the two pingpong warpgroups met at each block. Transposed first, V^T of block j depends on QK^T of
    // block j - 1 or earlier only. No deadlock: the transpose of j waits for its raw V (issued at step j) and for
    // P*V of block j - kStages (whose V^T is from step j - kStages + kLag < it); the copies of it wait for QK^T of
    // it - kStages (needing V^T of it - kStages - 1, from step it - kStages - 1 + kLag < it) and for the raw stage's
    // previous block (transposed at step it - kRawStages + kLag <= it - 1).
    // kFp8KeyedTranspose (diagnostic, FLASHSEEK_EXPERIMENT=fp8n-keyed-transpose): full blocks on the per-key path.
    auto transpose_step = [&](int it) {
      transpose_block<(kFlags & kLoopTransposeBatch) != 0>(p, seq, it - kLag, n_end, smem_base, tid, pipe0);
    };
    auto issue_step = [&](int it) {
      if (it < n_iters && (issues_k || issues_v)) {
        // Block it: K into its stage, V into its raw stage, all by TMA.
        typename Tma::BoxCoord c = next;
        if constexpr (kAhead) {
          c = Tma::clamp_page(p, c);
          next = after_next;
          after_next = coord_of(it + 2);
        } else {
          next = coord_of(it + 1);
        }
        const int ring = pipe0 + it;
        if (issues_k) {
          const int stage = ring % Traits::kStages;
          const uint32_t phase = (ring / Traits::kStages) & 1;
          Tma::template issue_block<typename Traits::KTile, kThreads>(
              &maps.k, smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes,
              smem_base + Traits::k_full_barrier(stage), smem_base + Traits::k_empty_barrier(stage), phase ^ 1,
              box_head, c, lane, box_tile_rows, has_box, roles.k_share);
        }
        if (issues_v) {
          // The raw stage's previous block (it - kRawStages) must have been read by every producer warp.
          const int raw = ring % Traits::kRawStages;
          Tma::template issue_block<typename Traits::VRawTile, 1>(
              &maps.v, smem_base + Traits::kRawOffset + raw * Traits::kRawStageBytes,
              smem_base + Traits::v_raw_full_barrier(raw), smem_base + Traits::v_raw_empty_barrier(raw),
              ((ring / Traits::kRawStages) & 1) ^ 1, box_head, c, lane, box_tile_rows, has_box, roles.v_share);
        }
      }
    };
    for (int it = 0; it < n_iters + kLag; ++it) {
      transpose_step(it);
      issue_step(it);
    }
    if constexpr (!kPersistent) asm volatile("cp.async.wait_all;\n" ::: "memory");
  }

  // K and the raw V by 16-byte copies from all 128 threads (the header), in the TMA path's order: each step
  // transposes block it - kLag, then copies block it.
  __device__ static void run_by_copies(const FwdParams& p, const SequenceInfo& seq, int b, int kv_head,
                                       int row_begin, int n_begin, int n_end, uint8_t* smem, int tid) {
    using Base = Producer<Traits>;
    const uint32_t smem_base = smem_addr(smem);
    Base::load_q(p, seq, row_begin, kv_head, smem_base, tid);
    const uint8_t* k = static_cast<const uint8_t*>(p.k) + static_cast<int64_t>(kv_head) * p.k_head_stride;
    const uint8_t* v = static_cast<const uint8_t*>(p.v) + static_cast<int64_t>(kv_head) * p.v_head_stride;
    int64_t* offsets = reinterpret_cast<int64_t*>(smem + Traits::kRowOffsetsOffset);
    auto offsets_of = [&](int it) { return offsets + (it & 1) * 2 * Traits::kBlockN; };
    const int k_chunks = p.head_dim / 16;
    const int v_chunks = p.head_dim_v / 16;
    const int n_iters = n_end - n_begin;
    int page_next = n_iters > 1 ? Base::fetch_page(p, seq, b, n_end - 2, tid) : 0;
    Base::compute_row_offsets(p, seq, b, n_end - 1, Base::fetch_page(p, seq, b, n_end - 1, tid), offsets_of(0),
                              offsets_of(0) + Traits::kBlockN, tid);
    named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
    for (int it = 0; it < n_iters + kLag; ++it) {
      transpose_block(p, seq, it - kLag, n_end, smem_base, tid);
      if (it >= n_iters) continue;
      const int stage = it % Traits::kStages;
      const uint32_t phase = (it / Traits::kStages) & 1;
      const int raw = it % Traits::kRawStages;
      const int64_t* k_off = offsets_of(it);
      const int64_t* v_off = k_off + Traits::kBlockN;
      mbarrier_wait(smem_base + Traits::k_empty_barrier(stage), phase ^ 1);
      const uint32_t k_tile = smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes;
      copy_rows<typename Traits::KTile>(k, k_off, k_chunks, k_tile, tid);
      cp_async_arrive_on(smem_base + Traits::k_full_barrier(stage));
      // The raw stage's previous block (it - kRawStages) must have been transposed by every producer warp.
      mbarrier_wait(smem_base + Traits::v_raw_empty_barrier(raw), ((it / Traits::kRawStages) & 1) ^ 1);
      copy_rows<typename Traits::VRawTile>(v, v_off, v_chunks,
                                           smem_base + Traits::kRawOffset + raw * Traits::kRawStageBytes, tid);
      cp_async_arrive_on(smem_base + Traits::v_raw_full_barrier(raw));
      // The other offsets buffer was last read in step it - 1, before the previous sync.
      const int page_after = it + 2 < n_iters ? Base::fetch_page(p, seq, b, n_end - 3 - it, tid) : 0;
      if (it + 1 < n_iters) {
        int64_t* next = offsets_of(it + 1);
        Base::compute_row_offsets(p, seq, b, n_end - 2 - it, page_next, next, next + Traits::kBlockN, tid);
      }
      page_next = page_after;
      named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  }
};

}  // namespace flashseek::sm90

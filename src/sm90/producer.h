// The producer warpgroup: gathers the CTA's packed query rows once, then streams K and V blocks into the
// stage ring with 16-byte cp.async copies, in the order the consumers visit them (last block first).
// Rows past a sequence's end and columns past the call's head dim are zero-filled, never read: that keeps
// garbage (NaN, Inf) in unused cache slots out of the output and pads head dims up to the tile.
#pragma once

#include "fwd_params.h"
#include "kernel_traits.h"
#include "prims/async_copy.h"
#include "prims/mbarrier.h"
#include "seqlen.h"

namespace flashseek::sm90 {

template <class Traits>
struct Producer {
  using Element = typename Traits::Element;
  static constexpr int kThreads = 128;

  // Rows [row_begin, row_begin + kBlockM) of the packed (token, query head) space of KV head `kv_head`, in
  // 16-byte chunks (8 16-bit values, or 16 e4m3 ones for the native e4m3 tiles), zero-filled past the sequence's
  // rows and the call's head dim (a multiple of the chunk's values: the host only takes such calls here).
  __device__ __forceinline__ static void load_q(const FwdParams& p, const SequenceInfo& seq, int row_begin,
                                                int kv_head, uint32_t smem_base, int tid) {
    constexpr int kChunks = Traits::QTile::kChunksPerRow;
    constexpr int kBytes = Traits::kElementBytes;
    constexpr int kValuesPerChunk = 16 / kBytes;
    const int valid_chunks = p.head_dim / kValuesPerChunk;
    const uint8_t* q = static_cast<const uint8_t*>(p.q);
    for (int idx = tid; idx < Traits::kBlockM * kChunks; idx += kThreads) {
      const int row = idx / kChunks;
      const int chunk = idx - row * kChunks;
      const int packed = row_begin + row;
      const int token = p.qheads_div.div(packed);
      const int head = kv_head * p.qheads_per_kvhead + (packed - token * p.qheads_per_kvhead);
      const bool valid = token < seq.seqlen_q && chunk < valid_chunks;
      const uint8_t* src = valid ? q + (static_cast<int64_t>(seq.q_start + token) * p.q_row_stride +
                                        static_cast<int64_t>(head) * p.q_head_stride + chunk * kValuesPerChunk) *
                                           kBytes
                                 : q;
      cp_async_16_zfill(smem_base + Traits::kQOffset + Traits::QTile::chunk_offset(row, chunk), src, valid);
    }
    cp_async_arrive_on(smem_base + Traits::q_full_barrier());
  }

  // One key row per thread up to block_n 128, its page id read a block ahead (fetch_page). Wider tiles (the
  // one-block windowed d64 tile, block_n 176) take several rows a thread and read each row's page where its offsets
  // are computed: their copying paths (the TMA producer's last partial block, calls TMA cannot stream) are rare.
  static constexpr bool kRowPerThread = Traits::kBlockN <= kThreads;

  // The page holding this thread's key row of block n (paged layout), read from the block table; 0 otherwise.
  // Issued a block ahead of its use: a block-table read is a dependent global load, and waiting for it right
  // before the copies would put one memory latency per block on the critical path of a long sequence.
  __device__ __forceinline__ static int fetch_page(const FwdParams& p, const SequenceInfo& seq, int b, int n,
                                                   int tid) {
    if constexpr (!kRowPerThread) return 0;  // compute_row_offsets reads each row's page
    const int key = n * Traits::kBlockN + tid;
    if (p.kv_layout != KVLayout::kPaged || tid >= Traits::kBlockN || key >= seq.seqlen_k) return 0;
    const int col = p.page_div.div(seq.k_first + key);
    return p.block_table[static_cast<int64_t>(b) * p.block_table_stride + col];
  }

  // Element offsets (from the KV head's base) of the K and V rows of keys [n * kBlockN, (n + 1) * kBlockN),
  // or -1 for keys past the sequence; `page` is this thread's fetch_page(n) (sequence b's).
  __device__ __forceinline__ static void compute_row_offsets(const FwdParams& p, const SequenceInfo& seq, int b,
                                                             int n, int page, int64_t* k_off, int64_t* v_off,
                                                             int tid) {
    if constexpr (!kRowPerThread) {
      // Several rows per thread, each row's page read here.
      for (int row = tid; row < Traits::kBlockN; row += kThreads) {
        const int key = n * Traits::kBlockN + row;
        int row_page = 0;
        if (p.kv_layout == KVLayout::kPaged && key < seq.seqlen_k) {
          const int col = p.page_div.div(seq.k_first + key);
          row_page = p.block_table[static_cast<int64_t>(b) * p.block_table_stride + col];
        }
        int64_t ko = -1, vo = -1;
        key_row_offsets(p, seq, key, row_page, ko, vo);
        k_off[row] = ko;
        v_off[row] = vo;
      }
      return;
    }
    if (tid >= Traits::kBlockN) return;
    int64_t ko = -1, vo = -1;
    key_row_offsets(p, seq, n * Traits::kBlockN + tid, page, ko, vo);
    k_off[tid] = ko;
    v_off[tid] = vo;
  }

  template <class Tile>
  __device__ __forceinline__ static void load_rows(const Element* base, const int64_t* row_off, int valid_chunks,
                                                   uint32_t tile_smem, int tid) {
    constexpr int kChunks = Tile::kChunksPerRow;
    for (int idx = tid; idx < Traits::kBlockN * kChunks; idx += kThreads) {
      const int row = idx / kChunks;
      const int chunk = idx - row * kChunks;
      const int64_t off = row_off[row];
      const bool valid = off >= 0 && chunk < valid_chunks;
      const Element* src = valid ? base + off + chunk * 8 : base;
      cp_async_16_zfill(tile_smem + Tile::chunk_offset(row, chunk), src, valid);
    }
  }

  // kFlags: kLoopProducerNoCopy (an experiment: docs/perf-log.md entry 9) copies K/V for the first kStages blocks
  // only and then runs the barrier protocol alone (the consumers reuse stale tiles); other bits do not matter here.
  template <int kFlags = kDefaultLoopFlags>
  __device__ static void run(const FwdParams& p, const SequenceInfo& seq, int b, int kv_head, int row_begin,
                             int n_begin, int n_end, uint8_t* smem, int tid) {
    constexpr bool kNoCopy = (kFlags & kLoopProducerNoCopy) != 0;
    const uint32_t smem_base = smem_addr(smem);
    load_q(p, seq, row_begin, kv_head, smem_base, tid);

    const Element* k = static_cast<const Element*>(p.k) + static_cast<int64_t>(kv_head) * p.k_head_stride;
    const Element* v = static_cast<const Element*>(p.v) + static_cast<int64_t>(kv_head) * p.v_head_stride;
    int64_t* offsets = reinterpret_cast<int64_t*>(smem + Traits::kRowOffsetsOffset);
    const int k_chunks = p.head_dim / 8;
    const int v_chunks = p.head_dim_v / 8;

    // Row offsets of block n are computed one block ahead (double-buffered in shared memory), and the page ids
    // they need are read two blocks ahead, so neither wait sits between a free stage and its copies.
    const int n_iters = n_end - n_begin;
    auto offsets_of = [&](int it) { return offsets + (it & 1) * 2 * Traits::kBlockN; };
    int page_next = n_iters > 1 ? fetch_page(p, seq, b, n_end - 2, tid) : 0;
    compute_row_offsets(p, seq, b, n_end - 1, fetch_page(p, seq, b, n_end - 1, tid), offsets_of(0),
                        offsets_of(0) + Traits::kBlockN, tid);
    named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
    for (int it = 0; it < n_iters; ++it) {
      const int stage = it % Traits::kStages;
      const uint32_t phase = (it / Traits::kStages) & 1;
      const int64_t* k_off = offsets_of(it);
      const int64_t* v_off = k_off + Traits::kBlockN;

      const bool copy = !kNoCopy || it < Traits::kStages;
      mbarrier_wait(smem_base + Traits::k_empty_barrier(stage), phase ^ 1);
      if (copy) {
        load_rows<typename Traits::KTile>(k, k_off, k_chunks,
                                          smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes, tid);
      }
      cp_async_arrive_on(smem_base + Traits::k_full_barrier(stage));

      const int page_after = it + 2 < n_iters ? fetch_page(p, seq, b, n_end - 3 - it, tid) : 0;
      // The other offsets buffer was last read in iteration it - 1, before the previous sync.
      if (it + 1 < n_iters && (!kNoCopy || it + 1 < Traits::kStages)) {
        int64_t* next = offsets_of(it + 1);
        compute_row_offsets(p, seq, b, n_end - 2 - it, page_next, next, next + Traits::kBlockN, tid);
      }
      page_next = page_after;

      mbarrier_wait(smem_base + Traits::v_empty_barrier(stage), phase ^ 1);
      if (copy) {
        load_rows<typename Traits::VTile>(v, v_off, v_chunks,
                                          smem_base + Traits::kVOffset + stage * Traits::VTile::kBytes, tid);
      }
      cp_async_arrive_on(smem_base + Traits::v_full_barrier(stage));
      named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
    }
    // Copies still in flight complete on their own; waiting keeps a retiring warp from leaving them behind.
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  }
};

}  // namespace flashseek::sm90

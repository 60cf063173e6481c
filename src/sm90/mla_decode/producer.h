// The producer warpgroup of the MLA decode kernel: gathers the query tile [q_v | q] once, then streams key blocks
// into the stage ring, each key's 576-wide row as [v (512) | k (64)] through the pointers and strides of v and k
// (the usual cache has them as overlapping views of one row; any layout of the two works).
//
// Thread t copies rows t / 8 + 16 i (i < 4) of a block, 16-byte chunks t % 8 + 8 c: eight threads cover 128
// contiguous bytes of one row per instruction (coalesced), and each thread keeps its rows' offsets in registers
// (no shared offset table). Keys past the sequence are zero-filled, never read: NaN in unused slots stays out.
#pragma once

#include "../fwd_params.h"
#include "../prims/async_copy.h"
#include "../prims/mbarrier.h"
#include "../seqlen.h"
#include "traits.h"

namespace flashseek::sm90::mla {

template <class Traits>
struct Producer {
  using Element = typename Traits::Element;
  static constexpr int kRowsPerThread = Traits::kBlockN / 16;
  static constexpr int kChunksPerRow = Traits::kDqk / 8;  // 72: 64 from v, 8 from k
  static_assert(kChunksPerRow % 8 == 0 && Traits::kVChunks % 8 == 0, "8 threads per row, whole column blocks");

  // Packed rows [row_begin, row_begin + 64) of KV head `kv_head`: columns 0..511 from q_v, 512..575 from q.
  __device__ __forceinline__ static void load_q(const FwdParams& p, const SequenceInfo& seq, int row_begin,
                                                int kv_head, uint32_t smem_base, int tid) {
    const Element* q = static_cast<const Element*>(p.q);
    const Element* qv = static_cast<const Element*>(p.q_v);
    const int sub = tid % 8;
#pragma unroll 1
    for (int i = 0; i < Traits::kBlockM / 16; ++i) {
      const int row = tid / 8 + 16 * i;
      const int packed = row_begin + row;
      const int token = p.qheads_div.div(packed);
      const int head = kv_head * p.qheads_per_kvhead + (packed - token * p.qheads_per_kvhead);
      const bool valid = token < seq.seqlen_q;
      const int64_t tok = seq.q_start + token;
      const Element* qv_row = qv + tok * p.qv_row_stride + static_cast<int64_t>(head) * p.qv_head_stride;
      const Element* q_row = q + tok * p.q_row_stride + static_cast<int64_t>(head) * p.q_head_stride;
#pragma unroll
      for (int j = 0; j < kChunksPerRow / 8; ++j) {
        const int c = sub + 8 * j;  // column block j: 0..7 from q_v, 8 from q
        const Element* src = j < Traits::kVChunks / 8 ? qv_row + 8 * c : q_row + 8 * (c - Traits::kVChunks);
        cp_async_16_zfill(smem_base + Traits::kQOffset + Traits::QTile::chunk_offset(row, c), valid ? src : q,
                          valid);
      }
    }
    cp_async_arrive_on(smem_base + Traits::q_full_barrier());
  }

  // The page of key `key` of the sequence (paged layout; 0 otherwise or past the end). Read a block ahead of its
  // use: a block-table read is a dependent global load.
  __device__ __forceinline__ static int fetch_page(const FwdParams& p, const SequenceInfo& seq, int b, int key) {
    if (p.kv_layout != KVLayout::kPaged || key >= seq.seqlen_k) return 0;
    return p.block_table[static_cast<int64_t>(b) * p.block_table_stride + p.page_div.div(seq.k_first + key)];
  }


  __device__ static void run(const FwdParams& p, const SequenceInfo& seq, int b, int kv_head, int row_begin,
                             int n_begin, int n_end, uint32_t smem_base, int tid) {
    load_q(p, seq, row_begin, kv_head, smem_base, tid);

    const Element* k = static_cast<const Element*>(p.k) + static_cast<int64_t>(kv_head) * p.k_head_stride;
    const Element* v = static_cast<const Element*>(p.v) + static_cast<int64_t>(kv_head) * p.v_head_stride;
    const int sub = tid % 8;
    const int row0 = tid / 8;
    const int n_iters = n_end - n_begin;

    // Blocks are visited last to first (the one that needs masking first), as the consumers expect.
    int pages[kRowsPerThread];
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) pages[i] = fetch_page(p, seq, b, (n_end - 1) * Traits::kBlockN + row0 + 16 * i);

#pragma unroll 1
    for (int it = 0; it < n_iters; ++it) {
      const int n = n_end - 1 - it;
      const int stage = it % Traits::kStages;
      const uint32_t phase = (it / Traits::kStages) & 1;
      int row_pages[kRowsPerThread];
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) row_pages[i] = pages[i];
      if (it + 1 < n_iters) {
#pragma unroll
        for (int i = 0; i < kRowsPerThread; ++i) pages[i] = fetch_page(p, seq, b, (n - 1) * Traits::kBlockN + row0 + 16 * i);
      }

      mbarrier_wait(smem_base + Traits::empty_barrier(stage), phase ^ 1);
      const uint32_t tile = smem_base + Traits::stage_offset(stage);
      // One row at a time: its two offsets are all the address state a thread keeps.
#pragma unroll
      for (int i = 0; i < kRowsPerThread; ++i) {
        const int row = row0 + 16 * i;
        int64_t ko = 0, vo = 0;
        const bool valid = key_row_offsets(p, seq, n * Traits::kBlockN + row, row_pages[i], ko, vo);
#pragma unroll
        for (int j = 0; j < kChunksPerRow / 8; ++j) {
          const int c = sub + 8 * j;  // column block j: 0..7 from v, 8 from k
          const Element* src = j < Traits::kVChunks / 8 ? v + vo + 8 * c : k + ko + 8 * (c - Traits::kVChunks);
          cp_async_16_zfill(tile + Traits::RowTile::chunk_offset(row, c), valid ? src : k, valid);
        }
      }
      cp_async_arrive_on(smem_base + Traits::full_barrier(stage));
    }
    // Copies still in flight complete on their own; waiting keeps a retiring warp from leaving them behind.
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  }
};

}  // namespace flashseek::sm90::mla

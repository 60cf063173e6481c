// The TMA producer for a dense (varlen) K/V (experiment kLoopTmaKv, docs/perf-log.md entry 9): one thread of the
// producer warpgroup streams every full key block with bulk tensor copies (one per 64-column block of the K and
// V tiles), so the producer issues a handful of instructions per block instead of ~300 cp.async and their
// address arithmetic per thread. The block that holds the sequence's end (the only one with rows past
// seqlen_k, which belong to the next sequence or to unused slots and must be zero-filled, not copied) goes
// through the cp.async path of producer.h with all 128 threads, as do the packed GQA query rows.
//
// Barrier protocol unchanged: a full barrier expects 128 arrivals; the TMA path gives them in one
// mbarrier.arrive with count 128, after raising the phase's transaction count by the tile's bytes.
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

  template <class Tile>
  __device__ __forceinline__ static void tma_tile(const TmaDescriptor* tmap, uint32_t tile_smem, int kv_head,
                                                  int first_row, uint32_t full_bar) {
    mbarrier_expect_tx(full_bar, Tile::kBytes);
#pragma unroll
    for (int cb = 0; cb < Tile::kColumnBlocks; ++cb) {
      tma_load_3d(tile_smem + cb * Tile::kColumnBlockBytes, tmap, cb * 64, kv_head, first_row, full_bar);
    }
    mbarrier_arrive_count(full_bar, kThreads);
  }

  __device__ static void run(const FwdParams& p, const KvTensorMaps& maps, const SequenceInfo& seq, int b,
                             int kv_head, int row_begin, int n_begin, int n_end, uint8_t* smem, int tid) {
    const uint32_t smem_base = smem_addr(smem);
    if (tid == 0) {
      prefetch_tensormap(&maps.k);
      prefetch_tensormap(&maps.v);
    }
    Base::load_q(p, seq, row_begin, kv_head, smem_base, tid);

    const Element* k = static_cast<const Element*>(p.k) + static_cast<int64_t>(kv_head) * p.k_head_stride;
    const Element* v = static_cast<const Element*>(p.v) + static_cast<int64_t>(kv_head) * p.v_head_stride;
    int64_t* k_off = reinterpret_cast<int64_t*>(smem + Traits::kRowOffsetsOffset);
    int64_t* v_off = k_off + Traits::kBlockN;

    const int n_iters = n_end - n_begin;
    for (int it = 0; it < n_iters; ++it) {
      const int n = n_end - 1 - it;
      const int stage = it % Traits::kStages;
      const uint32_t phase = (it / Traits::kStages) & 1;
      const uint32_t k_tile = smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes;
      const uint32_t v_tile = smem_base + Traits::kVOffset + stage * Traits::VTile::kBytes;
      if ((n + 1) * Traits::kBlockN <= seq.seqlen_k) {
        if (tid == 0) {
          const int first_row = seq.k_first + n * Traits::kBlockN;
          mbarrier_wait(smem_base + Traits::k_empty_barrier(stage), phase ^ 1);
          tma_tile<typename Traits::KTile>(&maps.k, k_tile, kv_head, first_row,
                                           smem_base + Traits::k_full_barrier(stage));
          mbarrier_wait(smem_base + Traits::v_empty_barrier(stage), phase ^ 1);
          tma_tile<typename Traits::VTile>(&maps.v, v_tile, kv_head, first_row,
                                           smem_base + Traits::v_full_barrier(stage));
        }
      } else {
        // The sequence's last (partial) block: every producer thread, cp.async with zero fill. Happens at most
        // once per CTA, so one offsets buffer suffices.
        Base::compute_row_offsets(p, seq, n, 0, k_off, v_off, tid);
        named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
        mbarrier_wait(smem_base + Traits::k_empty_barrier(stage), phase ^ 1);
        Base::template load_rows<typename Traits::KTile>(k, k_off, p.head_dim / 8, k_tile, tid);
        cp_async_arrive_on(smem_base + Traits::k_full_barrier(stage));
        mbarrier_wait(smem_base + Traits::v_empty_barrier(stage), phase ^ 1);
        Base::template load_rows<typename Traits::VTile>(v, v_off, p.head_dim_v / 8, v_tile, tid);
        cp_async_arrive_on(smem_base + Traits::v_full_barrier(stage));
      }
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  }

};

}  // namespace flashseek::sm90

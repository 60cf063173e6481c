// The forward kernel: one CTA per (block of kBlockM packed query rows, KV head, KV split, sequence).
// Warpgroup 0 produces (gathers Q, K, V into shared memory, converting an e4m3 cache to the 16-bit compute type);
// warpgroups 1 (and 2) consume, 64 rows each.
#pragma once

#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <type_traits>

#include "consumer.h"
#include "consumer_keys_as_m.h"
#include "fwd_experiments.h"
#include "fwd_params.h"
#include "kernel_traits.h"
#include "key_origin.h"
#include "launch.h"
#include "launch_order.h"
#include "mask.h"
#include "per_device_setup.h"
#include "prims/async_copy.h"
#include "prims/mbarrier.h"
#include "prims/pdl.h"
#include "prims/wgmma.h"
#include "producer.h"
#include "producer_fp8.h"
#include "producer_fp8_native.h"
#include "producer_tma.h"
#include "seqlen.h"
#include "tile_index.h"

namespace flashseek::sm90 {

// Entry 66 (FwdParams::lpt_section): each pair's heaviest tiles before any pair's next (launch_order.h). Otherwise
// the last pairs' heaviest tiles start after every earlier pair's and run alone at the end (16 MHA heads of one
// sequence). Out of line: inlined, its divisions in the prologue made ptxas schedule the d64 one-tile loop
// differently (57 -> 63 exponentials under the P*V) although the branch is not taken by default. Static: each
// kernel TU has its own copy, so the library links (an external one is defined once per TU).
static __noinline__ __device__ LaunchTile lpt_launch_tile(int section) {
  const int linear = blockIdx.x + gridDim.x * (blockIdx.y + gridDim.y * blockIdx.z);
  return lpt_tile_of(linear, gridDim.x, gridDim.y, gridDim.z, section);
}

// One CTA's work: the tile at grid coordinates (bx, by, bz) of a grid grid_x wide.
struct TileWork {
  SequenceInfo seq;
  AttentionMask mask;
  int b, kv_head, split, row_begin, n_begin, n_end;

  // false: the tile holds no rows of a sequence (a flat grid's padding, or past the sequence's rows).
  // kFastDiv: the y index split by p.heads_kv_div (the persistent launcher sets it; kLoopTileFastDiv).
  // kFlatDirection: a flat grid's order by FwdParams::flat_order (the one-tile kernel); otherwise from the last
  // sequence (order 0).
  // kCluster: the cluster-combine kernel's grid (FwdParams::cluster_splits: y = KV head x splits + split).
  template <class Traits, bool kFastDiv = false, bool kFlatDirection = true, bool kCluster = false>
  __device__ __forceinline__ bool resolve(const FwdParams& p, int bx, int by, int bz, int grid_x) {
    int m_block = bx;
    b = bz;
    if (p.flat_tiles) {
      // Each sequence's last m block first (a causal sequence's heaviest), so that it starts early.
      if constexpr (kFlatDirection) {
        int tile;
        bool flat_forward;
        b = sequence_of_flat_tile<Traits::kBlockM>(p, bx, grid_x, tile, flat_forward);
        seq = SequenceInfo::load(p, b);
        m_block = tile - first_tile_of<Traits::kBlockM>(p, b);
        if (flat_forward) {
          const int64_t rows = static_cast<int64_t>(seq.seqlen_q) * p.qheads_per_kvhead;
          m_block = static_cast<int>((rows + Traits::kBlockM - 1) / Traits::kBlockM) - 1 - m_block;
        }
      } else {
        const int tile = grid_x - 1 - bx;
        b = sequence_of_tile<Traits::kBlockM>(p, tile);
        m_block = tile - first_tile_of<Traits::kBlockM>(p, b);
      }
      if (m_block < 0) return false;
    }
    if constexpr (kFastDiv) {
      split = p.heads_kv_div.div(by);
      kv_head = by - split * p.num_heads_kv;
    } else if constexpr (kCluster) {
      // cluster-combine: a cluster is a run of y indices, the splits of one KV head
      split = by % p.cluster_splits;
      kv_head = by / p.cluster_splits;
    } else {
      kv_head = by % p.num_heads_kv;
      split = by / p.num_heads_kv;
    }
    if (!(kFlatDirection && p.flat_tiles)) seq = SequenceInfo::load(p, b);
    row_begin = m_block * Traits::kBlockM;
    if (row_begin >= seq.seqlen_q * p.qheads_per_kvhead) return false;  // past the sequence's rows (or a hole)
    // Context parallel: the global key count sets the causal diagonal.
    const int seqlen_k_total = p.cp_tot_seqused_k != nullptr ? max(0, p.cp_tot_seqused_k[b]) : -1;
    mask = AttentionMask::make(p, seq.seqlen_q, seq.seqlen_k, row_begin, Traits::kBlockM, seqlen_k_total);
    mask.block_range(keys_per_block<Traits>(p), n_begin, n_end);
    // Entry 102: a windowed tile's key blocks from its first visible key where that saves a block (context
    // parallel keeps key 0: its local keys interleave with the other ranks'). Everywhere, it cost long windows
    // 3-5% (G27 w1024, L8 w4096: the diagonal and the sequence's end then cut blocks that key 0's did not).
    if (p.window_origin_rows > 0 && mask.left != AttentionMask::kUnbounded && mask.cp_world == 1) {
      const int origin = window_key_origin(mask.tok_min + mask.diag - mask.left, seq.seqlen_k, p.window_origin_rows);
      AttentionMask shifted = mask;
      shifted.shift_keys(origin);
      int shifted_begin, shifted_end;
      shifted.block_range(keys_per_block<Traits>(p), shifted_begin, shifted_end);
      if (shifted_end - shifted_begin < n_end - n_begin) {
        seq.k_first += origin;
        seq.seqlen_k -= origin;
        mask = shifted;
        n_begin = shifted_begin;
        n_end = shifted_end;
      }
    }
    AttentionMask::split_block_range(p.num_splits, split, n_begin, n_end);
    return true;
  }
};

// `maps`: the K/V tensor maps of the TMA producer (used where p.kv_tma_rows > 0).
template <class Traits, int kLoopFlags>
__global__ void __launch_bounds__(Traits::kThreads, Traits::kCtasPerSm)
    attention_fwd_kernel(const __grid_constant__ FwdParams p, const __grid_constant__ KvTensorMaps maps) {
  extern __shared__ __align__(1024) uint8_t smem[];
  constexpr bool kOneConsumer = (kLoopFlags & kLoopOneConsumer) != 0;
  // Launched as a programmatic dependent: the kernel before may have written q, the cache or the sequence bounds.
  if (p.pdl & 1) pdl_wait();
  if (p.pdl & 2) pdl_trigger();

  // The hardware starts CTAs in blockIdx order: the last m blocks (a causal sequence's heaviest) first, so the
  // light ones fill the last wave (the flat grid's resolve does the same).
  int bx = p.flat_tiles ? static_cast<int>(blockIdx.x) : static_cast<int>(gridDim.x - 1 - blockIdx.x);
  int by = blockIdx.y, bz = blockIdx.z;
  if (p.lpt_section > 0) {
    const LaunchTile t = lpt_launch_tile(p.lpt_section);
    bx = p.flat_tiles ? t.heaviness : gridDim.x - 1 - t.heaviness;  // resolve counts flat tiles from the last
    by = t.y;
    bz = t.z;
  }
  TileWork w;
  // cluster-combine (kLoopClusterCombine, entry 120): its own instantiation, so that the default kernels stay as
  // they were measured.
  constexpr bool kCluster = kClusterCombine<Traits> && (kLoopFlags & kLoopClusterCombine) != 0;
  if (!w.resolve<Traits, false, true, kCluster>(p, bx, by, bz, gridDim.x)) return;
  const SequenceInfo& seq = w.seq;
  const AttentionMask& mask = w.mask;
  const int b = w.b, kv_head = w.kv_head, split = w.split, row_begin = w.row_begin;
  const int n_begin = w.n_begin, n_end = w.n_end;

  const uint32_t base = smem_addr(smem);
  if (threadIdx.x == 0) {
    if ((base & 1023) != 0) __trap();  // the swizzled tiles need a 1024-byte aligned base
    mbarrier_init(base + Traits::q_full_barrier(), 128);
    for (int s = 0; s < Traits::kStages; ++s) {
      mbarrier_init(base + Traits::k_full_barrier(s), 128);
      mbarrier_init(base + Traits::v_full_barrier(s), 128);
      // One arrival per warp of the warpgroups that read a block (a key-split tile's blocks are read by one).
      constexpr int kReaders = Traits::kConsumerWarpgroups / Traits::kKeySplit;
      mbarrier_init(base + Traits::k_empty_barrier(s), 4 * (kOneConsumer ? 1 : kReaders));
      mbarrier_init(base + Traits::v_empty_barrier(s), 4 * (kOneConsumer ? 1 : kReaders));
    }
    if constexpr (Traits::kFp8Native) {
      for (int r = 0; r < Traits::kRawStages; ++r) {
        // TMA: one arrival with the transaction count; by copies: one per producer thread (producer_fp8_native.h)
        mbarrier_init(base + Traits::v_raw_full_barrier(r),
                      !Traits::kShape.native_copies || p.kv_tma_rows > 0 ? 1 : 128);
        mbarrier_init(base + Traits::v_raw_empty_barrier(r), 4);  // one arrival per producer warp
      }
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  if (warpgroup == 0) {
    if constexpr (Traits::kReallocateRegisters) warpgroup_reg_dealloc<Traits::kProducerRegs>();
    if (n_end > n_begin) {
      if constexpr (Traits::kFp8Native) {
        ProducerFp8Native<Traits>::template run<kLoopFlags>(p, maps, seq, b, kv_head, row_begin, n_begin, n_end,
                                                             smem, tid);
      } else if constexpr (Traits::kFp8Kv) {
        ProducerFp8<Traits>::run(p, seq, b, kv_head, row_begin, n_begin, n_end, smem, tid);
      } else if ((kLoopFlags & kLoopProducerNoCopy) == 0 && ProducerTma<Traits>::usable(p, seq)) {
        ProducerTma<Traits>::template run<false, (kLoopFlags & kLoopQTma) != 0>(p, maps, seq, b, kv_head, row_begin,
                                                                                  n_begin, n_end, smem, tid);
      } else {
        Producer<Traits>::template run<kLoopFlags>(p, seq, b, kv_head, row_begin, n_begin, n_end, smem, tid);
      }
    }
    if constexpr (kCluster) {
      // The consumers' two cluster barriers (partials staged; peers done reading them): every thread of the
      // cluster arrives at each, the producer's too.
      cluster_sync();
      cluster_sync();
    }
  } else {
    if constexpr (Traits::kReallocateRegisters) warpgroup_reg_alloc<Traits::kConsumerRegs>();
    if constexpr (kOneConsumer) {
      if (warpgroup == 2) return;  // experiment: one consumer warpgroup does all the work there is
    }
    // kLoopUniformWg: ptxas cannot prove threadIdx.x / 128 warp-uniform, so the descriptors and addresses derived
    // from it live in vector registers and each wgmma needs R2UR moves (16 per key block at d128, entry 19).
    // With one consumer warpgroup (the 64-row decode tiles) it is the constant 0.
    const int wg = Traits::kConsumerWarpgroups == 1         ? 0
                   : (kLoopFlags & kLoopUniformWg) != 0 ? __shfl_sync(0xffffffffu, warpgroup - 1, 0)
                                                        : warpgroup - 1;
    if constexpr (Traits::kQueryRows > 0) {
      ConsumerKeysAsM<Traits>::template run<kCluster>(p, seq, mask, b, kv_head, row_begin, n_begin, n_end, split,
                                                      smem, wg, tid);
    } else {
      Consumer<Traits>::template run<kLoopFlags>(p, seq, mask, b, kv_head, row_begin, n_begin, n_end, split, smem,
                                                 wg, tid);
    }
  }
}

// The tiles with experiment variants (fwd_experiments.h tile_has_loop_variants), compiled in their own translation
// units (fwd_experiments*.cu).
template <class Traits>
constexpr bool has_experiment_variants() {
  return tile_has_loop_variants(std::is_same_v<typename Traits::Element, __nv_bfloat16>, Traits::kFp8Kv,
                                Traits::kVariant, Traits::kD, Traits::kDv, Traits::kBlockM);
}

template <class Traits>
cudaError_t launch_attention_fwd_experiment(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                                            int loop_flags, cudaStream_t stream);

// Defined in fwd_persistent.h (included where a kLoopPersistent value is instantiated: fwd_experiments.cu).
template <class Traits, int kLoopFlags>
cudaError_t launch_attention_fwd_persistent(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                                            cudaStream_t stream);

template <class Traits, int kLoopFlags>
cudaError_t launch_attention_fwd_one_tile(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                                          cudaStream_t stream) {
  auto kernel = attention_fwd_kernel<Traits, kLoopFlags>;
  // Raising the dynamic shared-memory limit is per function and device, and sticky: once per device.
  static PerDevice<cudaError_t> attr_slots;
  const cudaError_t attr_status = once_per_device(attr_slots, [&] {
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kSmemBytes);
    // Two CTAs per SM need the whole unified L1 / shared array as shared memory (2 x ~83 KB).
    if (e == cudaSuccess && Traits::kCtasPerSm > 1) {
      e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxShared);
    }
    return e;
  });
  if (attr_status != cudaSuccess) return attr_status;
  if constexpr (Traits::kCtasPerSm > 1) {
    // An experiment tile built for several CTAs per SM: say once if the device does not give them (the
    // measurement would be of a one-CTA kernel with a shallow pipeline).
    static const bool checked = [&] {
      int resident = 0;
      if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, kernel, Traits::kThreads, Traits::kSmemBytes) ==
              cudaSuccess &&
          resident < Traits::kCtasPerSm) {
        fprintf(stderr, "flashseek: decode tile variant %d: %d resident CTAs per SM, built for %d\n",
                Traits::kVariant, resident, Traits::kCtasPerSm);
      }
      return true;
    }();
    (void)checked;
  }
  const dim3 grid(num_m_blocks, p.num_heads_kv * p.num_splits, p.flat_tiles ? 1 : p.batch);
  const unsigned cluster_y =
      kClusterCombine<Traits> && (kLoopFlags & kLoopClusterCombine) != 0 ? static_cast<unsigned>(p.cluster_splits) : 1u;
  return launch_kernel_in_clusters(kernel, grid, Traits::kThreads, Traits::kSmemBytes, stream, (p.pdl & 1) != 0,
                                   cluster_y, p, maps);
}

template <class Traits, int kLoopFlags>
cudaError_t launch_attention_fwd_variant(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                                         cudaStream_t stream) {
  if constexpr ((kLoopFlags & kLoopPersistent) != 0) {
    return launch_attention_fwd_persistent<Traits, kLoopFlags>(p, maps, num_m_blocks, stream);
  } else {
    return launch_attention_fwd_one_tile<Traits, kLoopFlags>(p, maps, num_m_blocks, stream);
  }
}

// `loop_flags`: a LoopFlags combination, or -1 for kDefaultLoopFlags; tiles without variants ignore it.
template <class Traits>
cudaError_t launch_attention_fwd(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks, int loop_flags,
                                 cudaStream_t stream) {
  if constexpr (Traits::kFp8Native && Traits::kBlockM == 64) {
    // The native decode tiles' producer-latency loop (entry 39; run() takes it unless no-fp8-producer-ahead).
    if (loop_flags == kNativeProducerAheadLoopFlags) {
      return launch_attention_fwd_variant<Traits, kNativeProducerAheadLoopFlags>(p, maps, num_m_blocks, stream);
    }
  }
  if constexpr (Traits::kFp8Native && Traits::kF16Pv && Traits::kBlockM == 192) {
    // The 192-row native d64 tile on the persistent kernel (the default since entry 99; its inst file includes
    // fwd_persistent.h; run() asks for it on every 192-row native tile, and only this one has it); it falls back to
    // this tile's one-tile kernel under 1.5 waves.
    if (loop_flags == kPersistentLoopFlags) {
      return launch_attention_fwd_persistent<Traits, kPersistentLoopFlags>(p, maps, num_m_blocks, stream);
    }
  }
  if constexpr (Traits::kVariant == kD64WindowVariant) {
    // The one-block windowed d64 tile (entry 103): run() passes its persistent value; the persistent launcher's
    // fallback under 1.5 waves passes -1 and gets this tile's one-tile kernel.
    if (loop_flags == kD64WindowLoopFlags) {
      return launch_attention_fwd_persistent<Traits, kD64WindowLoopFlags>(p, maps, num_m_blocks, stream);
    }
  }
  if constexpr (has_experiment_variants<Traits>()) {
    // A forced value of the 128-row tiles' variants that the 192-row or d96 tile does not list (a whole process
    // under FLASHSEEK_EXPERIMENT=1539, tests/gpu/test_tma_producer.py) leaves that tile on its default, as before it
    // had variants.
    const bool listed = experiment_lists<Traits::kD, Traits::kBlockM>(loop_flags);
    if (loop_flags >= 0 && loop_flags != kDefaultLoopFlags && listed) {
      return launch_attention_fwd_experiment<Traits>(p, maps, num_m_blocks, loop_flags, stream);
    }
  }
  if constexpr (kClusterCombine<Traits>) {
    // cluster-combine (run() sets cluster_splits only on these tiles, with loop_flags -1): the one-tile kernel whose
    // splits combine in their cluster, no combine kernel after it (launch_forward.cu).
    if (p.cluster_splits > 1) {
      return launch_attention_fwd_one_tile<Traits, kDefaultLoopFlags | kLoopClusterCombine>(p, maps, num_m_blocks,
                                                                                             stream);
    }
  }
  return launch_attention_fwd_variant<Traits, kDefaultLoopFlags>(p, maps, num_m_blocks, stream);
}

}  // namespace flashseek::sm90

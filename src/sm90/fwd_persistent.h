// The persistent forward kernel (experiment kLoopPersistent, docs/perf-log.md entries 14-15): one CTA per SM takes
// the tiles the one-CTA-per-tile grid would launch from a global counter (dynamic scheduling, heaviest first). The stage
// ring, its barriers and their phases carry over from tile to tile, so the producer streams the next tile's Q
// and first K/V blocks while the consumers finish this tile's last P*V and epilogue: the consumers release Q
// (q_empty) after their last QK^T, and stage O in a tile of their own instead of in Q. A short tile (a few key
// blocks: sliding windows, 512-token sequences) then no longer pays barrier init, the first loads' latency and
// the CTA switch with nothing to overlap them.
// Built for the 16-bit two- and three-consumer tiles and the 64-row decode tiles (one consumer warpgroup, one or two
// CTAs per SM: decode-persist, entry 83) with the TMA producer only; where TMA cannot stream every tile
// (kv_tma_rows 0, a paged cache with left padding) the launcher runs the one-CTA-per-tile kernel.
#pragma once

#include <atomic>

#include "fwd_kernel.h"
#include "launch.h"

namespace flashseek::sm90 {

// Per-launch tile counters of the dynamic scheduler: slot i holds (next tile - gridDim.x, CTAs done). Zero at
// module load; the last CTA of a launch puts its slot back to zero, and the host gives launches in flight
// different slots (a ring), so no memset and no extra launch per call.
constexpr int kTileCounterSlots = 1024;
__device__ int g_tile_counters[2 * kTileCounterSlots];

template <class Traits, int kLoopFlags>
__global__ void __launch_bounds__(Traits::kThreads, Traits::kCtasPerSm)
    attention_fwd_persistent_kernel(const __grid_constant__ FwdParams p, const __grid_constant__ KvTensorMaps maps,
                                    int grid_m, int counter_slot) {
  constexpr bool kOneConsumer = Traits::kConsumerWarpgroups == 1;
  static_assert((!Traits::kFp8Kv || Traits::kFp8Native) &&
                    (((Traits::kConsumerWarpgroups == 2 || Traits::kConsumerWarpgroups == 3) && Traits::kCtasPerSm == 1) ||
                     (kOneConsumer && Traits::kPersistORegs && Traits::kKeySplit == 1)),
                "the persistent kernel is built for the 16-bit and native e4m3 two- and three-consumer tiles and "
                "the decode tiles");
  static_assert((kLoopFlags & kStageSkipFlags) == 0, "no stage-skip variant of the persistent kernel");
  static_assert(Traits::kPersistSmemBytes <= 232448, "the O staging tile does not fit");
  static_assert(Traits::kCtasPerSm * (Traits::kPersistSmemBytes + 1024) <= 233472, "the CTAs per SM do not fit");
  constexpr int kWarps = Traits::kThreads / 32;
  extern __shared__ __align__(1024) uint8_t smem[];
  if (p.pdl & 1) pdl_wait();  // as the one-tile kernel (fwd_kernel.h)
  if (p.pdl & 2) pdl_trigger();
  const uint32_t base = smem_addr(smem);
  if (threadIdx.x == 0) {
    if ((base & 1023) != 0) __trap();
    mbarrier_init(base + Traits::q_full_barrier(), 128);
    mbarrier_init(base + Traits::kPersistQEmptyBarrier, 4 * Traits::kConsumerWarpgroups);
    for (int s = 0; s < Traits::kStages; ++s) {
      mbarrier_init(base + Traits::k_full_barrier(s), 128);
      mbarrier_init(base + Traits::v_full_barrier(s), 128);
      mbarrier_init(base + Traits::k_empty_barrier(s), 4 * Traits::kConsumerWarpgroups);
      mbarrier_init(base + Traits::v_empty_barrier(s), 4 * Traits::kConsumerWarpgroups);
    }
    if constexpr (Traits::kFp8Native) {
      for (int r = 0; r < Traits::kRawStages; ++r) {
        mbarrier_init(base + Traits::v_raw_full_barrier(r), 1);   // TMA: one arrival with the transaction count
        mbarrier_init(base + Traits::v_raw_empty_barrier(r), 4);  // one arrival per producer warp
      }
    }
    for (int slot = 0; slot < 2; ++slot) {
      mbarrier_init(base + Traits::kPersistTileFullBarrier + 8 * slot, 1);
      mbarrier_init(base + Traits::kPersistTileEmptyBarrier + 8 * slot, kWarps);
    }
    mbarrier_init_fence();
  }
  __syncthreads();

  // Tiles in the order the counter hands them out: KV heads (and splits) fastest, then m blocks from the
  // heaviest (a causal sequence's last; the flat grid's resolve already reverses), then sequences; so every
  // head's heaviest tiles start first (longest-first dealing, which a static round robin lacks: entry 14).
  // Measured against m blocks fastest (the one-tile grid's order, K/V of one head in L2; entry 18): that order
  // fixed a long non-causal MHA batch (+12% -> 0%) but gave back the wins on q1k prefills and mixed batches
  // (-10% -> 0..+12%); the planner keeps long tiles on the one-tile kernel instead (LaunchPlan::persistent).
  const int grid_y = p.num_heads_kv * p.num_splits;
  const int grid_z = p.flat_tiles ? 1 : p.batch;
  constexpr bool kTileFastDiv = (kLoopFlags & kLoopTileFastDiv) != 0;
  const int total = grid_m * grid_y * grid_z;
  int* counter = g_tile_counters + 2 * counter_slot;
  const int lane = threadIdx.x % 32;
  // The fetching thread (producer warp 2, lane 0: warps 0 and 1 issue the TMA copies and must not wait for an
  // atomic; under the tma-warps=4 experiment warp 2 issues too) publishes tile k in slot k & 1 once every warp has
  // read the slot's previous tile.
  constexpr int kFetcher = 64;
  auto publish = [&](int k) {
    const int slot = k & 1;
    mbarrier_wait(base + Traits::kPersistTileEmptyBarrier + 8 * slot, ((k >> 1) & 1) ^ 1);
    const int t = k == 0 ? static_cast<int>(blockIdx.x) : static_cast<int>(gridDim.x) + atomicAdd(counter, 1);
    asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(base + Traits::kPersistTileSlots + 4 * slot), "r"(t) : "memory");
    mbarrier_arrive(base + Traits::kPersistTileFullBarrier + 8 * slot);
  };
  // Lane 0 alone reads the slot and releases it for its warp (its own read before its own arrival); the warp takes
  // the value by shuffle. Every lane reading before lane 0's arrival is ordered too (the __syncwarp), but racecheck
  // cannot see the other lanes' reads through the warp barrier and flagged each reuse of a slot (scripts/diag/
  // racecheck_tile_slots.cu: 225 hazards in that form, none in this one; perf-log entry 100). The __syncwarp stays:
  // without it ptxas spilled the e4m3 d64 persistent kernel's consumers (0 -> 118 LDL/STL).
  auto read_tile = [&](int k) {
    const int slot = k & 1;
    mbarrier_wait(base + Traits::kPersistTileFullBarrier + 8 * slot, (k >> 1) & 1);
    int t = 0;
    if (lane == 0) {
      asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(t) : "r"(base + Traits::kPersistTileSlots + 4 * slot) : "memory");
    }
    __syncwarp();
    if (lane == 0) mbarrier_arrive(base + Traits::kPersistTileEmptyBarrier + 8 * slot);
    // Every tile field derives from t: broadcast it so that ptxas keeps them warp-uniform (entry 19).
    return __shfl_sync(0xffffffffu, t, 0);
  };
  if (threadIdx.x == kFetcher) publish(0);

  // Both roles walk the same tiles and count the same key blocks (pipe) and Q tiles (q_count), each in its own
  // loop: ptxas keeps a setmaxnreg only where the code after it is not shared with the other role.
  auto for_each_tile = [&](auto&& body) {
    int pipe = 0, q_count = 0;
    for (int k = 0;; ++k) {
      const int t = read_tile(k);
      if (t >= total) break;
      int by, rest, m_index, bz;
      if constexpr (kTileFastDiv) {  // ~25 instructions per runtime division otherwise, four of them per tile
        rest = p.tile_y_div.div(t);
        by = t - rest * grid_y;
        bz = p.tile_m_div.div(rest);
        m_index = rest - bz * grid_m;
      } else {
        by = t % grid_y;
        rest = t / grid_y;
        m_index = rest % grid_m;
        bz = rest / grid_m;
      }
      const int bx = p.flat_tiles ? m_index : grid_m - 1 - m_index;
      TileWork w{};
      const bool valid = w.resolve<Traits, kTileFastDiv, false>(p, bx, by, bz, grid_m);
      const int n_iters = valid ? w.n_end - w.n_begin : 0;
      if (valid) body(w, n_iters, pipe, q_count);
      if (threadIdx.x == kFetcher) publish(k + 1);
      if (n_iters > 0) {
        pipe += n_iters;
        ++q_count;
      }
    }
  };

  // The tile loop's state (schedule, sequence, mask) costs the producer registers the one-tile kernel does not
  // need: 56 for it, 224 for the consumers (128 x 56 + 256 x 224 = 64512). Three consumers (the 192-row d64 tile,
  // 512 threads at 128 registers) keep the one-tile kernel's split, 32 + 3 x 160 (at 152 its consumers spilled).
  // The decode tiles: one CTA a SM keeps the one-tile kernel's 256 threads at up to 255 registers each (no
  // setmaxnreg); two split the 128 a thread holds at launch 56 / 200 (the one-tile 40 / 216 spilled the d64
  // producer's tile state).
  constexpr bool kThreeConsumers = Traits::kConsumerWarpgroups == 3;
  constexpr bool kReallocate = !kOneConsumer || Traits::kReallocateRegisters;
  constexpr int kProducerRegs = kThreeConsumers ? 32 : 56;
  constexpr int kConsumerRegs = kOneConsumer ? 200 : kThreeConsumers ? 160 : 224;
  static_assert(!kReallocate ||
                    128 * kProducerRegs + 128 * Traits::kConsumerWarpgroups * kConsumerRegs <=
                        65536 / Traits::kCtasPerSm,
                "register split");
  const int warpgroup = threadIdx.x / 128;
  const int tid = threadIdx.x % 128;
  if (warpgroup == 0) {
    if constexpr (kReallocate) warpgroup_reg_dealloc<kProducerRegs>();
    for_each_tile([&](const TileWork& w, int n_iters, int pipe, int q_count) {
      if (n_iters > 0) {
        if constexpr (Traits::kFp8Native) {
          ProducerFp8Native<Traits>::template run<kLoopFlags, true>(p, maps, w.seq, w.b, w.kv_head, w.row_begin,
                                                                    w.n_begin, w.n_end, smem, tid, pipe, q_count);
        } else {
          ProducerTma<Traits>::template run<true, (kLoopFlags & kLoopQTma) != 0>(
              p, maps, w.seq, w.b, w.kv_head, w.row_begin, w.n_begin, w.n_end, smem, tid, pipe, q_count);
        }
      }
    });
    // Copies still in flight complete on their own; waiting keeps a retiring warp from leaving them behind.
    asm volatile("cp.async.wait_all;\n" ::: "memory");
    if (threadIdx.x == kFetcher) {
      // This CTA fetches no more tiles: the last one out puts the launch's counters back to zero.
      __threadfence();
      if (atomicAdd(counter + 1, 1) == static_cast<int>(gridDim.x) - 1) {
        atomicExch(counter, 0);
        atomicExch(counter + 1, 0);
      }
    }
  } else {
    if constexpr (kReallocate) warpgroup_reg_alloc<kConsumerRegs>();
    for_each_tile([&](const TileWork& w, int, int pipe, int q_count) {
      Consumer<Traits>::template run<kLoopFlags>(p, w.seq, w.mask, w.b, w.kv_head, w.row_begin, w.n_begin, w.n_end,
                                                 w.split, smem,
                                                 kOneConsumer ? 0 : __shfl_sync(0xffffffffu, warpgroup - 1, 0), tid,
                                                 pipe, q_count & 1);
    });
  }
}

template <class Traits, int kLoopFlags>
cudaError_t launch_attention_fwd_persistent(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks,
                                            cudaStream_t stream) {
  static_assert((kLoopFlags & ~(kLoopPersistent | kLoopCarriedStage | kLoopTileFastDiv | kLoopQTma | kLoopLeanTail |
                                 kLoopTurns3)) ==
                    kLoopBaseFlags,
                "the persistent value's base");
  // The one-tile fallback (reached when the persistent value is forced, FLASHSEEK_EXPERIMENT=3587; by default
  // run.cpp sends these calls to the one-tile kernel itself) goes through the tile's launcher in inst/, declared
  // extern in fwd_experiments.cu, so that the default kernel exists in one translation unit only. Instantiated here
  // too, it was a second device function whose shared-memory limit the once-per-process attribute call of the
  // other missed: "invalid argument" in the evaluator (entry 18).
  auto one_tile = [&] { return launch_attention_fwd<Traits>(p, maps, num_m_blocks, -1, stream); };
  const long long total = one_tile_grid_ctas(p, num_m_blocks);
  if (total <= 0) return cudaSuccess;
  const int num_sms = device_sm_count();
  if (!persistent_takes(p, total, num_sms)) return one_tile();
  auto kernel = attention_fwd_persistent_kernel<Traits, kLoopFlags>;
  static PerDevice<cudaError_t> attr_slots;  // per device, as the one-tile launcher's
  const cudaError_t attr_status = once_per_device(attr_slots, [&] {
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Traits::kPersistSmemBytes);
    // Two CTAs per SM need the whole unified L1 / shared array as shared memory (as the one-tile launcher).
    if (e == cudaSuccess && Traits::kCtasPerSm > 1) {
      e = cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared);
    }
    return e;
  });
  if (attr_status != cudaSuccess) return attr_status;
  static std::atomic<unsigned> launches{0};
  const int slot = static_cast<int>(launches.fetch_add(1, std::memory_order_relaxed) % kTileCounterSlots);
  const long long slots = static_cast<long long>(num_sms) * Traits::kCtasPerSm;
  const int grid = static_cast<int>(total < slots ? total : slots);
  if constexpr ((kLoopFlags & kLoopTileFastDiv) != 0) {
    FwdParams with_divisors = p;
    with_divisors.tile_y_div = FastDiv::make(static_cast<uint32_t>(p.num_heads_kv * p.num_splits));
    with_divisors.tile_m_div = FastDiv::make(static_cast<uint32_t>(num_m_blocks));
    with_divisors.heads_kv_div = FastDiv::make(static_cast<uint32_t>(p.num_heads_kv));
    return launch_kernel(kernel, dim3(grid), Traits::kThreads, Traits::kPersistSmemBytes, stream, (p.pdl & 1) != 0,
                         with_divisors, maps, num_m_blocks, slot);
  } else {
    return launch_kernel(kernel, dim3(grid), Traits::kThreads, Traits::kPersistSmemBytes, stream, (p.pdl & 1) != 0,
                         p, maps, num_m_blocks, slot);
  }
}

}  // namespace flashseek::sm90

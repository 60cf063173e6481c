// A consumer warpgroup: 64 packed query rows against the CTA's key blocks.
//
// Per key block n (visited last to first, so the blocks that need masking come first):
//   S = Q K_n^T (wgmma, both operands in shared memory), soft cap, mask, online softmax, P = bf16(S),
//   O += P V_n (wgmma, P from registers).
// The QK^T of block n is issued together with the P*V of block n+1, so the tensor cores work on one while
// the softmax of the other runs (the rescale of O waits for that P*V to retire).
//
// Loop variants (kFlags, LoopFlags in kernel_traits.h; selectable at run time for the prefill tiles):
//   kLoopOverlap: ptxas schedules a wgmma wait (WARPGROUP.DEPBAR) as early as its basic block allows, so the
//     wait for the in-flight P*V landed at the top of the block that holds the softmax (right after the
//     mask branch) and the exponentials ran after P*V had retired: no overlap inside a warpgroup. Ending the
//     block after the softmax (with the wait for this block's V, which the next P*V needs anyway: a
//     try-wait loop, i.e. a branch) keeps the wait below the exponentials.
//     scripts/sass_overlap.py counts the MUFU.EX2 between the P*V issue and its wait (0 -> 66 for d128).
//   kLoopSkipRescale: skip the O rescale (kDv / 2 FMULs per thread) when no row of the warp changed its max
//     (every correction is exactly 1, so the result is bit-identical).
//   kLoopDescPrecomp and kLoopTreeMax: exact rewrites of the descriptor arithmetic and of the row max.
//   Experiment bits (bf16 d128 block_m 128 only; docs/perf-log.md entry 9): kLoopSkipSoftmax, kLoopSkipPv,
//     kLoopSkipQk, kLoopNoPingpong, kLoopOneConsumer leave a stage out (timing only, wrong results).
#pragma once

#include "epilogue.h"
#include "fwd_params.h"
#include "kernel_traits.h"
#include "mask.h"
#include "prims/convert.h"
#include "prims/fp8_fragments.h"
#include "prims/mbarrier.h"
#include "prims/wgmma.h"
#include "producer_tma.h"
#include "seqlen.h"
#include "softmax.h"

namespace flashseek::sm90 {

template <class Traits>
struct Consumer {
  using Element = typename Traits::Element;
  using Mma = typename Traits::MmaElement;  // the operand type of the GEMMs (e4m3 for native fp8 tiles)
  using PvMma = typename Traits::PvMmaElement;  // P*V's (fp16 on the native kF16Pv tiles)
  static constexpr bool kNative = Traits::kFp8Native;
  // P*V on e4m3 operands (P packed per thread, V^T); false for 16-bit tiles and the native kF16Pv ones.
  static constexpr bool kPvE4m3 = Traits::kPvE4m3;
  static constexpr int kN = Traits::kBlockN;
  static constexpr int kSRegs = kN / 2;
  static constexpr bool kSplitP = Traits::kSplitP;
  // Native e4m3: kN / 8 words per e4m3 term of P (two terms with kSplitP: P_hi first, then P_lo).
  static constexpr int kPTermRegs = kPvE4m3 ? kN / 8 : kN / 4;
  static constexpr int kPRegs = kSplitP ? 2 * kPTermRegs : kPTermRegs;
  static constexpr int kORegs = Traits::kDv / 2;
  // A wgmma step consumes 32 bytes of the K dimension: 16 16-bit or 32 e4m3 values.
  static constexpr int kQkSteps = Traits::kD * Traits::kElementBytes / 32;
  static constexpr int kPvSteps = kPvE4m3 ? kN / 32 : kN / 16;
  // P*V step kk's B operand: 16-bit V is MN-major (16 key rows per step); native V^T is K-major (32 key bytes per
  // step, four to a 128-byte row, then the next column block).
  // Native V^T rows are the block's keys: 128 bytes (block_n 128), or 64 on the 64-byte swizzle (d256's block_n 64).
  static constexpr int kPvStepsPerRow = Traits::VTile::kRowBytes / 32;
  __host__ __device__ static constexpr uint32_t pv_step_offset(int kk) {
    return kPvE4m3 ? (kk / kPvStepsPerRow) * Traits::VTile::kColumnBlockBytes + (kk % kPvStepsPerRow) * 32
                   : kk * 16 * Traits::VTile::kRowBytes;
  }
  static constexpr uint32_t kPvLeadingBytes = kPvE4m3 ? 16 : Traits::VTile::kColumnBlockBytes;
  // P*V's B operand at `addr`: V (MN-major, 128-byte swizzle) or V^T (K-major, its tile's swizzle).
  __device__ __forceinline__ static uint64_t pv_desc(uint32_t addr) {
    if constexpr (Traits::VTile::kSwizzleBytes == 64) {
      return make_smem_desc_sw64(addr, kPvLeadingBytes, 512);
    } else {
      return make_smem_desc_sw128(addr, kPvLeadingBytes, 1024);
    }
  }
  // QK^T steps per row of Q and K: 4 on 128-byte rows, 2 on the 64-byte rows of the d64 native tiles.
  static constexpr int kQkStepsPerRow = Traits::QTile::kRowBytes / 32;
  static_assert(Traits::QTile::kSwizzleBytes == Traits::KTile::kSwizzleBytes, "Q and K share a layout");
  // A K-major Q or K operand at `addr`: the tile's swizzle, its 8-row atoms as the stride.
  __device__ __forceinline__ static uint64_t qk_desc(uint32_t addr) {
    if constexpr (Traits::QTile::kSwizzleBytes == 64) {
      return make_smem_desc_sw64(addr, 16, 512);
    } else {
      return make_smem_desc_sw128(addr, 16, 1024);
    }
  }
  // Byte offset of QK^T step ks in a Q or K tile.
  template <class Tile>
  __host__ __device__ static constexpr uint32_t qk_step_offset(int ks) {
    return (ks / kQkStepsPerRow) * Tile::kColumnBlockBytes + (ks % kQkStepsPerRow) * 32;
  }

  // S = Q K^T over the head dim, 32 bytes of it per wgmma; the first step overwrites S.
  __device__ __forceinline__ static void qk_gemm(float (&s)[kSRegs], uint32_t smem_base, int stage, int wg) {
    const uint32_t q_rows = smem_base + Traits::kQOffset + wg * 64 * Traits::QTile::kRowBytes;
    const uint32_t k_tile = smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes;
#pragma unroll
    for (int ks = 0; ks < kQkSteps; ++ks) {
      const uint64_t desc_a = qk_desc(q_rows + qk_step_offset<typename Traits::QTile>(ks));
      const uint64_t desc_b = qk_desc(k_tile + qk_step_offset<typename Traits::KTile>(ks));
      WgmmaSS<Mma, kN>::run(s, desc_a, desc_b, ks > 0 ? 1 : 0);
    }
  }

  // The same two GEMMs from precomputed descriptor bases (kLoopDescPrecomp). A descriptor's low word holds the
  // start address >> 4 in bits 0-13 and the leading offset in bits 16-29; shared addresses are below 2^18, so
  // desc(addr + off) = desc(addr) + off / 16 with no carry out of the field: one 32-bit add per wgmma operand
  // instead of the shift/mask/or sequence make_smem_desc_sw128 costs when the address is not a constant.
  struct DescBases {
    // qk_hi / v_hi: stride offset and swizzle of Q and K / of V (the same but on the d64 native tiles' 64-byte Q, K)
    uint32_t q_lo, k_lo, v_lo, qk_hi, v_hi;
  };
  __device__ __forceinline__ static DescBases make_desc_bases(uint32_t smem_base, int wg) {
    const uint64_t q = qk_desc(smem_base + Traits::kQOffset + wg * 64 * Traits::QTile::kRowBytes);
    const uint64_t k = qk_desc(smem_base + Traits::kKOffset);
    const uint64_t v = pv_desc(smem_base + Traits::kVOffset);
    return DescBases{static_cast<uint32_t>(q), static_cast<uint32_t>(k), static_cast<uint32_t>(v),
                     static_cast<uint32_t>(q >> 32), static_cast<uint32_t>(v >> 32)};
  }
  __device__ __forceinline__ static uint64_t desc_join(uint32_t lo, uint32_t hi) {
    uint64_t d;
    asm("mov.b64 %0, {%1, %2};\n" : "=l"(d) : "r"(lo), "r"(hi));
    return d;
  }
  __device__ __forceinline__ static void qk_gemm_pre(float (&s)[kSRegs], const DescBases& db, int stage) {
    const uint32_t k_lo = db.k_lo + stage * (Traits::KTile::kBytes >> 4);
#pragma unroll
    for (int ks = 0; ks < kQkSteps; ++ks) {
      const uint64_t desc_a = desc_join(db.q_lo + (qk_step_offset<typename Traits::QTile>(ks) >> 4), db.qk_hi);
      const uint64_t desc_b = desc_join(k_lo + (qk_step_offset<typename Traits::KTile>(ks) >> 4), db.qk_hi);
      WgmmaSS<Mma, kN>::run(s, desc_a, desc_b, ks > 0 ? 1 : 0);
    }
  }
  __device__ __forceinline__ static void pv_gemm_pre(float (&o)[kORegs], const uint32_t (&pf)[kPRegs],
                                                     const DescBases& db, int stage, bool accumulate) {
    const uint32_t v_lo = db.v_lo + stage * (Traits::VTile::kBytes >> 4);
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) {
      const uint64_t desc_b = desc_join(v_lo + (pv_step_offset(kk) >> 4), db.v_hi);
      pv_step(o, pf, kk, desc_b, kk > 0 || accumulate);
    }
  }

  // One key step of P*V: the wgmma of P's fragment kk (and, with kSplitP, of P_lo's into the same O).
  __device__ __forceinline__ static void pv_step(float (&o)[kORegs], const uint32_t (&pf)[kPRegs], int kk,
                                                 uint64_t desc_b, bool accumulate) {
    const uint32_t a[4] = {pf[4 * kk], pf[4 * kk + 1], pf[4 * kk + 2], pf[4 * kk + 3]};
    WgmmaRS<PvMma, Traits::kDv>::run(o, a, desc_b, accumulate ? 1 : 0);
    if constexpr (kSplitP) {
      const uint32_t lo[4] = {pf[kPTermRegs + 4 * kk], pf[kPTermRegs + 4 * kk + 1], pf[kPTermRegs + 4 * kk + 2],
                              pf[kPTermRegs + 4 * kk + 3]};
      WgmmaRS<PvMma, Traits::kDv>::run(o, lo, desc_b, 1);
    }
  }

  // O (+)= P V over the block's keys, 16 (32 for native e4m3) keys per wgmma.
  __device__ __forceinline__ static void pv_gemm(float (&o)[kORegs], const uint32_t (&pf)[kPRegs],
                                                 uint32_t smem_base, int stage, bool accumulate) {
    const uint32_t v_tile = smem_base + Traits::kVOffset + stage * Traits::VTile::kBytes;
#pragma unroll
    for (int kk = 0; kk < kPvSteps; ++kk) {
      const uint64_t desc_b = pv_desc(v_tile + pv_step_offset(kk));
      pv_step(o, pf, kk, desc_b, kk > 0 || accumulate);
    }
  }

  // 16-bit: accumulator element (row g or g+8, column 16kk + ...) pairs are exactly the A-operand fragment of
  // wgmma. Native e4m3: each thread packs its own values (prims/fp8_fragments.h; V^T's keys follow that order).
  // Native kF16Pv: the 16-bit pairs in fp16.
  __device__ __forceinline__ static void convert_p(const float (&s)[kSRegs], uint32_t (&pf)[kPRegs]) {
    using PairElement = std::conditional_t<Traits::kF16Pv, __half, Element>;
    if constexpr (kPvE4m3) {
#pragma unroll
      for (int kk = 0; kk < kN / 32; ++kk) {
        uint32_t a[4];
        if constexpr (kSplitP) {
          uint32_t lo[4];
          pack_p_e4m3_split(s, kk, a, lo);
#pragma unroll
          for (int i = 0; i < 4; ++i) pf[kPTermRegs + 4 * kk + i] = lo[i];
        } else {
          pack_p_e4m3(s, kk, a);
        }
#pragma unroll
        for (int i = 0; i < 4; ++i) pf[4 * kk + i] = a[i];
      }
    } else {
#pragma unroll
      for (int i = 0; i < kPRegs; ++i) pf[i] = pack2<PairElement>(s[2 * i], s[2 * i + 1]);
    }
  }

  __device__ __forceinline__ static void release(uint32_t barrier, int lane) {
    if (lane == 0) mbarrier_arrive(barrier);
  }

  // kLoopPersistent (fwd_persistent.h): `pipe` is the number of key blocks this CTA consumed in earlier tiles
  // (the stage ring continues across tiles) and `q_parity` the phase of this tile's Q; the warpgroup releases Q
  // (q_empty) after its last QK^T and stages O in its own tile. Without it both are 0.
  template <int kFlags>
  __device__ static void run(const FwdParams& p, const SequenceInfo& seq, const AttentionMask& mask, int b,
                             int kv_head, int row_begin, int n_begin, int n_end, int split, uint8_t* smem, int wg,
                             int tid, int pipe = 0, uint32_t q_parity = 0) {
    constexpr bool kPersistent = (kFlags & kLoopPersistent) != 0;
    // Broadcast from lane 0: a value that ptxas cannot prove warp-uniform (the persistent kernel's counts come from
    // shared memory) moves every stage address and descriptor derived from it out of the uniform datapath
    // (docs/perf-log.md entry 19: +11% instructions per block, the softmax no longer under P*V at d128).
    const int pipe0 = kPersistent ? __shfl_sync(0xffffffffu, pipe, 0) : 0;
    auto stage_of = [&](int it) { return (pipe0 + it) % Traits::kStages; };
    auto phase_of = [&](int it) { return static_cast<uint32_t>(((pipe0 + it) / Traits::kStages) & 1); };
    auto release_q = [&](uint32_t base_addr, int ln) {
      if constexpr (kPersistent) release(base_addr + Traits::kPersistQEmptyBarrier, ln);
    };
    const int warp = tid / 32;
    const int lane = tid % 32;
    const uint32_t base = smem_addr(smem);
    constexpr bool kSkipSoftmax = (kFlags & kLoopSkipSoftmax) != 0;
    constexpr bool kPingpong = Traits::kPingpong && (kFlags & (kLoopNoPingpong | kLoopOneConsumer)) == 0;
    // kLoopTurns3 (entry 81): the three warpgroups of a 192-row tile take turns too, 0 -> 1 -> 2 -> 0, each waiting
    // on its own named barrier for the previous one's arrival, as FA3's three-warpgroup d64 tile does. They run the
    // same blocks, so each takes my_iters + 1 turns.
    constexpr bool kTurns3 =
        (kFlags & kLoopTurns3) != 0 && Traits::kConsumerWarpgroups == 3 && Traits::kKeySplit == 1;
    constexpr bool kTreeMax = (kFlags & kLoopTreeMax) != 0;

    // Key-split tiles (Traits::kKeySplit > 1): warpgroups row_wg share 64 rows, each taking the key blocks
    // key_lane, key_lane + kKeySplit, ... of the CTA's; their partial results are merged before the epilogue.
    const int row_wg = Traits::kKeySplit == 1 ? wg : wg / Traits::kKeySplit;
    const int key_lane = Traits::kKeySplit == 1 ? 0 : wg % Traits::kKeySplit;
    // Rows g and g + 8 of this warp's 16, as packed rows and as query tokens.
    const int packed_row0 = row_begin + 64 * row_wg + 16 * warp + lane / 4;
    const int row_tok[2] = {p.qheads_div.div(packed_row0), p.qheads_div.div(packed_row0 + 8)};
    // Head-packed: the CTA head each row's query head belongs to (its stacked query heads are the group's heads' in
    // order, qheads_per_kvhead >> kv_head_pack_log2 each).
    [[maybe_unused]] int row_head[2] = {0, 0};
    if constexpr (Traits::kHeadPacked) {
      const int group = p.qheads_per_kvhead >> p.kv_head_pack_log2;
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        row_head[r] = (packed_row0 + 8 * r - row_tok[r] * p.qheads_per_kvhead) / group;
      }
    }

    float o[kORegs];
#pragma unroll
    for (int i = 0; i < kORegs; ++i) o[i] = 0.f;
    float s[kSRegs];
    uint32_t pf[kPRegs];
    if constexpr ((kFlags & kLoopSkipQk) != 0) {
#pragma unroll
      for (int i = 0; i < kSRegs; ++i) s[i] = 0.f;
    }
    // The loop's two GEMMs as the variant asks: left out, from descriptor bases, or as in the default.
    [[maybe_unused]] DescBases desc_bases{};
    if constexpr ((kFlags & kLoopDescPrecomp) != 0) desc_bases = make_desc_bases(base, row_wg);
    auto qk = [&](int stage) {
      if constexpr ((kFlags & kLoopSkipQk) != 0) {
      } else if constexpr ((kFlags & kLoopDescPrecomp) != 0) {
        qk_gemm_pre(s, desc_bases, stage);
      } else {
        qk_gemm(s, base, stage, row_wg);
      }
    };
    auto pv = [&](int stage, bool accumulate) {
      if constexpr ((kFlags & kLoopSkipPv) != 0) {
      } else if constexpr ((kFlags & kLoopDescPrecomp) != 0) {
        pv_gemm_pre(o, pf, desc_bases, stage, accumulate);
      } else {
        pv_gemm(o, pf, base, stage, accumulate);
      }
    };
    OnlineSoftmax<kN> softmax;
    softmax.init();
    // S is computed from the converted (not descaled) fp8 values: q_descale * k_descale of this (sequence, KV head)
    // joins the logit scale (inside the soft cap's argument with softcap), v_descale multiplies O at the end.
    float qk_descale = 1.f, v_descale = 1.f;
    if constexpr (Traits::kFp8Kv) {
      // Head-packed: the group's first head (run() packs only calls whose descales are the same for every head).
      const int descale_head = Traits::kHeadPacked ? kv_head << p.kv_head_pack_log2 : kv_head;
      qk_descale = p.q_descale.load(b, descale_head) * p.k_descale.load(b, descale_head);
      v_descale = p.v_descale.load(b, descale_head);
    }
    const float scale_log2 = p.softcap > 0.f ? p.score_scale_log2 : p.score_scale_log2 * qk_descale;
    const float softcap_scale = p.softcap > 0.f ? p.softmax_scale * qk_descale / p.softcap : 0.f;

    // kLoopTmaNoFence (entry 110): where the TMA producer runs (fwd_kernel.h's choice), only the block visited first
    // can come by cp.async (the partial one, producer_tma.h), so from the loop's third step on K(it) and V(it - 1)
    // came through the async proxy and need no proxy fence before the wgmma reads them.
    constexpr bool kTmaNoFence = (kFlags & kLoopTmaNoFence) != 0 && !Traits::kFp8Kv &&
                                 (kFlags & kLoopProducerNoCopy) == 0 && !Traits::kSerialPv;
    [[maybe_unused]] const bool tma_blocks = kTmaNoFence && ProducerTma<Traits>::usable(p, seq);
    // kLoopMaskRange (entry 109): the unmasked blocks' range once per tile, so a block's test is two compares.
    constexpr bool kMaskRange = (kFlags & kLoopMaskRange) != 0 && !Traits::kHeadPacked;
    int unmasked_lo = 0, unmasked_hi = 0;
    if constexpr (kMaskRange) mask.unmasked_blocks(kN, unmasked_lo, unmasked_hi);
    auto transform_scores = [&](int n) {
      if (p.softcap > 0.f) apply_softcap(s, softcap_scale, p.softcap);
      if constexpr (Traits::kHeadPacked) {
        mask.template apply_head_packed<kN>(s, n, row_tok, row_head, lane, p.kv_head_pack_log2,
                                            mask.block_needs_mask(n, keys_per_block<Traits>(p)));
      } else if (kMaskRange ? (n < unmasked_lo || n >= unmasked_hi) : mask.block_needs_mask(n, kN)) {
        mask.template apply<kN>(s, n, row_tok, lane);
      }
    };
    // Mask and online softmax of the block in s (kLoopSkipSoftmax: none, corrections 1).
    auto softmax_step = [&](int n, float (&correction)[2]) {
      if constexpr (kSkipSoftmax) {
        correction[0] = correction[1] = 1.f;
      } else {
        transform_scores(n);
        softmax.template update<kTreeMax, kNative ? 8 : 0>(s, scale_log2, correction);
      }
    };

    // Pingpong: the two consumer warpgroups take turns issuing GEMMs (issue points: the first QK^T, each loop
    // step, the last P*V), so that the tensor cores serve one while the other runs its softmax. Warpgroup 1
    // hands the first turn to warpgroup 0 and does not pass its last turn (nobody waits for it).
    // With kTurns3 the same over three: the last warpgroup hands the first turn to warpgroup 0 and keeps its last.
    auto take_turn = [&]() {
      if constexpr (kPingpong || kTurns3) {
        named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kMmaTurn0) + wg, 256);
      }
    };
    auto pass_turn = [&](bool last) {
      if constexpr (kPingpong) {
        if (!(last && wg == 1)) named_barrier_arrive(static_cast<uint32_t>(NamedBarrier::kMmaTurn0) + 1 - wg, 256);
      } else if constexpr (kTurns3) {
        if (!(last && wg == 2)) {
          named_barrier_arrive(static_cast<uint32_t>(NamedBarrier::kMmaTurn0) + (wg == 2 ? 0 : wg + 1), 256);
        }
      }
    };

    // This warpgroup's blocks: j-th of its own is the CTA's block key_of(j) in visiting order (j itself unless
    // key-split).
    const int n_iters = n_end - n_begin;
    auto key_of = [&](int j) { return Traits::kKeySplit == 1 ? j : key_lane + Traits::kKeySplit * j; };
    const int my_iters = Traits::kKeySplit == 1 ? n_iters
                         : n_iters > key_lane ? (n_iters - key_lane + Traits::kKeySplit - 1) / Traits::kKeySplit
                                              : 0;
    if (my_iters > 0) {
      if constexpr (kPingpong) {
        if (wg == 1) named_barrier_arrive(static_cast<uint32_t>(NamedBarrier::kMmaTurn0), 256);
      } else if constexpr (kTurns3) {
        if (wg == 2) named_barrier_arrive(static_cast<uint32_t>(NamedBarrier::kMmaTurn0), 256);
      }
      mbarrier_wait(base + Traits::q_full_barrier(), kPersistent ? q_parity : 0);
      mbarrier_wait(base + Traits::k_full_barrier(stage_of(key_of(0))), phase_of(key_of(0)));
      fence_proxy_async_shared();
      take_turn();
      wgmma_fence();
      qk(stage_of(key_of(0)));
      wgmma_commit_group();
      pass_turn(false);
      wgmma_wait_group<0>();
      fence_operands(s);
      release(base + Traits::k_empty_barrier(stage_of(key_of(0))), lane);
      if (my_iters == 1) release_q(base, lane);
      float correction[2];
      softmax_step(n_end - 1 - key_of(0), correction);
      convert_p(s, pf);

      // kLoopCarriedStage (entry 52): the stage and phase advance by a select per block instead of being derived
      // from the persistent kernel's runtime ring position (pipe0 + it) each time.
      constexpr bool kCarried = (kFlags & kLoopCarriedStage) != 0 && Traits::kKeySplit == 1;
      int carried_stage = stage_of(0);
      uint32_t carried_phase = phase_of(0);
      for (int it = 1; it < my_iters; ++it) {
        const int n = n_end - 1 - key_of(it);
        int stage, prev_stage;
        uint32_t phase, prev_phase;
        if constexpr (kCarried) {
          prev_stage = carried_stage;
          prev_phase = carried_phase;
          const bool wrap = carried_stage == Traits::kStages - 1;
          carried_stage = wrap ? 0 : carried_stage + 1;
          carried_phase ^= wrap ? 1u : 0u;
          stage = carried_stage;
          phase = carried_phase;
        } else {
          stage = stage_of(key_of(it));
          phase = phase_of(key_of(it));
          prev_stage = stage_of(key_of(it - 1));
          prev_phase = phase_of(key_of(it - 1));
        }

        auto rescale_o = [&](float (&corr)[2]) {
          if constexpr (kSkipSoftmax) {
          } else if constexpr ((kFlags & kLoopSkipRescale) != 0) {
            if (!__all_sync(0xffffffff, corr[0] == 1.f && corr[1] == 1.f)) scale_rows(o, corr);
          } else {
            scale_rows(o, corr);
          }
        };
        if constexpr (Traits::kSerialPv) {
          // P*V of the previous block retires before QK^T of this one writes S: S and P are never live at once.
          mbarrier_wait(base + Traits::v_full_barrier(prev_stage), prev_phase);
          fence_proxy_async_shared();
          take_turn();
          wgmma_fence();
          pv(prev_stage, it > 1);
          wgmma_commit_group();
          wgmma_wait_group<0>();
          fence_operands(o);
          release(base + Traits::v_empty_barrier(prev_stage), lane);
          mbarrier_wait(base + Traits::k_full_barrier(stage), phase);
          fence_proxy_async_shared();
          wgmma_fence();
          qk(stage);
          wgmma_commit_group();
          pass_turn(false);
          wgmma_wait_group<0>();
          fence_operands(s);
          release(base + Traits::k_empty_barrier(stage), lane);
          if (it == my_iters - 1) release_q(base, lane);
          softmax_step(n, correction);
          rescale_o(correction);
          convert_p(s, pf);
          continue;
        }
        mbarrier_wait(base + Traits::k_full_barrier(stage), phase);
        mbarrier_wait(base + Traits::v_full_barrier(prev_stage), prev_phase);
        // A block the producer wrote with cp.async (generic proxy) needs the fence before wgmma reads it; a TMA
        // block does not, but fencing only cp.async blocks measured no faster (entry 9: 2307 against 259; at d128,
        // where the loop has slack; kLoopTmaNoFence tries it again for d64, entry 110).
        if (!kTmaNoFence || !tma_blocks || it < 2) fence_proxy_async_shared();
        take_turn();
        wgmma_fence();
        qk(stage);
        wgmma_commit_group();
        pv(prev_stage, it > 1);
        wgmma_commit_group();
        pass_turn(false);

        wgmma_wait_group<1>();  // S is ready; P*V may still run
        fence_operands(s);
        release(base + Traits::k_empty_barrier(stage), lane);
        if (it == my_iters - 1) release_q(base, lane);
        softmax_step(n, correction);
        if constexpr ((kFlags & kLoopOverlap) != 0) {
          // Ends the basic block (see the header), so the P*V wait below cannot be hoisted above the softmax.
          // V of this block is the next P*V's operand (waited for there anyway); waiting for it holds no stage.
          mbarrier_wait(base + Traits::v_full_barrier(stage), phase);
        }

        wgmma_wait_group<0>();
        fence_operands(o);
        fence_operands(pf);
        release(base + Traits::v_empty_barrier(prev_stage), lane);
        rescale_o(correction);
        convert_p(s, pf);
      }

      const int last = my_iters - 1;
      const int stage = stage_of(key_of(last));
      mbarrier_wait(base + Traits::v_full_barrier(stage), phase_of(key_of(last)));
      fence_proxy_async_shared();
      take_turn();
      wgmma_fence();
      pv(stage, my_iters > 1);
      wgmma_commit_group();
      pass_turn(true);
      wgmma_wait_group<0>();
      fence_operands(o);
      release(base + Traits::v_empty_barrier(stage), lane);
    }

    softmax.reduce_sums();
    if constexpr (Traits::kKeySplit > 1) {
      if (!merge_key_split(softmax, o, scale_log2, smem, key_lane, tid)) return;
    }
    Epilogue<Traits>::template run<kPersistent, (kFlags & kLoopLeanTail) != 0>(
        p, seq, kv_head, row_begin, split, scale_log2, v_descale, softmax.row_max, softmax.row_sum, row_tok, o, smem,
        row_wg, tid);
  }

  // Key-split tiles, two warpgroups per 64 rows: key lane 1 hands its row maxima, sums and O (each thread its own
  // elements: both lanes hold the same rows and columns) to key lane 0 through the K stages, free once both have
  // retired their last GEMMs; lane 0 rescales both to the common maximum and adds them, then runs the epilogue.
  // Returns whether this warpgroup goes on to the epilogue.
  __device__ __forceinline__ static bool merge_key_split(OnlineSoftmax<kN>& softmax, float (&o)[kORegs],
                                                         float scale_log2, uint8_t* smem, int key_lane, int tid) {
    static_assert(Traits::kKeySplit == 2 && Traits::kBlockM == 64, "two warpgroups on one 64-row block");
    static_assert((4 + kORegs) * 128 * 4 <= Traits::kStages * Traits::KTile::kBytes, "the exchange fits K");
    float* xchg = reinterpret_cast<float*>(smem + Traits::kKOffset);
    // Both warpgroups have retired their GEMMs, so no wgmma reads the K stages any more; the last TMA writes into
    // them completed before those GEMMs.
    named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kKeySplitMerge), 256);
    if (key_lane == 1) {
      fence_proxy_async_shared();
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        xchg[r * 128 + tid] = softmax.row_max[r];
        xchg[(2 + r) * 128 + tid] = softmax.row_sum[r];
      }
#pragma unroll
      for (int i = 0; i < kORegs; ++i) xchg[(4 + i) * 128 + tid] = o[i];
    }
    named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kKeySplitMerge), 256);
    if (key_lane == 1) return false;
    float mine[2], theirs[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float m_other = xchg[r * 128 + tid];
      const float m = max_propagate_nan(softmax.row_max[r], m_other);
      // A lane that saw no key of a row has max -inf and sum 0: its factor is 0 (never (-inf) - (-inf)).
      mine[r] = softmax.row_max[r] == -INFINITY ? 0.f : fast_exp2((softmax.row_max[r] - m) * scale_log2);
      theirs[r] = m_other == -INFINITY ? 0.f : fast_exp2((m_other - m) * scale_log2);
      softmax.row_sum[r] = softmax.row_sum[r] * mine[r] + xchg[(2 + r) * 128 + tid] * theirs[r];
      softmax.row_max[r] = m;
    }
#pragma unroll
    for (int j = 0; j < kORegs / 4; ++j) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int i = 4 * j + e;
        const int r = (e >> 1) & 1;  // accumulator element 4 j + e is row g (e < 2) or g + 8
        o[i] = o[i] * mine[r] + xchg[(4 + i) * 128 + tid] * theirs[r];
      }
    }
    return true;
  }
};

}  // namespace flashseek::sm90

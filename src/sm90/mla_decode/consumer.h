// The two consumer warpgroups of the MLA decode kernel, over the same 64 packed rows.
//
// Scores (warpgroup 1), per key block n (last to first):
//   S = Q' K'^T over 576 columns (36 wgmma k-steps), mask, online softmax, P = bf16(S);
//   hand P and the row corrections to Values; O[:, 0:256] = O * correction + P V[:, 0:256].
// Values (warpgroup 2): takes P and the corrections, O[:, 256:512] = O * correction + P V[:, 256:512].
// S is computed once (not per consumer): a 64-key block costs 4.7 MFLOP of QK^T against 4.2 MFLOP of P V and
// 74 KB of loads, so doubling the QK^T would bring the tensor time per block close to its memory time.
// After the last block Scores hands over the final row factors (1 / row sum) the same way.
#pragma once

#include "../fwd_params.h"
#include "../mask.h"
#include "../prims/convert.h"
#include "../prims/mbarrier.h"
#include "../prims/wgmma.h"
#include "../seqlen.h"
#include "../softmax.h"
#include "epilogue.h"
#include "traits.h"

namespace flashseek::sm90::mla {

// The exchange buffer between the consumers: thread t's 16 P words at uint4 slots t, 128 + t, 256 + t, 384 + t
// (16 consecutive bytes per thread: conflict-free), its two row factors at float2 slot t.
template <class Traits>
struct Exchange {
  static constexpr int kPWords = Traits::kPWords;
  uint4* p;
  float2* factors;

  __device__ __forceinline__ static Exchange at(uint8_t* smem) {
    return {reinterpret_cast<uint4*>(smem + Traits::kPOffset), reinterpret_cast<float2*>(smem + Traits::kCorrOffset)};
  }
  __device__ __forceinline__ void put_p(const uint32_t (&pf)[kPWords], int tid) const {
#pragma unroll
    for (int j = 0; j < kPWords / 4; ++j) p[j * 128 + tid] = make_uint4(pf[4 * j], pf[4 * j + 1], pf[4 * j + 2], pf[4 * j + 3]);
  }
  __device__ __forceinline__ void get_p(uint32_t (&pf)[kPWords], int tid) const {
#pragma unroll
    for (int j = 0; j < kPWords / 4; ++j) {
      const uint4 w = p[j * 128 + tid];
      pf[4 * j] = w.x;
      pf[4 * j + 1] = w.y;
      pf[4 * j + 2] = w.z;
      pf[4 * j + 3] = w.w;
    }
  }
};


template <class Traits>
struct Consumer {
  using Element = typename Traits::Element;
  static constexpr int kN = Traits::kBlockN;
  static constexpr int kSRegs = kN / 2;
  static constexpr int kPRegs = kN / 4;
  static constexpr int kORegs = Traits::kDvHalf / 2;

  // S = Q' K'^T over the 576 columns, 16 per wgmma; the first step overwrites S.
  __device__ __forceinline__ static void qk_gemm(float (&s)[kSRegs], uint32_t base, int stage) {
    const uint32_t q_tile = base + Traits::kQOffset;
    const uint32_t k_tile = base + Traits::stage_offset(stage);
#pragma unroll
    for (int ks = 0; ks < Traits::kDqk / 16; ++ks) {
      const uint32_t in_row = (ks % 4) * 32;
      const uint64_t desc_a =
          make_smem_desc_sw128(q_tile + (ks / 4) * Traits::QTile::kColumnBlockBytes + in_row, 16, 1024);
      const uint64_t desc_b =
          make_smem_desc_sw128(k_tile + (ks / 4) * Traits::RowTile::kColumnBlockBytes + in_row, 16, 1024);
      WgmmaSS<Element, kN>::run(s, desc_a, desc_b, ks > 0 ? 1 : 0);
    }
  }

  // O (+)= P V[:, half * 256 + (0..255)] over the block's keys, 16 keys per wgmma (O starts at zero).
  __device__ __forceinline__ static void pv_gemm(float (&o)[kORegs], const uint32_t (&pf)[kPRegs], uint32_t base,
                                                 int stage, int half) {
    const uint32_t v_tile = base + Traits::stage_offset(stage) +
                            half * (Traits::kDvHalf / 64) * Traits::RowTile::kColumnBlockBytes;
#pragma unroll
    for (int kk = 0; kk < kN / 16; ++kk) {
      const uint64_t desc_b = make_smem_desc_sw128(v_tile + kk * 16 * Traits::RowTile::kRowBytes,
                                                   Traits::RowTile::kColumnBlockBytes, 1024);
      const uint32_t a[4] = {pf[4 * kk], pf[4 * kk + 1], pf[4 * kk + 2], pf[4 * kk + 3]};
      WgmmaRS<Element, Traits::kDvHalf>::run(o, a, desc_b, 1);
    }
  }

  __device__ __forceinline__ static void release(uint32_t barrier, int lane) {
    if (lane == 0) mbarrier_arrive(barrier);
  }

  __device__ static void run_scores(const FwdParams& p, const SequenceInfo& seq, const AttentionMask& mask,
                                    int kv_head, int row_begin, int n_begin, int n_end, int split, uint8_t* smem,
                                    int tid) {
    const int warp = tid / 32;
    const int lane = tid % 32;
    const uint32_t base = smem_addr(smem);
    const Exchange<Traits> xchg = Exchange<Traits>::at(smem);
    const int packed_row0 = row_begin + 16 * warp + lane / 4;
    const int row_tok[2] = {p.qheads_div.div(packed_row0), p.qheads_div.div(packed_row0 + 8)};

    float o[kORegs];
#pragma unroll
    for (int i = 0; i < kORegs; ++i) o[i] = 0.f;
    float s[kSRegs];
    uint32_t pf[kPRegs];
    OnlineSoftmax<kN> softmax;
    softmax.init();
    const float scale_log2 = p.score_scale_log2;

    const int n_iters = n_end - n_begin;
    if (n_iters > 0) mbarrier_wait(base + Traits::q_full_barrier(), 0);
#pragma unroll 1
    for (int it = 0; it < n_iters; ++it) {
      const int n = n_end - 1 - it;
      const int stage = it % Traits::kStages;
      mbarrier_wait(base + Traits::full_barrier(stage), (it / Traits::kStages) & 1);
      fence_proxy_async_shared();
      wgmma_fence();
      qk_gemm(s, base, stage);
      wgmma_commit_group();
      wgmma_wait_group<0>();
      fence_operands(s);
      if (mask.block_needs_mask(n, kN)) mask.template apply<kN>(s, n, row_tok, lane);
      float correction[2];
      softmax.update(s, scale_log2, correction);
#pragma unroll
      for (int i = 0; i < kPRegs; ++i) pf[i] = pack2<Element>(s[2 * i], s[2 * i + 1]);

      // Values has read the previous block's P (completion it - 1 of p_empty).
      if (it > 0) mbarrier_wait(base + Traits::p_empty_barrier(), (it - 1) & 1);
      xchg.put_p(pf, tid);
      xchg.factors[tid] = make_float2(correction[0], correction[1]);
      mbarrier_arrive(base + Traits::p_full_barrier());

      scale_rows(o, correction);
      wgmma_fence();
      pv_gemm(o, pf, base, stage, 0);
      wgmma_commit_group();
      wgmma_wait_group<0>();
      fence_operands(o);
      fence_operands(pf);
      release(base + Traits::empty_barrier(stage), lane);
    }

    softmax.reduce_sums();
    float factor[2], lse[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float m_log2 = softmax.row_max[r] == -INFINITY ? -INFINITY : softmax.row_max[r] * scale_log2;
      const float sum = softmax.row_sum[r];
      // sum is 0 only when the row saw no key; a NaN sum (NaN in a real input) must reach out and LSE.
      factor[r] = sum == 0.f ? 0.f : 1.f / sum;
      lse[r] = sum == 0.f ? -INFINITY : (m_log2 + log2f(sum)) * kLn2;
    }
    if (n_iters > 0) mbarrier_wait(base + Traits::p_empty_barrier(), (n_iters - 1) & 1);
    xchg.factors[tid] = make_float2(factor[0], factor[1]);
    mbarrier_arrive(base + Traits::p_full_barrier());

    Epilogue<Traits>::store(p, seq, kv_head, row_begin, split, 0, factor, row_tok, o, smem, tid);
    Epilogue<Traits>::store_lse(p, seq, kv_head, row_begin, split, lse, row_tok, tid);
  }

  __device__ static void run_values(const FwdParams& p, const SequenceInfo& seq, int kv_head, int row_begin,
                                    int n_begin, int n_end, int split, uint8_t* smem, int tid) {
    const int warp = tid / 32;
    const int lane = tid % 32;
    const uint32_t base = smem_addr(smem);
    const Exchange<Traits> xchg = Exchange<Traits>::at(smem);
    const int packed_row0 = row_begin + 16 * warp + lane / 4;
    const int row_tok[2] = {p.qheads_div.div(packed_row0), p.qheads_div.div(packed_row0 + 8)};

    float o[kORegs];
#pragma unroll
    for (int i = 0; i < kORegs; ++i) o[i] = 0.f;
    uint32_t pf[kPRegs];

    const int n_iters = n_end - n_begin;
#pragma unroll 1
    for (int it = 0; it < n_iters; ++it) {
      const int stage = it % Traits::kStages;
      mbarrier_wait(base + Traits::p_full_barrier(), it & 1);
      // Scores saw the stage full; this warpgroup observes it too before its async-proxy reads.
      mbarrier_wait(base + Traits::full_barrier(stage), (it / Traits::kStages) & 1);
      fence_proxy_async_shared();
      xchg.get_p(pf, tid);
      const float2 c = xchg.factors[tid];
      mbarrier_arrive(base + Traits::p_empty_barrier());
      const float correction[2] = {c.x, c.y};
      scale_rows(o, correction);
      wgmma_fence();
      pv_gemm(o, pf, base, stage, 1);
      wgmma_commit_group();
      wgmma_wait_group<0>();
      fence_operands(o);
      fence_operands(pf);
      release(base + Traits::empty_barrier(stage), lane);
    }

    mbarrier_wait(base + Traits::p_full_barrier(), n_iters & 1);  // the final row factors
    const float2 f = xchg.factors[tid];
    const float factor[2] = {f.x, f.y};
    Epilogue<Traits>::store(p, seq, kv_head, row_begin, split, 1, factor, row_tok, o, smem, tid);
  }
};

}  // namespace flashseek::sm90::mla

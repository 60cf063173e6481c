// The consumer warpgroup of the keys-as-M decode tiles (TileShape::query_rows; decode tiles 5 and 6, d128 and d64,
// and 7, the key-split form): the CTA's packed query rows (query tokens x the KV head's query heads, at most kQ)
// are the GEMMs' N and the keys their M.
//
// A decode at GQA 8 has 8 query rows per KV head. On the 64-row tile (consumer.h) 7/8 of its QK^T, softmax and P*V
// are padding, and where a CTA streams alone (a caller's split bound, a handful of sequences) that chain sets the
// time, not the K/V stream (docs/perf-log.md entry 88). Here, per key block of kN keys:
//   S^T = K Q^T        kN / 64 chains of m64 nkQ wgmmas (A: the K stage as stored, B: the Q tile's first kQ rows)
//   online softmax over each column (a query row): maxima across the warpgroup's four warps through shared memory
//   P^T -> shared memory (16-bit, K-major: the B operand of the next GEMM)
//   O^T += V^T P^T     kDv / 64 chains (A: the V stage as stored, read MN-major)
// Each thread holds kQ / 2 values of a key tile instead of kN / 2, so the softmax is kN / kQ times smaller; the
// tensor work is kQ / 64 of the 64-row tile's.
// Order per block: the softmax of block n runs while P*V of the block before is in the tensor pipe (QK^T of block
// n was issued ahead of it); the rescale of O^T and the P^T store wait for that P*V.
// At the end O^T goes through shared memory into the 64-row accumulator layout, and the 64-row tile's epilogue
// stores it (LSE, sinks, split partials as there).
// e4m3 form (Traits::kFp8Native with kF16Pv, variant 208): S^T from the e4m3 K stage and Q (m64n8k32, both K-major),
// O^T from the producer's fp16 V (widened, exact) and an fp16 P^T carrying the 2^8 factor of the native tiles
// (Traits::kPScale, divided out in the epilogue); the descales as consumer.h applies them.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "consumer.h"
#include "epilogue.h"
#include "fwd_params.h"
#include "kernel_traits.h"
#include "mask.h"
#include "prims/cluster.h"
#include "prims/float_ops.h"
#include "prims/mbarrier.h"
#include "prims/wgmma.h"
#include "seqlen.h"
#include "sinks.h"
#include "softmax.h"
#include "split_weights.h"

namespace flashseek::sm90 {

// The tiles whose split calls may combine in a thread-block cluster (FwdParams::cluster_splits, entry 120): the
// 16-bit keys-as-M tiles, which stage their partials in shared memory before the epilogue.
template <class Traits>
inline constexpr bool kClusterCombine = Traits::kQueryRows > 0 && !Traits::kFp8Kv;

template <class Traits>
struct ConsumerKeysAsM {
  using Element = typename Traits::Element;
  using PvMma = typename Traits::PvMmaElement;  // P^T's and V's type: the 16-bit Element, or fp16 (native e4m3)
  static constexpr bool kNative = Traits::kFp8Native;
  // exp2's argument + 8 on the native tiles (their P scale, 2^8; kernel_traits.h kPScale)
  static constexpr int kExpBiasLog2 = kNative ? 8 : 0;
  static_assert(Traits::kPScale == (kNative ? 256.f : 1.f), "the exponent bias is the P scale");
  static constexpr int kQ = Traits::kQueryRows;
  static constexpr int kN = Traits::kBlockN;
  static constexpr int kKeyTiles = kN / 64;          // m64 tiles of S^T per block
  static constexpr int kDvTiles = Traits::kDv / 64;  // m64 tiles of O^T
  static constexpr int kAcc = kQ / 2;                // floats of one m64 x kQ accumulator per thread
  static constexpr int kCols = kQ / 4;               // query columns a thread holds
  static constexpr int kQkSteps = Traits::kD * Traits::kElementBytes / 32;  // 32 bytes of the head dim a step
  static constexpr int kPvSteps = kN / 16;
  static constexpr int kORegs = Traits::kDv / 2;
  static_assert((std::is_same_v<Element, __nv_bfloat16> && !Traits::kFp8Kv) || (kNative && Traits::kF16Pv),
                "bf16, or native e4m3 with fp16 P*V");
  static_assert(kQ == 8 || kQ == 16, "n8 or n16 wgmmas");
  static_assert(kN % 64 == 0, "whole m64 key tiles");
  static_assert(Traits::QTile::kSwizzleBytes == 128 && Traits::KTile::kSwizzleBytes == 128 &&
                    Traits::VTile::kSwizzleBytes == 128,
                "128-byte swizzled Q, K and V");
  // (A key-split form on two warpgroups, decode tile 7 of entry 92, ran slower than this one and was removed.)
  static_assert(!Traits::kHeadPacked && Traits::kConsumerWarpgroups == 1 && Traits::kKeySplit == 1,
                "one consumer warpgroup of one KV head");

  // Accumulator element i of an m64 x kQ tile: row 16 warp + lane / 4 + 8 ((i >> 1) & 1), column
  // 8 (i >> 2) + 2 (lane % 4) + (i & 1), which is this thread's column slot col_slot(i).
  __host__ __device__ static constexpr int col_slot(int i) { return 2 * (i >> 2) + (i & 1); }
  __device__ __forceinline__ static int column_of_slot(int slot, int lane) {
    return 8 * (slot >> 1) + 2 * (lane & 3) + (slot & 1);
  }

  // Adds a byte offset to a descriptor's start address (bits 0-13, address >> 4): shared addresses are below
  // 2^18, so no carry leaves the field.
  __device__ __forceinline__ static uint64_t desc_plus(uint64_t desc, uint32_t bytes) { return desc + (bytes >> 4); }

  // Byte offset of QK^T step ks (16 head-dim columns, 32 bytes) in a K-major 128-byte-swizzled tile.
  template <class Tile>
  __host__ __device__ static constexpr uint32_t k_step_offset(int ks) {
    return (ks / 4) * Tile::kColumnBlockBytes + (ks % 4) * 32;
  }

  // kCluster: combine the splits in the cluster (combine_in_cluster) instead of the epilogue's partial stores.
  template <bool kCluster = false>
  __device__ static void run(const FwdParams& p, const SequenceInfo& seq, const AttentionMask& mask, int b,
                             int kv_head, int row_begin, int n_begin, int n_end, int split, uint8_t* smem, int wg,
                             int tid) {
    const int warp = tid / 32;
    const int lane = tid % 32;
    const uint32_t base = smem_addr(smem);
    const uint32_t kBar = static_cast<uint32_t>(NamedBarrier::kConsumerWarpgroup0);
    const uint32_t pt_offset = Traits::kPtOffset;
    const uint32_t col_max_offset = Traits::kColMaxOffset;

    // This thread's query columns: their tokens and the keys each sees (mask.h's limits per row).
    int key_lo[kCols], key_hi[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      mask.visible_keys(p.qheads_div.div(row_begin + column_of_slot(c, lane)), key_lo[c], key_hi[c]);
    }

    const uint64_t q_desc = make_smem_desc_sw128(base + Traits::kQOffset, 16, 1024);
    const uint64_t k_desc = make_smem_desc_sw128(base + Traits::kKOffset, 16, 1024);
    const uint64_t v_desc = make_smem_desc_sw128(base + Traits::kVOffset, Traits::VTile::kColumnBlockBytes, 1024);
    const uint64_t pt_desc = make_smem_desc_sw128(base + pt_offset, 16, 1024);

    float st[kKeyTiles][kAcc];
    float ot[kDvTiles][kAcc];
#pragma unroll
    for (int t = 0; t < kDvTiles; ++t) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) ot[t][i] = 0.f;
    }
    float col_max[kCols], col_sum[kCols];
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      col_max[c] = -INFINITY;
      col_sum[c] = 0.f;
    }
    // e4m3: S is computed from the stored values; q_descale x k_descale of this (sequence, KV head) joins the logit
    // scale (inside the soft cap's argument with softcap), v_descale multiplies O in the epilogue (as consumer.h).
    float qk_descale = 1.f, v_descale = 1.f;
    if constexpr (Traits::kFp8Kv) {
      qk_descale = p.q_descale.load(b, kv_head) * p.k_descale.load(b, kv_head);
      v_descale = p.v_descale.load(b, kv_head);
    }
    const float scale_log2 = p.softcap > 0.f ? p.score_scale_log2 : p.score_scale_log2 * qk_descale;
    const float softcap_scale = p.softcap > 0.f ? p.softmax_scale * qk_descale / p.softcap : 0.f;

    auto qk = [&](int stage) {
#pragma unroll
      for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
        for (int ks = 0; ks < kQkSteps; ++ks) {
          const uint64_t a = desc_plus(k_desc, stage * Traits::KTile::kBytes + t * 64 * Traits::KTile::kRowBytes +
                                                   k_step_offset<typename Traits::KTile>(ks));
          const uint64_t bq = desc_plus(q_desc, k_step_offset<typename Traits::QTile>(ks));
          WgmmaSS<typename Traits::MmaElement, kQ>::run(st[t], a, bq, ks > 0 ? 1 : 0);
        }
      }
    };
    auto pv = [&](int stage) {
#pragma unroll
      for (int t = 0; t < kDvTiles; ++t) {
#pragma unroll
        for (int kk = 0; kk < kPvSteps; ++kk) {
          const uint64_t a = desc_plus(v_desc, stage * Traits::VTile::kBytes + t * Traits::VTile::kColumnBlockBytes +
                                                   kk * 16 * Traits::VTile::kRowBytes);
          const uint64_t bp = desc_plus(pt_desc, k_step_offset<typename Traits::PtTile>(kk));
          WgmmaSSTransA<PvMma, kQ>::run(ot[t], a, bp, 1);
        }
      }
    };
    auto fence_st = [&]() {
#pragma unroll
      for (int t = 0; t < kKeyTiles; ++t) fence_operands(st[t]);
    };
    auto fence_ot = [&]() {
#pragma unroll
      for (int t = 0; t < kDvTiles; ++t) fence_operands(ot[t]);
    };

    const int n_iters = n_end - n_begin;
    auto stage_of = [&](int it) { return it % Traits::kStages; };
    auto phase_of = [&](int it) { return static_cast<uint32_t>((it / Traits::kStages) & 1); };
    // Block it's step, S^T of the block complete in st; kHasNext: issue QK^T of block it + 1 ahead of this block's
    // P*V and wait for it, so that the next step's softmax runs under this P*V. A compile-time flag (the last
    // block's step is peeled), so that no wgmma sits in a branch ptxas cannot prove warp-uniform (C7518
    // serialized every wgmma when QK^T was issued under `if (it + 1 < n_iters)`).
    auto step = [&](int it, auto has_next) {
      constexpr bool kHasNext = decltype(has_next)::value;
      const int n = n_end - 1 - it;  // last block first, as consumer.h (the ones that need masking first)
      const int stage = stage_of(it);
      if (lane == 0) mbarrier_arrive(base + Traits::k_empty_barrier(stage));

      if (p.softcap > 0.f) {
#pragma unroll
        for (int t = 0; t < kKeyTiles; ++t) apply_softcap(st[t], softcap_scale, p.softcap);
      }
      if (mask.block_needs_mask(n, kN)) {
#pragma unroll
        for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
          for (int i = 0; i < kAcc; ++i) {
            const int key = n * kN + 64 * t + 16 * warp + lane / 4 + 8 * ((i >> 1) & 1);
            const int c = col_slot(i);
            if (key > key_hi[c] || key < key_lo[c]) st[t][i] = -INFINITY;
          }
        }
      }
      // Column maxima: this thread's keys, the warp's (lanes with the same lane % 4 hold the same columns), then
      // the four warps' through shared memory (a buffer per block parity: a fast warp's next write cannot reach
      // the buffer a slow warp still reads, one barrier in between).
      float m[kCols];
#pragma unroll
      for (int c = 0; c < kCols; ++c) m[c] = -INFINITY;
#pragma unroll
      for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
        for (int i = 0; i < kAcc; ++i) m[col_slot(i)] = max_propagate_nan(m[col_slot(i)], st[t][i]);
      }
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        m[c] = max_propagate_nan(m[c], __shfl_xor_sync(0xffffffffu, m[c], 4));
        m[c] = max_propagate_nan(m[c], __shfl_xor_sync(0xffffffffu, m[c], 8));
        m[c] = max_propagate_nan(m[c], __shfl_xor_sync(0xffffffffu, m[c], 16));
      }
      float* warp_max = reinterpret_cast<float*>(smem + col_max_offset) + (it & 1) * 4 * kQ;
      if (lane < 4) {
#pragma unroll
        for (int c = 0; c < kCols; ++c) warp_max[warp * kQ + column_of_slot(c, lane)] = m[c];
      }
      named_barrier_sync(kBar, 128);
      float correction[kCols], shift[kCols];
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const int col = column_of_slot(c, lane);
        const float mb = max_propagate_nan(max_propagate_nan(warp_max[col], warp_max[kQ + col]),
                                           max_propagate_nan(warp_max[2 * kQ + col], warp_max[3 * kQ + col]));
        const float m_new = max_propagate_nan(col_max[c], mb);
        // As softmax.h: (old - new) * scale, exactly 1 when the maximum did not move; a column with no visible
        // key yet keeps -inf and subtracts 0.
        correction[c] = m_new == -INFINITY ? 1.f : fast_exp2((col_max[c] - m_new) * scale_log2);
        shift[c] = m_new == -INFINITY ? 0.f : m_new * scale_log2;
        col_max[c] = m_new;
      }
      float sum[kCols];
#pragma unroll
      for (int c = 0; c < kCols; ++c) sum[c] = 0.f;
#pragma unroll
      for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
        for (int i = 0; i < kAcc; ++i) {
          const float bias_minus_shift = kExpBiasLog2 == 0 ? -shift[col_slot(i)]
                                                           : static_cast<float>(kExpBiasLog2) - shift[col_slot(i)];
          const float e = fast_exp2(fmaf(st[t][i], scale_log2, bias_minus_shift));
          st[t][i] = e;
          sum[col_slot(i)] += e;
        }
      }
#pragma unroll
      for (int c = 0; c < kCols; ++c) col_sum[c] = col_sum[c] * correction[c] + sum[c];

      // P*V of the block before has retired: its V stage is free, O^T may be rescaled and P^T overwritten.
      wgmma_wait_group<0>();
      fence_ot();
      if (it > 0 && lane == 0) mbarrier_arrive(base + Traits::v_empty_barrier(stage_of(it - 1)));
#pragma unroll
      for (int t = 0; t < kDvTiles; ++t) {
#pragma unroll
        for (int i = 0; i < kAcc; ++i) ot[t][i] *= correction[col_slot(i)];
      }
      fence_ot();  // the rescale before the wgmma fence (sunk below it, ptxas serialized the P*V wgmmas: C7520)
      // P^T (query row x key): this thread's keys 64 t + 16 warp + lane / 4 (+ 8) of its columns.
#pragma unroll
      for (int t = 0; t < kKeyTiles; ++t) {
#pragma unroll
        for (int i = 0; i < kAcc; ++i) {
          const int key = 64 * t + 16 * warp + lane / 4 + 8 * ((i >> 1) & 1);
          const uint32_t addr = base + pt_offset + Traits::PtTile::element_offset(column_of_slot(col_slot(i), lane), key);
          uint16_t bits;
          if constexpr (std::is_same_v<PvMma, __half>) {
            bits = __half_as_ushort(__float2half_rn(st[t][i]));
          } else {
            bits = __bfloat16_as_ushort(__float2bfloat16_rn(st[t][i]));
          }
          asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(addr), "h"(bits) : "memory");
        }
      }
      fence_proxy_async_shared();  // the generic-proxy stores before the wgmma (async proxy) reads
      named_barrier_sync(kBar, 128);

      if constexpr (kHasNext) {
        mbarrier_wait(base + Traits::k_full_barrier(stage_of(it + 1)), phase_of(it + 1));
      }
      mbarrier_wait(base + Traits::v_full_barrier(stage), phase_of(it));
      fence_proxy_async_shared();
      wgmma_fence();
      if constexpr (kHasNext) {
        qk(stage_of(it + 1));
        wgmma_commit_group();
      }
      pv(stage);
      wgmma_commit_group();
      if constexpr (kHasNext) {
        wgmma_wait_group<1>();  // S^T of the next block; this P*V may still run
        fence_st();
      }
    };

    if (n_iters > 0) {
      mbarrier_wait(base + Traits::q_full_barrier(), 0);
      mbarrier_wait(base + Traits::k_full_barrier(stage_of(0)), phase_of(0));
      fence_proxy_async_shared();
      wgmma_fence();
      qk(0);
      wgmma_commit_group();
      wgmma_wait_group<0>();
      fence_st();
      for (int it = 0; it < n_iters - 1; ++it) step(it, std::true_type{});
      step(n_iters - 1, std::false_type{});
      wgmma_wait_group<0>();
      fence_ot();
      if (lane == 0) mbarrier_arrive(base + Traits::v_empty_barrier(stage_of(n_iters - 1)));
    }

    // Column sums over the warpgroup: the warp's lanes, then the four warps (the maxima buffer the last block did
    // not use).
#pragma unroll
    for (int c = 0; c < kCols; ++c) {
      col_sum[c] += __shfl_xor_sync(0xffffffffu, col_sum[c], 4);
      col_sum[c] += __shfl_xor_sync(0xffffffffu, col_sum[c], 8);
      col_sum[c] += __shfl_xor_sync(0xffffffffu, col_sum[c], 16);
    }
    float* warp_sum = reinterpret_cast<float*>(smem + col_max_offset) + (n_iters & 1) * 4 * kQ;
    if (lane < 4) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) warp_sum[warp * kQ + column_of_slot(c, lane)] = col_sum[c];
    }
    // O^T, the column maxima and sums into the K stages (no GEMM reads them any more, and the producer loads no
    // block past the CTA's last): row c of kDv + 4 floats (the pad spreads a warp's stores over the banks).
    constexpr int kXRow = Traits::kDv + 4;
    constexpr uint32_t kXBytes = (kQ * kXRow + 2 * kQ) * 4;
    static_assert(kXBytes <= Traits::kStages * Traits::KTile::kBytes, "the exchange fits K");
    float* xo = reinterpret_cast<float*>(smem + Traits::kKOffset);
    float* x_max = xo + kQ * kXRow;
    float* x_sum = x_max + kQ;
#pragma unroll
    for (int t = 0; t < kDvTiles; ++t) {
#pragma unroll
      for (int i = 0; i < kAcc; ++i) {
        const int dv = 64 * t + 16 * warp + lane / 4 + 8 * ((i >> 1) & 1);
        xo[column_of_slot(col_slot(i), lane) * kXRow + dv] = ot[t][i];
      }
    }
    named_barrier_sync(kBar, 128);
    if (warp == 0 && lane < 4) {
#pragma unroll
      for (int c = 0; c < kCols; ++c) {
        const int col = column_of_slot(c, lane);
        x_max[col] = col_max[c];
        x_sum[col] = warp_sum[col] + warp_sum[kQ + col] + warp_sum[2 * kQ + col] + warp_sum[3 * kQ + col];
      }
    }
    named_barrier_sync(kBar, 128);
    if constexpr (kCluster) {
      combine_in_cluster(p, seq, kv_head, row_begin, scale_log2, smem, tid);
    } else {
      // The 64-row accumulator layout the epilogue takes: rows g = 16 warp + lane / 4 and g + 8; rows past kQ are no
      // query of the CTA (the plan takes the tile only where the packed rows fit) and hold nothing.
      float o[kORegs];
      float row_max[2], row_sum[2];
      int row_tok[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = 16 * warp + lane / 4 + 8 * r;
        const bool held = row < kQ;
        row_max[r] = held ? x_max[row] : -INFINITY;
        row_sum[r] = held ? x_sum[row] : 0.f;
        row_tok[r] = p.qheads_div.div(row_begin + row);
#pragma unroll
        for (int j = 0; j < Traits::kDv / 8; ++j) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            o[4 * j + 2 * r + e] = held ? xo[row * kXRow + 8 * j + 2 * (lane & 3) + e] : 0.f;
          }
        }
      }
      Epilogue<Traits>::template run<false, false>(p, seq, kv_head, row_begin, split, scale_log2, v_descale, row_max,
                                                   row_sum, row_tok, o, smem, 0, tid);
    }
  }

  // cluster-combine (entry 120): the cluster's CTAs are the call's splits of these rows (rank = split), each with its
  // O^T rows, column maxima and sums staged in its K stages as run() leaves them. CTA r combines rows r, r + S, ...
  // (S splits): a thread per column, each split's max, sum and O element read from that CTA's shared memory. The
  // arithmetic of the combine kernel (combine.cu) in log2 units (split_weights.h, CPU-tested), the sink added where
  // given. A split that saw no key has max -inf, sum 0 and O 0: weight 0. Two cluster barriers, the fwd kernel's
  // producer warpgroup arriving at both too: the
  // partials staged before any CTA reads them, and read before any CTA leaves (its shared memory goes with it).
  __device__ static void combine_in_cluster(const FwdParams& p, const SequenceInfo& seq, int kv_head, int row_begin,
                                            float scale_log2, uint8_t* smem, int tid) {
    constexpr int kXRow = Traits::kDv + 4;  // run()'s staging: rows of kDv + 4 floats, then kQ maxima, kQ sums
    constexpr int kMaxSplits = 8;           // the portable cluster size (tile_loop.h cluster_combine_splits)
    static_assert(Traits::kDv <= 128 && 128 % Traits::kDv == 0, "whole rows per pass of 128 threads");
    static_assert(std::is_same_v<Element, __nv_bfloat16>, "the 16-bit keys-as-M tiles are bf16: out is bf16");
    constexpr int kRowsPerPass = 128 / Traits::kDv;
    const uint32_t xo = smem_addr(smem) + Traits::kKOffset;
    const uint32_t x_max = xo + kQ * kXRow * 4;
    const uint32_t x_sum = x_max + kQ * 4;
    const int splits = p.cluster_splits;
    const int col = tid % Traits::kDv;
    const int G = p.qheads_per_kvhead;
    cluster_sync();
    for (int row = static_cast<int>(cluster_cta_rank()) + splits * (tid / Traits::kDv); row < kQ;
         row += splits * kRowsPerPass) {
      const int packed = row_begin + row;
      const int token = p.qheads_div.div(packed);
      if (token >= seq.seqlen_q) continue;  // no query of the CTA (a loop: every thread reaches the last barrier)
      const int head = kv_head * G + (packed - token * G);
      float m[kMaxSplits], l[kMaxSplits], w[kMaxSplits];
#pragma unroll
      for (int s = 0; s < kMaxSplits; ++s) {
        m[s] = -INFINITY;
        l[s] = 0.f;
        if (s < splits) {
          const float raw_max = ld_cluster_f32(cluster_map(x_max + row * 4, s));
          l[s] = ld_cluster_f32(cluster_map(x_sum + row * 4, s));
          m[s] = raw_max == -INFINITY ? -INFINITY : raw_max * scale_log2;
        }
      }
      const float sink_log2 = p.s_aux != nullptr ? sink_logit(p, head) * kLog2e : -INFINITY;
      const SplitTotal t = split_weights(m, l, splits, sink_log2, w);
      float acc = 0.f;
#pragma unroll
      for (int s = 0; s < kMaxSplits; ++s) {
        if (s < splits) acc += w[s] * ld_cluster_f32(cluster_map(xo + (row * kXRow + col) * 4, s));
      }
      const float inv = t.inverse();
      const int64_t q_row = seq.q_start + token;
      if (col < p.head_dim_v) {
        Element* out = static_cast<Element*>(p.out) + q_row * p.o_row_stride +
                       static_cast<int64_t>(head) * p.o_head_stride + col;
        *out = __float2bfloat16_rn(acc * inv);
      }
      if (p.lse != nullptr && col == 0) p.lse[static_cast<int64_t>(head) * p.total_q + q_row] = t.lse();
    }
    cluster_sync();
  }
};

}  // namespace flashseek::sm90

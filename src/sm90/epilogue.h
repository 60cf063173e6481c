// Finishing a consumer warpgroup's 64 rows: normalisation (with the sink logit when given), LSE, and the
// store. Without splits O goes through shared memory (the warpgroup's own Q rows, no longer read) so that global
// stores are 16 bytes wide; with splits the fp32 partial and its LSE go to the workspace for the combine kernel.
#pragma once

#include <cmath>
#include <type_traits>

#include "fwd_params.h"
#include "kernel_traits.h"
#include "prims/async_copy.h"
#include "prims/convert.h"
#include "prims/wide_access.h"
#include "prims/mbarrier.h"
#include "seqlen.h"
#include "sinks.h"

namespace flashseek::sm90 {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

template <class Traits>
struct Epilogue {
  using Element = typename Traits::Element;
  static constexpr int kORegs = Traits::kDv / 2;

  // The output pair (lower column in the low half) in out's dtype: the compute type, except bf16 for an e4m3 q
  // (computed in fp16).
  __device__ __forceinline__ static uint32_t pack_out(const FwdParams& p, float lo, float hi) {
    if constexpr (Traits::kFp8Kv && std::is_same_v<Element, __half>) {  // (native e4m3: Element is bf16 already)
      if (p.out_type == ScalarType::kBFloat16) return pack2<__nv_bfloat16>(lo, hi);
    }
    return pack2<Element>(lo, hi);
  }

  // scale_log2: the CTA's logit scale (log2 units, descales included); v_descale multiplies O (1 unless fp8).
  // kOwnStaging (the persistent kernel): O is staged in the traits' O staging tile, not in Q (which the producer
  // may already be refilling for the next tile), after the warpgroup's threads are done reading it for the
  // previous tile's stores; where that tile does not fit (Traits::kPersistORegs: the decode tiles), from
  // registers.
  // kLean (kLoopLeanTail, entry 71): the LSE's logarithm only where an LSE is stored (the split partials, p.lse, or
  // a sink's total), and the store loop with this thread's column chunk fixed and its rows advanced by adds instead
  // of a division per chunk. The same values stored.
  template <bool kOwnStaging = false, bool kLean = false>
  __device__ static void run(const FwdParams& p, const SequenceInfo& seq, int kv_head, int row_begin, int split,
                             float scale_log2, float v_descale, const float (&row_max)[2], const float (&row_sum)[2],
                             const int (&row_tok)[2], const float (&o)[kORegs], uint8_t* smem, int wg, int tid) {
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int G = p.qheads_per_kvhead;
    const int packed_row0 = row_begin + 64 * wg + 16 * warp + lane / 4;
    const bool with_sinks = p.s_aux != nullptr && p.num_splits == 1;  // with splits the combine adds them

    float factor[2];
    float lse[2];
    int head[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int packed = packed_row0 + 8 * r;
      head[r] = kv_head * G + (packed - row_tok[r] * G);
      const float m_log2 = row_max[r] == -INFINITY ? -INFINITY : row_max[r] * scale_log2;
      // Native e4m3 P carries a factor kPScale in the sums and in O (kernel_traits.h): divided out here.
      const float sum = Traits::kPScale == 1.f ? row_sum[r] : row_sum[r] * (1.f / Traits::kPScale);
      if (with_sinks) {
        const float sink_log2 = sink_logit(p, head[r]) * kLog2e;
        const float top = fmaxf(m_log2, sink_log2);
        const float kept = exp2f(m_log2 - top);  // 0 when the row saw no key
        const float total = sum * kept + exp2f(sink_log2 - top);
        factor[r] = kept / total;
        lse[r] = (top + log2f(total)) * kLn2;
      } else {
        // sum is 0 only when the row saw no key; a NaN sum (NaN in a real input) must reach out and LSE.
        factor[r] = sum == 0.f ? 0.f : 1.f / sum;
        if (!kLean || p.num_splits > 1 || p.lse != nullptr) {
          lse[r] = sum == 0.f ? -INFINITY : (m_log2 + log2f(sum)) * kLn2;
        } else {
          lse[r] = 0.f;  // not stored
        }
      }
      factor[r] *= v_descale;  // O is linear in V: split partials too (the combine is linear in O)
      if constexpr (Traits::kPScale != 1.f) factor[r] *= 1.f / Traits::kPScale;
    }

    if (p.num_splits > 1) {
      store_partial(p, seq, split, head, row_tok, factor, lse, o, lane);
      return;
    }

    if (p.lse != nullptr && (lane & 3) == 0) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        if (row_tok[r] < seq.seqlen_q) {
          p.lse[static_cast<int64_t>(head[r]) * p.total_q + seq.q_start + row_tok[r]] = lse[r];
        }
      }
    }

    if constexpr (kOwnStaging && Traits::kPersistORegs) {
      store_rows_from_registers(p, seq, head, row_tok, factor, o, lane);
      return;
    }

    // Stage this warpgroup's 64 rows in its own rows of the Q tile, or of an O staging tile (native e4m3, whose Q
    // tile holds bytes; the persistent kernel, whose producer may already be refilling Q).
    if constexpr (kOwnStaging) named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kConsumerWarpgroup0) + wg, 128);
    uint32_t q_tile = smem_addr(smem) + (kOwnStaging ? Traits::kPersistOStagingOffset : Traits::kOStagingOffset);
    const int tile_row0 = 64 * wg + 16 * warp + lane / 4;
#pragma unroll
    for (int j = 0; j < Traits::kDv / 8; ++j) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const uint32_t word = pack_out(p, o[4 * j + 2 * r] * factor[r], o[4 * j + 2 * r + 1] * factor[r]);
        const uint32_t addr = q_tile + Traits::OTile::element_offset(tile_row0 + 8 * r, 8 * j + 2 * (lane & 3));
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(word) : "memory");
      }
    }
    named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kConsumerWarpgroup0) + wg, 128);

    constexpr int kChunks = Traits::kDv / 8;
    const int valid_chunks = p.head_dim_v / 8;
    uint16_t* out = static_cast<uint16_t*>(p.out);  // bf16 or fp16 (out_type)
    if constexpr (kLean && 128 % kChunks == 0 && (128 / kChunks) % 8 == 0) {
      // Thread tid stores chunk tid % kChunks of rows tid / kChunks + kRowStep * i: its swizzled chunk position is
      // the same in every row it visits (kRowStep is a multiple of the 8-row swizzle atom), and its rows' (token,
      // head) advance by (kRowStep / G, kRowStep % G) with a carry.
      constexpr int kRowStep = 128 / kChunks;
      const int chunk = tid % kChunks;
      if (chunk >= valid_chunks) return;
      const int row0 = tid / kChunks;
      const int packed0 = row_begin + 64 * wg + row0;
      int token = p.qheads_div.div(packed0);
      int head_in = packed0 - token * G;
      const int tok_step = p.qheads_div.div(kRowStep);
      const int head_step = kRowStep - tok_step * G;
      uint32_t addr = q_tile + Traits::OTile::chunk_offset(64 * wg + row0, chunk);
#pragma unroll
      for (int i = 0; i < 64 / kRowStep; ++i) {
        if (token >= seq.seqlen_q) break;  // rows only grow
        const uint4 value = ld_shared_16(addr);
        uint16_t* dst = out + static_cast<int64_t>(seq.q_start + token) * p.o_row_stride +
                        static_cast<int64_t>(kv_head * G + head_in) * p.o_head_stride + chunk * 8;
        st_global_16(dst, value);
        addr += kRowStep * Traits::OTile::kRowBytes;
        token += tok_step;
        head_in += head_step;
        if (head_in >= G) {
          head_in -= G;
          ++token;
        }
      }
    } else {
      for (int idx = tid; idx < 64 * kChunks; idx += 128) {
        const int row = idx / kChunks;
        const int chunk = idx - row * kChunks;
        const int packed = row_begin + 64 * wg + row;
        const int token = p.qheads_div.div(packed);
        if (token >= seq.seqlen_q || chunk >= valid_chunks) continue;
        const int h = kv_head * G + (packed - token * G);
        const uint32_t addr = q_tile + Traits::OTile::chunk_offset(64 * wg + row, chunk);
        const uint4 value = ld_shared_16(addr);
        uint16_t* dst = out + static_cast<int64_t>(seq.q_start + token) * p.o_row_stride +
                        static_cast<int64_t>(h) * p.o_head_stride + chunk * 8;
        st_global_16(dst, value);
      }
    }
  }

  // The rows of this thread straight from the accumulator: pairs of 16-bit values, column 8 j + 2 (lane % 4).
  __device__ static void store_rows_from_registers(const FwdParams& p, const SequenceInfo& seq, const int (&head)[2],
                                                   const int (&row_tok)[2], const float (&factor)[2],
                                                   const float (&o)[kORegs], int lane) {
    uint32_t* out = static_cast<uint32_t*>(p.out);  // pairs of bf16 or fp16 (out_type); o strides are even
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (row_tok[r] >= seq.seqlen_q) continue;
      const int64_t row = static_cast<int64_t>(seq.q_start + row_tok[r]) * p.o_row_stride +
                          static_cast<int64_t>(head[r]) * p.o_head_stride;
#pragma unroll
      for (int j = 0; j < Traits::kDv / 8; ++j) {
        const int col = 8 * j + 2 * (lane & 3);
        if (col < p.head_dim_v) {
          out[(row + col) / 2] = pack_out(p, o[4 * j + 2 * r] * factor[r], o[4 * j + 2 * r + 1] * factor[r]);
        }
      }
    }
  }

  __device__ static void store_partial(const FwdParams& p, const SequenceInfo& seq, int split, const int (&head)[2],
                                       const int (&row_tok)[2], const float (&factor)[2], const float (&lse)[2],
                                       const float (&o)[kORegs], int lane) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (row_tok[r] >= seq.seqlen_q) continue;
      const int64_t row = (static_cast<int64_t>(split) * p.total_q + seq.q_start + row_tok[r]) * p.num_heads_q + head[r];
      if ((lane & 3) == 0) p.lse_partial[row] = lse[r];
      float* dst = p.o_partial + row * Traits::kDv + 2 * (lane & 3);
#pragma unroll
      for (int j = 0; j < Traits::kDv / 8; ++j) {
        *reinterpret_cast<float2*>(dst + 8 * j) =
            make_float2(o[4 * j + 2 * r] * factor[r], o[4 * j + 2 * r + 1] * factor[r]);
      }
    }
  }
};

}  // namespace flashseek::sm90

// Finishing the MLA decode tile: each consumer warpgroup normalises and stores its 256 output columns of the 64
// rows; Scores also writes the LSE. Without splits O goes through shared memory (the query tile, no longer read
// once the last S is done) so that global stores are 16 bytes wide; with splits the fp32 partial and its LSE go
// to the workspace for the combine kernel (row width 512).
#pragma once

#include <cmath>

#include "../epilogue.h"  // kLn2
#include "../fwd_params.h"
#include "../prims/async_copy.h"
#include "../prims/convert.h"
#include "../prims/wide_access.h"
#include "../prims/mbarrier.h"
#include "../seqlen.h"
#include "traits.h"

namespace flashseek::sm90::mla {

template <class Traits>
struct Epilogue {
  using Element = typename Traits::Element;
  static constexpr int kORegs = Traits::kDvHalf / 2;
  static constexpr int kHalfChunks = Traits::kDvHalf / 8;

  __device__ __forceinline__ static int head_of(const FwdParams& p, int kv_head, int packed, int token) {
    return kv_head * p.qheads_per_kvhead + (packed - token * p.qheads_per_kvhead);
  }

  // Output columns [half * 256, half * 256 + 256) of the tile's rows, scaled by the row factors.
  __device__ static void store(const FwdParams& p, const SequenceInfo& seq, int kv_head, int row_begin, int split,
                               int half, const float (&factor)[2], const int (&row_tok)[2], const float (&o)[kORegs],
                               uint8_t* smem, int tid) {
    const int warp = tid / 32;
    const int lane = tid % 32;
    const int tile_row0 = 16 * warp + lane / 4;
    const int col0 = half * Traits::kDvHalf + 2 * (lane & 3);

    if (p.num_splits > 1) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        if (row_tok[r] >= seq.seqlen_q) continue;
        const int head = head_of(p, kv_head, row_begin + tile_row0 + 8 * r, row_tok[r]);
        const int64_t row = (static_cast<int64_t>(split) * p.total_q + seq.q_start + row_tok[r]) * p.num_heads_q + head;
        float* dst = p.o_partial + row * Traits::kDv + col0;
#pragma unroll
        for (int j = 0; j < kORegs / 4; ++j) {
          *reinterpret_cast<float2*>(dst + 8 * j) =
              make_float2(o[4 * j + 2 * r] * factor[r], o[4 * j + 2 * r + 1] * factor[r]);
        }
      }
      return;
    }

    const uint32_t q_tile = smem_addr(smem) + Traits::kQOffset;
#pragma unroll
    for (int j = 0; j < kORegs / 4; ++j) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const uint32_t word = pack2<Element>(o[4 * j + 2 * r] * factor[r], o[4 * j + 2 * r + 1] * factor[r]);
        const uint32_t addr = q_tile + Traits::QTile::element_offset(tile_row0 + 8 * r, col0 + 8 * j);
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr), "r"(word) : "memory");
      }
    }
    named_barrier_sync(static_cast<uint32_t>(Barrier::kEpilogue0) + half, 128);

    Element* out = static_cast<Element*>(p.out);
    for (int idx = tid; idx < Traits::kBlockM * kHalfChunks; idx += 128) {
      const int row = idx / kHalfChunks;
      const int chunk = half * kHalfChunks + (idx - row * kHalfChunks);
      const int packed = row_begin + row;
      const int token = p.qheads_div.div(packed);
      if (token >= seq.seqlen_q) continue;
      const uint32_t addr = q_tile + Traits::QTile::chunk_offset(row, chunk);
      const uint4 value = ld_shared_16(addr);
      Element* dst = out + static_cast<int64_t>(seq.q_start + token) * p.o_row_stride +
                     static_cast<int64_t>(head_of(p, kv_head, packed, token)) * p.o_head_stride + chunk * 8;
      st_global_16(dst, value);
    }
  }

  // LSE (natural log) of the tile's rows: the call's softmax_lse, or the split's partial LSE.
  __device__ static void store_lse(const FwdParams& p, const SequenceInfo& seq, int kv_head, int row_begin,
                                   int split, const float (&lse)[2], const int (&row_tok)[2], int tid) {
    const int lane = tid % 32;
    if ((lane & 3) != 0) return;
    const int tile_row0 = 16 * (tid / 32) + lane / 4;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      if (row_tok[r] >= seq.seqlen_q) continue;
      const int head = head_of(p, kv_head, row_begin + tile_row0 + 8 * r, row_tok[r]);
      const int64_t q_row = seq.q_start + row_tok[r];
      if (p.num_splits > 1) {
        p.lse_partial[(static_cast<int64_t>(split) * p.total_q + q_row) * p.num_heads_q + head] = lse[r];
      } else if (p.lse != nullptr) {
        p.lse[static_cast<int64_t>(head) * p.total_q + q_row] = lse[r];
      }
    }
  }
};

}  // namespace flashseek::sm90::mla

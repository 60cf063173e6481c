// The producer warpgroup for an e4m3 (fp8) KV cache: K and V blocks are copied raw (8 bytes = 8 values per
// cp.async) into a staging ring, then each thread converts exactly the chunks it copied into the 16-bit swizzled
// stage tiles the consumers' wgmma reads. The consumers run the 16-bit code unchanged.
//
// Per block, in the order the consumers visit them (last block first), for K and then for V:
//   wait for this thread's raw copies (cp.async groups: one for K, one for V of each block)
//   wait stage empty -> convert -> fence.proxy.async -> arrive stage full
//   issue the raw copies of the block kRawStages ahead into the staging rows just converted
// The conversion is exact (e4m3 -> fp16, or bf16 via fp32) and applies no scale: descales are folded into the
// score scale and the epilogue. Rows past a sequence's end and columns past the head dim are zero-filled, so NaN
// in unused cache slots never reaches the tiles. An e4m3 q is loaded the same way, once, through the staging.
#pragma once

#include <type_traits>

#include "fwd_params.h"
#include "kernel_traits.h"
#include "prims/async_copy.h"
#include "prims/convert.h"
#include "prims/mbarrier.h"
#include "prims/wgmma.h"
#include "producer.h"
#include "seqlen.h"

namespace flashseek::sm90 {

template <class Traits>
struct ProducerFp8 {
  using Element = typename Traits::Element;
  using Base = Producer<Traits>;
  static constexpr int kThreads = 128;
  static constexpr int kN = Traits::kBlockN;
  static constexpr int kRaw = Traits::kRawStages;
  static_assert(Traits::kFp8Kv && kRaw >= 1, "an fp8 tile of the tile table");
  // Chunks per thread in flight in the copy and convert loops: 2 when the producer lives on kProducerRegs (40)
  // beside two consumer warpgroups (more spills), 4 with one consumer warpgroup (no register reallocation).
  static constexpr int kUnroll = Traits::kReallocateRegisters ? 2 : 4;

  // One 8-value chunk: 8 raw bytes at `raw` -> 16 bytes of Element pairs at `tile` (both shared memory).
  __device__ __forceinline__ static void convert_chunk(uint32_t raw, uint32_t tile) {
    uint32_t w0, w1;
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n" : "=r"(w0), "=r"(w1) : "r"(raw));
    uint32_t o0, o1, o2, o3;
    e4m3x4_to<Element>(w0, o0, o1);
    e4m3x4_to<Element>(w1, o2, o3);
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(tile), "r"(o0), "r"(o1), "r"(o2), "r"(o3)
                 : "memory");
  }

  // Raw copies of kRows rows of kCols e4m3 values: row r at `src + row_off(r)` lands at staging row r (kCols bytes
  // per row). A thread handles chunks idx = tid, tid + 128, ...; convert_rows visits the same chunks, so a thread
  // only ever converts bytes its own copies wrote (its cp.async wait is the only synchronisation needed).
  template <int kRows, int kCols, class RowOffset>
  __device__ __forceinline__ static void copy_rows(const uint8_t* base, RowOffset row_off, int valid_chunks,
                                                   uint32_t raw, int tid) {
    constexpr int kChunks = kCols / 8;
#pragma unroll kUnroll
    for (int idx = tid; idx < kRows * kChunks; idx += kThreads) {
      const int row = idx / kChunks;
      const int chunk = idx - row * kChunks;
      const int64_t off = row_off(row);
      const bool valid = off >= 0 && chunk < valid_chunks;
      cp_async_8_zfill(raw + row * kCols + chunk * 8, valid ? base + off + chunk * 8 : base, valid);
    }
  }

  template <class Tile, int kRows, int kCols>
  __device__ __forceinline__ static void convert_rows(uint32_t raw, uint32_t tile, int tid) {
    constexpr int kChunks = kCols / 8;
    static_assert(Tile::kChunksPerRow == kChunks, "staging rows and tile rows hold the same columns");
#pragma unroll kUnroll
    for (int idx = tid; idx < kRows * kChunks; idx += kThreads) {
      const int row = idx / kChunks;
      const int chunk = idx - row * kChunks;
      convert_chunk(raw + row * kCols + chunk * 8, tile + Tile::chunk_offset(row, chunk));
    }
  }

  // An e4m3 Q tile: rows [row_begin, row_begin + kBlockM) of the packed (token, query head) space, staged raw in
  // the (not yet used) staging ring, converted, then published on the q_full barrier (128 arrivals).
  __device__ __forceinline__ static void load_q_fp8(const FwdParams& p, const SequenceInfo& seq, int row_begin,
                                                    int kv_head, uint32_t smem_base, int tid) {
    const uint8_t* q = static_cast<const uint8_t*>(p.q);
    const uint32_t raw = smem_base + Traits::kRawOffset;
    auto row_off = [&](int row) -> int64_t {
      const int packed = row_begin + row;
      const int token = p.qheads_div.div(packed);
      const int head = kv_head * p.qheads_per_kvhead + (packed - token * p.qheads_per_kvhead);
      if (token >= seq.seqlen_q) return -1;
      return static_cast<int64_t>(seq.q_start + token) * p.q_row_stride + static_cast<int64_t>(head) * p.q_head_stride;
    };
    copy_rows<Traits::kBlockM, Traits::kD>(q, row_off, p.head_dim / 8, raw, tid);
    cp_async_commit_group();
    cp_async_wait_group<0>();
    convert_rows<typename Traits::QTile, Traits::kBlockM, Traits::kD>(raw, smem_base + Traits::kQOffset, tid);
    fence_proxy_async_shared();
    mbarrier_arrive(smem_base + Traits::q_full_barrier());
  }

  __device__ static void run(const FwdParams& p, const SequenceInfo& seq, int b, int kv_head, int row_begin,
                             int n_begin, int n_end, uint8_t* smem, int tid) {
    const uint32_t smem_base = smem_addr(smem);
    // An e4m3 q always computes in fp16 (the host picks the fp16 kernel for it).
    if (std::is_same_v<Element, __half> && p.q_fp8) {
      load_q_fp8(p, seq, row_begin, kv_head, smem_base, tid);
    } else {
      Base::load_q(p, seq, row_begin, kv_head, smem_base, tid);
    }

    const uint8_t* k = static_cast<const uint8_t*>(p.k) + static_cast<int64_t>(kv_head) * p.k_head_stride;
    const uint8_t* v = static_cast<const uint8_t*>(p.v) + static_cast<int64_t>(kv_head) * p.v_head_stride;
    int64_t* offsets = reinterpret_cast<int64_t*>(smem + Traits::kRowOffsetsOffset);
    const int k_chunks = p.head_dim / 8;
    const int v_chunks = p.head_dim_v / 8;
    const int n_iters = n_end - n_begin;

    // Row offsets of the x-th block visited (key block n_end - 1 - x) go to buffer x & 1, computed one block
    // before its copies are issued; the page ids they need are read one block earlier still.
    auto offsets_of = [&](int x) { return offsets + (x & 1) * 2 * kN; };
    int page_next = Base::fetch_page(p, seq, b, n_end - 1, tid);
    auto prepare_offsets = [&](int x) {
      const int page_after = x + 1 < n_iters ? Base::fetch_page(p, seq, b, n_end - 2 - x, tid) : 0;
      int64_t* buf = offsets_of(x);
      Base::compute_row_offsets(p, seq, n_end - 1 - x, page_next, buf, buf + kN, tid);
      page_next = page_after;
    };
    auto raw_of = [&](int x) { return smem_base + Traits::kRawOffset + (x % kRaw) * Traits::kRawStageBytes; };
    auto issue_raw_k = [&](int x) {
      const int64_t* k_off = offsets_of(x);
      copy_rows<kN, Traits::kD>(k, [&](int row) { return k_off[row]; }, k_chunks, raw_of(x), tid);
    };
    auto issue_raw_v = [&](int x) {
      const int64_t* v_off = offsets_of(x) + kN;
      copy_rows<kN, Traits::kDv>(v, [&](int row) { return v_off[row]; }, v_chunks, raw_of(x) + Traits::kRawKBytes,
                                 tid);
    };

    // Prologue: the first kRaw blocks in flight. Two commit groups per block (K, then V), empty ones included,
    // so that "K (or V) of block x landed" is always cp.async.wait_group<2 * kRaw - 1> when it is needed: K's
    // staging is refilled as soon as K is converted, while V of the same block may still be in flight.
    prepare_offsets(0);
    named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);  // also: the Q staging is free
#pragma unroll
    for (int x = 0; x < kRaw; ++x) {
      if (x < n_iters) issue_raw_k(x);
      cp_async_commit_group();
      if (x < n_iters) issue_raw_v(x);
      cp_async_commit_group();
      if (x + 1 < n_iters) prepare_offsets(x + 1);
      named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
    }

    for (int it = 0; it < n_iters; ++it) {
      const int stage = it % Traits::kStages;
      const uint32_t phase = (it / Traits::kStages) & 1;
      const uint32_t raw = raw_of(it);
      const int next = it + kRaw;  // goes into block it's staging buffer once it is converted

      cp_async_wait_group<2 * kRaw - 1>();  // K of block it (V of it and both of the next blocks may fly)
      mbarrier_wait(smem_base + Traits::k_empty_barrier(stage), phase ^ 1);
      convert_rows<typename Traits::KTile, kN, Traits::kD>(
          raw, smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes, tid);
      fence_proxy_async_shared();  // the wgmma reads the tile through the async proxy
      mbarrier_arrive(smem_base + Traits::k_full_barrier(stage));
      // This thread converted all the K bytes it copied there: the staging's K rows take block next.
      if (next < n_iters) issue_raw_k(next);
      cp_async_commit_group();

      cp_async_wait_group<2 * kRaw - 1>();  // V of block it
      mbarrier_wait(smem_base + Traits::v_empty_barrier(stage), phase ^ 1);
      convert_rows<typename Traits::VTile, kN, Traits::kDv>(
          raw + Traits::kRawKBytes, smem_base + Traits::kVOffset + stage * Traits::VTile::kBytes, tid);
      fence_proxy_async_shared();
      mbarrier_arrive(smem_base + Traits::v_full_barrier(stage));
      if (next < n_iters) issue_raw_v(next);
      cp_async_commit_group();

      // The other offsets buffer was last read when block next - 1 was issued, before the previous sync.
      if (next + 1 < n_iters) prepare_offsets(next + 1);
      named_barrier_sync(static_cast<uint32_t>(NamedBarrier::kProducer), kThreads);
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  }
};

}  // namespace flashseek::sm90

// The producer warpgroup for an e4m3 (fp8) KV cache: K and V blocks are copied raw (8 bytes = 8 values per
// cp.async) into a staging ring, then each thread converts exactly the chunks it copied into the 16-bit swizzled
// stage tiles the consumers' wgmma reads. The consumers run the 16-bit code unchanged.
//
// Per block, in the order the consumers visit them (last block first), for K and then for V:
//   wait for this thread's raw copies (cp.async groups: one for K, one for V of each block)
//   wait stage empty -> convert -> fence.proxy.async -> arrive stage full
//   issue the raw copies of the block kRawStages ahead into the staging rows just converted
// With FwdParams::fp8_mode & kFp8Copy16 (the default where the host finds 16-byte alignment; FLASHSEEK_EXPERIMENT
// fp8-cp8 turns it off) the K/V chunks are 16 values: 16-byte cp.async.cg (L1 bypass), half the copy
// instructions and row-offset reads, and one 16-byte staging read per two swizzled 16-byte tile writes. The staging then holds chunks in the order threads
// visit them (chunk idx at idx * 16), and idx maps to (row, chunk) so that each 8-thread phase of a tile store
// covers two adjacent rows of one 64-column block: bank-conflict-free reads and writes (copy16_layout).
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
  // 16-value chunks: 12 live registers per chunk in the conversion (4 raw, 8 converted).
  static constexpr int kUnroll16 = Traits::kReallocateRegisters ? 1 : 4;

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

  // One 16-value chunk: 16 raw bytes at `raw` -> tile chunks 2c and 2c + 1 of a row (32 bytes at `tile_lo`); the
  // two differ only in address bit 4 (swizzle positions 2c ^ r and (2c + 1) ^ r of a 1024-byte aligned tile).
  __device__ __forceinline__ static void convert_chunk16(uint32_t raw, uint32_t tile_lo) {
    uint32_t w0, w1, w2, w3;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n" : "=r"(w0), "=r"(w1), "=r"(w2), "=r"(w3) : "r"(raw));
    uint32_t o[8];
    e4m3x4_to<Element>(w0, o[0], o[1]);
    e4m3x4_to<Element>(w1, o[2], o[3]);
    e4m3x4_to<Element>(w2, o[4], o[5]);
    e4m3x4_to<Element>(w3, o[6], o[7]);
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(tile_lo), "r"(o[0]), "r"(o[1]), "r"(o[2]),
                 "r"(o[3])
                 : "memory");
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(tile_lo ^ 16u), "r"(o[4]), "r"(o[5]), "r"(o[6]),
                 "r"(o[7])
                 : "memory");
  }

  // 16-value chunk idx of a (kRows x kCols) block -> (row, chunk): each group of 8 consecutive idx (one phase of a
  // 16-byte shared-memory access) takes raw chunks 0..3 of one 64-column block in two adjacent rows 2k, 2k + 1.
  // Their tile stores hit swizzle positions {0,2,4,6} ^ r and {0,2,4,6} ^ (r + 1) (then {1,3,5,7} ^ ...): 8
  // distinct 16-byte bank groups per phase. The natural row-major order puts chunks c and c + 4 of one row (the
  // same positions of two column blocks) in one phase: 2-way conflicts on both stores. The staging reads are
  // contiguous (chunk idx at idx * 16); a warp reads 64-byte row pieces of 4 rows from global memory.
  template <int kCols>
  __device__ __forceinline__ static void copy16_layout(int idx, int& row, int& chunk) {
    constexpr int kColBlocks = kCols / 64;
    const int group = idx >> 3;
    const int within = idx & 7;
    const int block = group % kColBlocks;
    row = 2 * (group / kColBlocks) + (within >> 2);
    chunk = block * 4 + (within & 3);
  }

  // Visits this thread's 16-value chunks of a (kRows x kCols) block: f(idx, row, chunk). With 1, 2 or 4 column
  // blocks and whole passes of 128 chunks, a thread keeps one chunk column and one row & 7 (rows step by
  // 32 / kColBlocks), so staging, tile and global addresses advance by constants; d192 takes the general loop.
  template <int kRows, int kCols, class F>
  __device__ __forceinline__ static void for_chunks16(int tid, F&& f) {
    static_assert(kCols % 64 == 0 && kRows % 2 == 0, "whole 64-column blocks and row pairs");
    constexpr int kColBlocks = kCols / 64;
    constexpr int kTotal = kRows * (kCols / 16);
    if constexpr (16 % kColBlocks == 0 && kTotal % kThreads == 0) {
      int row0, chunk;
      copy16_layout<kCols>(tid, row0, chunk);
#pragma unroll kUnroll16
      for (int j = 0; j < kTotal / kThreads; ++j) f(tid + j * kThreads, row0 + j * (32 / kColBlocks), chunk);
    } else {
#pragma unroll kUnroll16
      for (int idx = tid; idx < kTotal; idx += kThreads) {
        int row, chunk;
        copy16_layout<kCols>(idx, row, chunk);
        f(idx, row, chunk);
      }
    }
  }

  template <int kRows, int kCols, class RowOffset>
  __device__ __forceinline__ static void copy_rows16(const uint8_t* base, RowOffset row_off, int valid_chunks,
                                                     uint32_t raw, int tid) {
    for_chunks16<kRows, kCols>(tid, [&](int idx, int row, int chunk) {
      const int64_t off = row_off(row);
      const bool valid = off >= 0 && chunk < valid_chunks;
      const uint8_t* chunk_base = base + chunk * 16;
      cp_async_16_zfill(raw + idx * 16, valid ? chunk_base + off : base, valid);
    });
  }

  template <class Tile, int kRows, int kCols>
  __device__ __forceinline__ static void convert_rows16(uint32_t raw, uint32_t tile, int tid) {
    static_assert(Tile::kChunksPerRow == kCols / 8, "staging rows and tile rows hold the same columns");
    for_chunks16<kRows, kCols>(tid, [&](int idx, int row, int chunk) {
      convert_chunk16(raw + idx * 16, tile + Tile::chunk_offset(row, 2 * chunk));
    });
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

    if (p.fp8_mode & kFp8Copy16) {
      run_kv<16>(p, seq, b, kv_head, n_begin, n_end, smem, tid);
    } else {
      run_kv<8>(p, seq, b, kv_head, n_begin, n_end, smem, tid);
    }
  }

  // The K/V pipeline with kChunkBytes-value chunks (8: cp.async.ca, row-major staging; 16: copy_rows16).
  template <int kChunkBytes>
  __device__ static void run_kv(const FwdParams& p, const SequenceInfo& seq, int b, int kv_head, int n_begin,
                                int n_end, uint8_t* smem, int tid) {
    const uint32_t smem_base = smem_addr(smem);
    const bool do_copy = (p.fp8_mode & kFp8SkipCopy) == 0;        // diagnostics only
    const bool do_convert = (p.fp8_mode & kFp8SkipConvert) == 0;  // diagnostics only
    const uint8_t* k = static_cast<const uint8_t*>(p.k) + static_cast<int64_t>(kv_head) * p.k_head_stride;
    const uint8_t* v = static_cast<const uint8_t*>(p.v) + static_cast<int64_t>(kv_head) * p.v_head_stride;
    int64_t* offsets = reinterpret_cast<int64_t*>(smem + Traits::kRowOffsetsOffset);
    const int k_chunks = p.head_dim / kChunkBytes;
    const int v_chunks = p.head_dim_v / kChunkBytes;
    const int n_iters = n_end - n_begin;

    // Row offsets of the x-th block visited (key block n_end - 1 - x) go to buffer x & 1, computed one block
    // before its copies are issued; the page ids they need are read one block earlier still.
    auto offsets_of = [&](int x) { return offsets + (x & 1) * 2 * kN; };
    int page_next = Base::fetch_page(p, seq, b, n_end - 1, tid);
    auto prepare_offsets = [&](int x) {
      const int page_after = x + 1 < n_iters ? Base::fetch_page(p, seq, b, n_end - 2 - x, tid) : 0;
      int64_t* buf = offsets_of(x);
      Base::compute_row_offsets(p, seq, b, n_end - 1 - x, page_next, buf, buf + kN, tid);
      page_next = page_after;
    };
    auto raw_of = [&](int x) { return smem_base + Traits::kRawOffset + (x % kRaw) * Traits::kRawStageBytes; };
    auto issue_raw_k = [&](int x) {
      if (!do_copy) return;
      const int64_t* k_off = offsets_of(x);
      auto row_off = [&](int row) { return k_off[row]; };
      if constexpr (kChunkBytes == 16) {
        copy_rows16<kN, Traits::kD>(k, row_off, k_chunks, raw_of(x), tid);
      } else {
        copy_rows<kN, Traits::kD>(k, row_off, k_chunks, raw_of(x), tid);
      }
    };
    auto issue_raw_v = [&](int x) {
      if (!do_copy) return;
      const int64_t* v_off = offsets_of(x) + kN;
      auto row_off = [&](int row) { return v_off[row]; };
      if constexpr (kChunkBytes == 16) {
        copy_rows16<kN, Traits::kDv>(v, row_off, v_chunks, raw_of(x) + Traits::kRawKBytes, tid);
      } else {
        copy_rows<kN, Traits::kDv>(v, row_off, v_chunks, raw_of(x) + Traits::kRawKBytes, tid);
      }
    };
    auto convert_k = [&](uint32_t raw, int stage) {
      if (!do_convert) return;
      const uint32_t tile = smem_base + Traits::kKOffset + stage * Traits::KTile::kBytes;
      if constexpr (kChunkBytes == 16) {
        convert_rows16<typename Traits::KTile, kN, Traits::kD>(raw, tile, tid);
      } else {
        convert_rows<typename Traits::KTile, kN, Traits::kD>(raw, tile, tid);
      }
    };
    auto convert_v = [&](uint32_t raw, int stage) {
      if (!do_convert) return;
      const uint32_t tile = smem_base + Traits::kVOffset + stage * Traits::VTile::kBytes;
      if constexpr (kChunkBytes == 16) {
        convert_rows16<typename Traits::VTile, kN, Traits::kDv>(raw + Traits::kRawKBytes, tile, tid);
      } else {
        convert_rows<typename Traits::VTile, kN, Traits::kDv>(raw + Traits::kRawKBytes, tile, tid);
      }
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
      convert_k(raw, stage);
      fence_proxy_async_shared();  // the wgmma reads the tile through the async proxy
      mbarrier_arrive(smem_base + Traits::k_full_barrier(stage));
      // This thread converted all the K bytes it copied there: the staging's K rows take block next.
      if (next < n_iters) issue_raw_k(next);
      cp_async_commit_group();

      cp_async_wait_group<2 * kRaw - 1>();  // V of block it
      mbarrier_wait(smem_base + Traits::v_empty_barrier(stage), phase ^ 1);
      convert_v(raw, stage);
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

// Native e4m3 P*V (wgmma k32, e4m3 x e4m3): fp8 wgmma reads both operands K-major, so V enters as V^T (head-dim
// rows, keys contiguous), and P comes from registers as e4m3. Two layouts meet here:
//   the fp32 accumulator S of QK^T: thread (g = lane / 4, c = lane % 4) of a warp holds, per 8-column group j,
//     s[4j + e] = S(row g + 8 (e >> 1), col 8j + 2c + (e & 1));
//   the k32 A fragment: a[0] = row g, k 4c..4c+3 (lowest byte first), a[1] = row g + 8, the same k,
//     a[2] / a[3] = rows g / g + 8, k 16 + 4c..16 + 4c + 3.
// Instead of moving values between threads, P is packed as each thread holds it: A's k index k of a 32-key chunk
// then carries key chunk_key(k) = (k & 16) + 8 ((k >> 1) & 1) + 2 ((k >> 2) & 3) + (k & 1), and V^T is written with
// its key columns in that order (transpose_v_e4m3), so the product sums the right pairs.
// Both tiles use the 128-byte swizzle of SwizzledTile in bytes: an e4m3 row of 128 elements is one 128-byte row.
#pragma once

#include <cstdint>

#include "../widen_map.h"
#include "convert.h"
#include "smem_tile.h"

namespace flashseek::sm90 {

// The key (0..31) of a 32-key chunk that A's k index k carries.
__host__ __device__ constexpr int chunk_key(int k) {
  return (k & 16) + 8 * ((k >> 1) & 1) + 2 * ((k >> 2) & 3) + (k & 1);
}

// An e4m3 tile of kRows rows x kCols one-byte columns: column blocks of 128 elements, each 128 bytes per row.
template <int kRows, int kCols>
struct SwizzledTile8 {
  static_assert(kCols % 128 == 0, "e4m3 tiles hold whole 128-column blocks");
  using Bytes = SwizzledTile<kRows, kCols / 2>;  // the same bytes as a 16-bit tile of half the columns
  static constexpr int kRowBytes = Bytes::kRowBytes;
  static constexpr int kColumnBlocks = Bytes::kColumnBlocks;
  static constexpr int kColumnBlockBytes = Bytes::kColumnBlockBytes;
  static constexpr int kBytes = Bytes::kBytes;
  __host__ __device__ static constexpr uint32_t byte_offset(int row, int col) {
    return Bytes::chunk_offset(row, col >> 4) + (col & 15);
  }
};

// An e4m3 tile of kRows rows x 64 one-byte columns with the 64-byte swizzle (SwizzledTile64 in bytes): the d64
// native tiles' Q, K and raw V.
template <int kRows>
struct SwizzledTile8Sw64 {
  using Bytes = SwizzledTile64<kRows, 32>;
  static constexpr int kRowBytes = Bytes::kRowBytes;
  static constexpr int kBytes = Bytes::kBytes;
  __host__ __device__ static constexpr uint32_t byte_offset(int row, int col) {
    return Bytes::chunk_offset(row, col >> 4) + (col & 15);
  }
};

// Four fp32 values to four e4m3 (round to nearest, saturating to +-448; NaN stays NaN), x0 in the lowest byte.
__device__ __forceinline__ uint32_t pack4_e4m3(float x0, float x1, float x2, float x3) {
  uint16_t lo, hi;
  // cvt ... d, a, b puts a in the upper byte.
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(lo) : "f"(x1), "f"(x0));
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(hi) : "f"(x3), "f"(x2));
  return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
}

// The A fragment of key chunk kk (keys 32 kk .. 32 kk + 31, accumulator groups 4 kk .. 4 kk + 3) from S.
template <int kSRegs>
__device__ __forceinline__ void pack_p_e4m3(const float (&s)[kSRegs], int kk, uint32_t (&a)[4]) {
  const int b = 16 * kk;
  a[0] = pack4_e4m3(s[b + 0], s[b + 1], s[b + 4], s[b + 5]);
  a[1] = pack4_e4m3(s[b + 2], s[b + 3], s[b + 6], s[b + 7]);
  a[2] = pack4_e4m3(s[b + 8], s[b + 9], s[b + 12], s[b + 13]);
  a[3] = pack4_e4m3(s[b + 10], s[b + 11], s[b + 14], s[b + 15]);
}

// P_hi = e4m3(x) and P_lo = e4m3(x - P_hi) of a pair (x0 in the low byte of each), computed in f16x2: x rounded to
// f16 (11 bits; P is scaled to [0, 256], inside f16's normal range down to 2^-14, below e4m3's smallest subnormal
// 2^-9), P_hi from it, P_hi back to f16x2 (exact), one f16x2 subtraction (exact: x and P_hi share sign and exponent
// or P_hi is 0), P_lo from the difference. 5 instructions a pair, where the fp32 route took 8 (entry 22). P_hi is
// e4m3 of f16(x), a double rounding that can differ from e4m3(x) by one e4m3 step at a tie, and P_lo is the
// residual of the P_hi actually used, so P_hi + P_lo stays within P_lo's own rounding (2^-4 of 2^-4 x) plus f16's
// 2^-11 x of x.
__device__ __forceinline__ void e4m3_pair_split(float x0, float x1, uint16_t& hi, uint16_t& lo) {
  uint32_t h, hi_h, r;
  asm("cvt.rn.f16x2.f32 %0, %1, %2;\n" : "=r"(h) : "f"(x1), "f"(x0));
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;\n" : "=h"(hi) : "r"(h));
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(hi_h) : "h"(hi));
  asm("sub.rn.f16x2 %0, %1, %2;\n" : "=r"(r) : "r"(h), "r"(hi_h));
  asm("cvt.rn.satfinite.e4m3x2.f16x2 %0, %1;\n" : "=h"(lo) : "r"(r));
}

// The A fragments of key chunk kk as two e4m3 terms, hi = P_hi and lo = P - P_hi, in pack_p_e4m3's layout: with
// them, P*V in two e4m3 wgmmas sees P to ~7 mantissa bits (P_lo keeps 3 bits of the at most 2^-4 relative
// rounding of P_hi).
template <int kSRegs>
__device__ __forceinline__ void pack_p_e4m3_split(const float (&s)[kSRegs], int kk, uint32_t (&hi)[4],
                                                  uint32_t (&lo)[4]) {
  const int b = 16 * kk;
  // Word w holds the pairs (b + kPair[w][0], + 1) in its low half and (b + kPair[w][1], + 1) in its high half.
  constexpr int kPair[4][2] = {{0, 4}, {2, 6}, {8, 12}, {10, 14}};
#pragma unroll
  for (int w = 0; w < 4; ++w) {
    uint16_t h0, l0, h1, l1;
    e4m3_pair_split(s[b + kPair[w][0]], s[b + kPair[w][0] + 1], h0, l0);
    e4m3_pair_split(s[b + kPair[w][1]], s[b + kPair[w][1] + 1], h1, l1);
    hi[w] = static_cast<uint32_t>(h0) | (static_cast<uint32_t>(h1) << 16);
    lo[w] = static_cast<uint32_t>(l0) | (static_cast<uint32_t>(l1) << 16);
  }
}

// V^T (kDv rows x kKeys columns, K-major for P*V) from V (kKeys rows x kDv columns, as it arrived), both
// SwizzledTile8, by `threads` threads from thread `tid`. A unit is 4 keys x 4 head-dim columns: 4 32-bit reads
// (one per key: the keys chunk_key(4q .. 4q + 3) of one chunk), a 4 x 4 byte transpose (8 byte permutes), 4 32-bit
// writes (one per head-dim row, the 4 bytes at k = 4q .. 4q + 3 of its chunk). Consecutive threads take
// consecutive key quads of one head-dim quad, so a warp's writes fill whole rows (no bank conflict).
// Keys from `valid_keys` on are written as zeros (rows past a sequence's end hold another sequence's or unused
// slots' values, NaN included, and P = 0 times NaN would still be NaN). VLayout: V's tile (SwizzledTile8, or
// SwizzledTile8Sw64 for the 64-byte rows of d64).
template <int kKeys, int kDv, class VLayout = SwizzledTile8<kKeys, kDv>, class VTLayout = SwizzledTile8<kDv, kKeys>>
__device__ __forceinline__ void transpose_v_e4m3(uint32_t v_smem, uint32_t vt_smem, int tid, int threads,
                                                 int valid_keys = kKeys) {
  using V = VLayout;
  using VT = VTLayout;
  constexpr int kKeyQuads = kKeys / 4;
  for (int u = tid; u < kKeyQuads * (kDv / 4); u += threads) {
    const int quad = u % kKeyQuads;  // k = 4 quad .. 4 quad + 3
    const int n0 = 4 * (u / kKeyQuads);
    const int k0 = 4 * quad;
    const int chunk_base = k0 & ~31;
    uint32_t r[4];
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const int key = chunk_base + chunk_key((k0 & 31) + i);
      r[i] = 0;
      if (key < valid_keys) asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r[i]) : "r"(v_smem + V::byte_offset(key, n0)));
    }
    const uint32_t t0 = __byte_perm(r[0], r[1], 0x5140);  // r0.b0 r1.b0 r0.b1 r1.b1
    const uint32_t t1 = __byte_perm(r[2], r[3], 0x5140);
    const uint32_t t2 = __byte_perm(r[0], r[1], 0x7362);  // r0.b2 r1.b2 r0.b3 r1.b3
    const uint32_t t3 = __byte_perm(r[2], r[3], 0x7362);
    const uint32_t out[4] = {__byte_perm(t0, t1, 0x5410), __byte_perm(t0, t1, 0x7632), __byte_perm(t2, t3, 0x5410),
                             __byte_perm(t2, t3, 0x7632)};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(vt_smem + VT::byte_offset(n0 + j, k0)), "r"(out[j]) : "memory");
    }
  }
}

// transpose_v_e4m3 for a 128-key x 128-column block by 128 threads, with a lane mapping under which each load
// instruction of a warp touches 32 different banks. Above, a warp's 32 lanes read one head-dim quad of 32 keys: rows
// 8 apart share a swizzle pattern, so each load is 8-way conflicted (1024 load wavefronts per block, against 128).
// Here thread (warp w, lane = D | B << 2 | e << 4) takes in pass i (0..7) key quad
// q = 4 (e | ((B >> 1) ^ ((i >> 1) & 1)) << 1 | (i >> 2) << 2) + D and head-dim quad m = 4 ((e ^ (i & 1)) | w << 1) + B:
// every (q, m) once over the 4 warps' 32 passes, 128 load and 128 store wavefronts per block (docs/perf-log.md entry
// 19). Word j (0..3) of a pass is key chunk_key(4q + j) of the load side and head-dim row 4m + j of the store side.
// Every bit of a transpose's load and store offsets is an XOR of bits of the thread index, the pass and the word (its
// lane mapping, chunk_key and the swizzles are bit permutations and XORs), so offset(tid, i, j) =
// offset(tid, 0, 0) ^ offset(0, i, j), offset(0, 0, 0) = 0: one per-thread base and a compile-time constant per
// word. Map gives the lane mapping (k0: the pass's first key, n0: its first head-dim row) and the two layouts
// (V: keys x dv, VT: dv x keys); kPasses passes of 128 threads. xor_affine checks every case.
template <class Map, int kPasses>
struct TransposeOffsets {
  __host__ __device__ static constexpr int key(int tid, int i, int j) {
    return (Map::k0(tid, i) & ~31) + chunk_key((Map::k0(tid, i) & 31) + j);
  }
  __host__ __device__ static constexpr uint32_t load_offset(int tid, int i, int j) {
    return Map::V::byte_offset(key(tid, i, j), Map::n0(tid, i));
  }
  __host__ __device__ static constexpr uint32_t store_offset(int tid, int i, int j) {
    return Map::VT::byte_offset(Map::n0(tid, i) + j, Map::k0(tid, i));
  }
  template <bool kStore>
  __host__ __device__ static constexpr uint32_t offset(int tid, int i, int j) {
    return kStore ? store_offset(tid, i, j) : load_offset(tid, i, j);
  }
  template <bool kStore>
  __host__ __device__ static constexpr bool xor_affine() {
    if (offset<kStore>(0, 0, 0) != 0) return false;
    for (int tid = 0; tid < 128; ++tid)
      for (int i = 0; i < kPasses; ++i)
        for (int j = 0; j < 4; ++j)
          if (offset<kStore>(tid, i, j) != (offset<kStore>(tid, 0, 0) ^ offset<kStore>(0, i, j))) return false;
    return true;
  }
  // The bits a thread's base can set: a word's constant XORs into those (kept below 1024 where it can, so the XOR
  // commutes with adding the 1024-aligned tile address) and adds everywhere else.
  template <bool kStore>
  __host__ __device__ static constexpr uint32_t thread_bits() {
    uint32_t bits = 0;
    for (int tid = 0; tid < 128; ++tid) bits |= offset<kStore>(tid, 0, 0);
    return bits;
  }
};

struct TransposeMap128 : TransposeOffsets<TransposeMap128, 8> {
  using Tile = SwizzledTile8<128, 128>;
  using V = Tile;
  using VT = Tile;
  __host__ __device__ static constexpr int k0(int tid, int i) {
    const int lane = tid & 31, d = lane & 3, b = (lane >> 2) & 3, e = (lane >> 4) & 1;
    return 4 * (4 * (e | (((b >> 1) ^ ((i >> 1) & 1)) << 1) | ((i >> 2) << 2)) + d);
  }
  __host__ __device__ static constexpr int n0(int tid, int i) {
    const int w = tid >> 5, b = ((tid & 31) >> 2) & 3, e = ((tid & 31) >> 4) & 1;
    return 4 * (4 * ((e ^ (i & 1)) | (w << 1)) + b);
  }
};
static_assert(TransposeMap128::xor_affine<false>() && TransposeMap128::xor_affine<true>(),
              "transpose_v_e4m3_128's offsets are a per-thread base XOR a per-word constant");

// The generic lane mapping of transpose_v_e4m3 (thread t's pass i takes unit u = t + 128 i: key quad u mod
// kKeys / 4, head-dim quad u / (kKeys / 4)) as a TransposeOffsets map, for full blocks (transpose_v_e4m3_full).
template <int kKeys, int kDv, class VLayout, class VTLayout = SwizzledTile8<kDv, kKeys>>
struct TransposeMapGeneric
    : TransposeOffsets<TransposeMapGeneric<kKeys, kDv, VLayout, VTLayout>, kKeys * kDv / 16 / 128> {
  static constexpr int kPasses = kKeys * kDv / 16 / 128;
  static_assert(kPasses * 128 * 16 == kKeys * kDv, "whole passes of 128 threads");
  using V = VLayout;
  using VT = VTLayout;
  __host__ __device__ static constexpr int k0(int tid, int i) { return 4 * ((tid + 128 * i) % (kKeys / 4)); }
  __host__ __device__ static constexpr int n0(int tid, int i) { return 4 * ((tid + 128 * i) / (kKeys / 4)); }
};

// The address of word (i, j) on one side: tile + (base ^ c), c = offset(0, i, j), as
// ((tile + (base ^ c_high)) ^ c_low) + c_add: c_add (bits no thread's base sets) becomes the instruction's
// immediate, c_low (below 1024, where the 1024-aligned tile adds nothing) one LOP3, and tile + (base ^ c_high) takes
// two values per side (bit 12 of the loads, bit 11 of the stores), computed once per block.
template <bool kStore, class Map = TransposeMap128>
__device__ __forceinline__ uint32_t transpose_address(uint32_t tile, uint32_t base, int i, int j) {
  constexpr uint32_t kThreadBits = Map::template thread_bits<kStore>();
  const uint32_t c = Map::template offset<kStore>(0, i, j);
  const uint32_t c_xor = c & kThreadBits, c_add = c & ~kThreadBits;
  const uint32_t c_high = c_xor & ~1023u, c_low = c_xor & 1023u;
  return ((tile + (base ^ c_high)) ^ c_low) + c_add;
}

// V^T of one 128 x 128 block (transpose_v_e4m3's contract, TransposeMap128's lane mapping). A full block (every key
// valid, all but a sequence's last) takes the addresses as a per-thread base and a constant per word (about 20
// instructions a pass: 4 loads, 8 byte permutes, 4 XORs, 4 stores); the last block (or every block with `keyed`,
// an A/B switch) computes each key to zero the keys past the sequence's end (about 110 a pass, entry 24). kBatch
// passes load before any of them stores.
template <int kBatch>
__device__ __forceinline__ void transpose_v_e4m3_128(uint32_t v_smem, uint32_t vt_smem, int tid,
                                                     int valid_keys = 128, bool keyed = false) {
  using Map = TransposeMap128;
  static_assert(8 % kBatch == 0, "passes come in whole batches");
  auto transpose4 = [](const uint32_t (&r)[4], uint32_t (&out)[4]) {
    const uint32_t t0 = __byte_perm(r[0], r[1], 0x5140);  // r0.b0 r1.b0 r0.b1 r1.b1
    const uint32_t t1 = __byte_perm(r[2], r[3], 0x5140);
    const uint32_t t2 = __byte_perm(r[0], r[1], 0x7362);  // r0.b2 r1.b2 r0.b3 r1.b3
    const uint32_t t3 = __byte_perm(r[2], r[3], 0x7362);
    out[0] = __byte_perm(t0, t1, 0x5410);
    out[1] = __byte_perm(t0, t1, 0x7632);
    out[2] = __byte_perm(t2, t3, 0x5410);
    out[3] = __byte_perm(t2, t3, 0x7632);
  };
  // One unit's transpose and its four stores, word j to addr[j].
  auto transpose_and_store = [&](const uint32_t (&r)[4], const uint32_t (&addr)[4]) {
    uint32_t out[4];
    transpose4(r, out);
#pragma unroll
    for (int j = 0; j < 4; ++j) asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(addr[j]), "r"(out[j]) : "memory");
  };
  if (valid_keys >= 128 && !keyed) {
    const uint32_t load_base = Map::load_offset(tid, 0, 0), store_base = Map::store_offset(tid, 0, 0);
#pragma unroll
    for (int i0 = 0; i0 < 8; i0 += kBatch) {
      uint32_t r[kBatch][4];
#pragma unroll
      for (int x = 0; x < kBatch; ++x)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
          asm volatile("ld.shared.b32 %0, [%1];\n"
                       : "=r"(r[x][j])
                       : "r"(transpose_address<false>(v_smem, load_base, i0 + x, j)));
        }
#pragma unroll
      for (int x = 0; x < kBatch; ++x) {
        uint32_t addr[4];
#pragma unroll
        for (int j = 0; j < 4; ++j) addr[j] = transpose_address<true>(vt_smem, store_base, i0 + x, j);
        transpose_and_store(r[x], addr);
      }
    }
    return;
  }
  // Not unrolled: unrolled, the batches' addresses stayed live at once and the producer (40 registers) spilled.
#pragma unroll 1
  for (int i0 = 0; i0 < 8; i0 += kBatch) {
    uint32_t r[kBatch][4];
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      const int i = i0 + x;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int key = Map::key(tid, i, j);
        r[x][j] = 0;
        if (key < valid_keys) {
          asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r[x][j]) : "r"(v_smem + Map::load_offset(tid, i, j)));
        }
      }
    }
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      uint32_t addr[4];
#pragma unroll
      for (int j = 0; j < 4; ++j) addr[j] = vt_smem + Map::store_offset(tid, i0 + x, j);
      transpose_and_store(r[x], addr);
    }
  }
}

// transpose_v_e4m3 of a full block (every key valid) by 128 threads at constant offsets (TransposeMapGeneric; the
// generic mapping's bank conflicts stay): about 20 instructions a unit instead of ~110. For the d64 native tiles
// (64-byte raw V rows, entry 27) and block_n 64 (the two-CTA d128 tile). kBatch passes load before any of them
// stores (the loads and stores are volatile: one pass's stores otherwise stand before the next pass's loads, and
// each pass waits out a shared-memory load latency; entry 39).
template <int kKeys, int kDv, class VLayout, class VTLayout = SwizzledTile8<kDv, kKeys>, int kBatch = 1>
__device__ __forceinline__ void transpose_v_e4m3_full(uint32_t v_smem, uint32_t vt_smem, int tid) {
  using Map = TransposeMapGeneric<kKeys, kDv, VLayout, VTLayout>;
  static_assert(Map::template xor_affine<false>() && Map::template xor_affine<true>(),
                "the generic mapping's offsets are a per-thread base XOR a per-word constant");
  static_assert(Map::kPasses % kBatch == 0, "passes come in whole batches");
  const uint32_t load_base = Map::load_offset(tid, 0, 0), store_base = Map::store_offset(tid, 0, 0);
#pragma unroll
  for (int i0 = 0; i0 < Map::kPasses; i0 += kBatch) {
    uint32_t r[kBatch][4];
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        asm volatile("ld.shared.b32 %0, [%1];\n"
                     : "=r"(r[x][j])
                     : "r"(transpose_address<false, Map>(v_smem, load_base, i0 + x, j)));
      }
    }
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      const uint32_t t0 = __byte_perm(r[x][0], r[x][1], 0x5140);
      const uint32_t t1 = __byte_perm(r[x][2], r[x][3], 0x5140);
      const uint32_t t2 = __byte_perm(r[x][0], r[x][1], 0x7362);
      const uint32_t t3 = __byte_perm(r[x][2], r[x][3], 0x7362);
      const uint32_t out[4] = {__byte_perm(t0, t1, 0x5410), __byte_perm(t0, t1, 0x7632),
                               __byte_perm(t2, t3, 0x5410), __byte_perm(t2, t3, 0x7632)};
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(transpose_address<true, Map>(vt_smem, store_base, i0 + x, j)),
                     "r"(out[j])
                     : "memory");
      }
    }
  }
}

// V widened instead of transposed (the native kF16Pv tiles, entry 78): a (kKeys x kDv) e4m3 block in RawTile's layout
// (rows of kDv bytes) to fp16 in VTile (the 16-bit MN-major tile that P*V reads), by kThreads threads; keys from
// valid_keys on are zeroed (their P is 0, but the boxes bring whatever follows the sequence, NaN included).
// Unit u = tid + kThreads i is raw chunk c (16 values) of key r (widen_map.h: bank-conflict-free reads and stores);
// it becomes 16-bit chunks 2c and 2c + 1 of that key's row, which differ in address bit 4 only. Each pass moves every
// thread kThreads / kChunks rows on (a multiple of 8), so its offsets advance by constants.
template <int kKeys, int kDv, class RawTile, class VTile, int kThreads, int kBatch = 1>
__device__ __forceinline__ void widen_v_e4m3_f16(uint32_t raw_smem, uint32_t v_smem, int tid, int valid_keys) {
  constexpr int kChunks = kDv / 16;
  constexpr int kRowsPerPass = kThreads / kChunks;
  constexpr int kPasses = kKeys / kRowsPerPass;
  static_assert(kThreads % kChunks == 0 && kKeys % kRowsPerPass == 0 && kRowsPerPass % 8 == 0,
                "whole passes of whole swizzle atoms");
  static_assert(kPasses % kBatch == 0, "passes come in whole batches");
  constexpr WidenUnit kFirst = widen_unit<kChunks>(0);
  static_assert(kFirst.row == 0 && widen_unit<kChunks>(kThreads).row == kRowsPerPass &&
                    widen_unit<kChunks>(kThreads).chunk == kFirst.chunk,
                "a thread's next pass is its unit's row + kRowsPerPass, same chunk");
  const WidenUnit unit = widen_unit<kChunks>(tid);
  const int row0 = unit.row;
  const int c = unit.chunk;
  const uint32_t src0 = raw_smem + RawTile::chunk_offset(row0, c);
  const uint32_t dst0 = v_smem + VTile::chunk_offset(row0, 2 * c);
  const int valid_from_row0 = valid_keys - row0;  // pass i keeps its key while i * kRowsPerPass < this
#pragma unroll
  for (int i0 = 0; i0 < kPasses; i0 += kBatch) {
    uint32_t w[kBatch][4];
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];\n"
                   : "=r"(w[x][0]), "=r"(w[x][1]), "=r"(w[x][2]), "=r"(w[x][3])
                   : "r"(src0 + (i0 + x) * kRowsPerPass * RawTile::kRowBytes));
    }
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      const bool keep = (i0 + x) * kRowsPerPass < valid_from_row0;
      const uint32_t dst = dst0 + (i0 + x) * kRowsPerPass * VTile::kRowBytes;
      // One 16-bit chunk at a time: 8 live results, not 16 (the 192-row tile's producer has 32 registers).
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        uint32_t o[4];
        e4m3x4_to<__half>(keep ? w[x][2 * h] : 0u, o[0], o[1]);
        e4m3x4_to<__half>(keep ? w[x][2 * h + 1] : 0u, o[2], o[3]);
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(dst ^ (16u * h)), "r"(o[0]), "r"(o[1]),
                     "r"(o[2]), "r"(o[3])
                     : "memory");
      }
    }
  }
}

}  // namespace flashseek::sm90

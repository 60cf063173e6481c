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

// x0 and x1 minus their e4m3 rounding (the values pack4_e4m3 stores for them). Exact in fp32: a value and its
// rounding to 3 mantissa bits share sign and exponent (or the rounding is zero), so the difference has few bits.
__device__ __forceinline__ float2 e4m3_residual2(float x0, float x1) {
  uint16_t q;
  asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;\n" : "=h"(q) : "f"(x1), "f"(x0));
  uint32_t h2;
  asm("cvt.rn.f16x2.e4m3x2 %0, %1;\n" : "=r"(h2) : "h"(q));
  float f0, f1;
  asm("{\n .reg .f16 lo, hi;\n mov.b32 {lo, hi}, %2;\n cvt.f32.f16 %0, lo;\n cvt.f32.f16 %1, hi;\n}\n"
      : "=f"(f0), "=f"(f1)
      : "r"(h2));
  return make_float2(x0 - f0, x1 - f1);
}

// The A fragment of key chunk kk holding P - e4m3(P), in pack_p_e4m3's layout: with it, P*V in two e4m3 wgmmas
// sees P to ~7 mantissa bits (P_lo keeps 3 bits of the at most 2^-4 relative rounding of P_hi).
template <int kSRegs>
__device__ __forceinline__ void pack_p_e4m3_residual(const float (&s)[kSRegs], int kk, uint32_t (&a)[4]) {
  const int b = 16 * kk;
  const float2 r0 = e4m3_residual2(s[b + 0], s[b + 1]), r2 = e4m3_residual2(s[b + 2], s[b + 3]);
  const float2 r4 = e4m3_residual2(s[b + 4], s[b + 5]), r6 = e4m3_residual2(s[b + 6], s[b + 7]);
  const float2 r8 = e4m3_residual2(s[b + 8], s[b + 9]), r10 = e4m3_residual2(s[b + 10], s[b + 11]);
  const float2 r12 = e4m3_residual2(s[b + 12], s[b + 13]), r14 = e4m3_residual2(s[b + 14], s[b + 15]);
  a[0] = pack4_e4m3(r0.x, r0.y, r4.x, r4.y);
  a[1] = pack4_e4m3(r2.x, r2.y, r6.x, r6.y);
  a[2] = pack4_e4m3(r8.x, r8.y, r12.x, r12.y);
  a[3] = pack4_e4m3(r10.x, r10.y, r14.x, r14.y);
}

// V^T (kDv rows x kKeys columns, K-major for P*V) from V (kKeys rows x kDv columns, as it arrived), both
// SwizzledTile8, by `threads` threads from thread `tid`. A unit is 4 keys x 4 head-dim columns: 4 32-bit reads
// (one per key: the keys chunk_key(4q .. 4q + 3) of one chunk), a 4 x 4 byte transpose (8 byte permutes), 4 32-bit
// writes (one per head-dim row, the 4 bytes at k = 4q .. 4q + 3 of its chunk). Consecutive threads take
// consecutive key quads of one head-dim quad, so a warp's writes fill whole rows (no bank conflict).
// Keys from `valid_keys` on are written as zeros (rows past a sequence's end hold another sequence's or unused
// slots' values, NaN included, and P = 0 times NaN would still be NaN).
template <int kKeys, int kDv>
__device__ __forceinline__ void transpose_v_e4m3(uint32_t v_smem, uint32_t vt_smem, int tid, int threads,
                                                 int valid_keys = kKeys) {
  using V = SwizzledTile8<kKeys, kDv>;
  using VT = SwizzledTile8<kDv, kKeys>;
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
// 19). kBatch passes load before any of them stores (4 kBatch words of registers).
template <int kBatch>
__device__ __forceinline__ void transpose_v_e4m3_128(uint32_t v_smem, uint32_t vt_smem, int tid,
                                                     int valid_keys = 128) {
  using V = SwizzledTile8<128, 128>;
  using VT = SwizzledTile8<128, 128>;
  static_assert(8 % kBatch == 0, "passes come in whole batches");
  const int w = tid >> 5, lane = tid & 31;
  const int d = lane & 3, b = (lane >> 2) & 3, e = (lane >> 4) & 1;
  // Not unrolled: unrolled, the batches' addresses stayed live at once and the producer (40 registers) spilled.
#pragma unroll 1
  for (int i0 = 0; i0 < 8; i0 += kBatch) {
    uint32_t r[kBatch][4];
    int k0[kBatch], n0[kBatch];
#pragma unroll
    for (int x = 0; x < kBatch; ++x) {
      const int i = i0 + x;
      k0[x] = 4 * (4 * (e | (((b >> 1) ^ ((i >> 1) & 1)) << 1) | ((i >> 2) << 2)) + d);
      n0[x] = 4 * (4 * ((e ^ (i & 1)) | (w << 1)) + b);
      const int chunk_base = k0[x] & ~31;
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int key = chunk_base + chunk_key((k0[x] & 31) + j);
        r[x][j] = 0;
        if (key < valid_keys) {
          asm volatile("ld.shared.b32 %0, [%1];\n" : "=r"(r[x][j]) : "r"(v_smem + V::byte_offset(key, n0[x])));
        }
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
        asm volatile("st.shared.b32 [%0], %1;\n" ::"r"(vt_smem + VT::byte_offset(n0[x] + j, k0[x])), "r"(out[j])
                     : "memory");
      }
    }
  }
}

}  // namespace flashseek::sm90

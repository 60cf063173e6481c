// Native e4m3 wgmma (k32) and the pieces a native fp8 P*V needs (prims/fp8_fragments.h), against double sums on
// the host of the same e4m3 values:
//   S = Q K^T with both operands e4m3 K-major in shared memory (SwizzledTile8), kD / 32 k-steps;
//   O = P V^T: P (e4m3 values) from an accumulator-layout register array packed by pack_p_e4m3 (no data moves
//   between threads), V^T written from a key-major V tile by transpose_v_e4m3 with its keys in chunk_key order,
//   kK / 32 k-steps. A wrong fragment layout or key order gives errors of the size of the values, not rounding.
// Head dims 128 and 256 (128-byte swizzle) and 64 (64-byte swizzle); key blocks 64..256 for QK^T, 128 and 256 for P*V
// (V^T rows are keys).
#include <algorithm>
#include <cmath>
#include <type_traits>
#include <utility>
#include <cuda_fp8.h>

#include "prim_test_util.h"
#include "sm90/prims/async_copy.h"
#include "sm90/prims/fp8_fragments.h"
#include "sm90/prims/smem_tile.h"
#include "sm90/prims/wgmma.h"

using namespace flashseek::sm90;

// Random values that e4m3 holds exactly (|x| < 4, so products and sums stay far from fp32 rounding trouble).
static std::vector<float> e4m3_values(size_t n, unsigned seed) {
  auto v = random_bf16_values(n, seed);
  for (auto& x : v) x = float(__nv_fp8_e4m3(x));
  return v;
}

static std::vector<uint8_t> e4m3_bytes(const std::vector<float>& v) {
  std::vector<uint8_t> out(v.size());
  for (size_t i = 0; i < v.size(); ++i) out[i] = __nv_fp8_e4m3(v[i]).__x;
  return out;
}

template <class Tile>
__device__ void fill_tile(uint32_t tile, const uint8_t* src, int rows, int cols) {
  for (int i = threadIdx.x; i < rows * cols; i += blockDim.x) {
    const int r = i / cols, c = i % cols;
    asm volatile("st.shared.u8 [%0], %1;\n" ::"r"(tile + Tile::byte_offset(r, c)), "r"(uint32_t(src[i])) : "memory");
  }
}

template <int kN>
__device__ void store_acc(const float (&acc)[kN / 2], float* out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * warp + lane / 4 + 8 * (e >> 1);
      const int col = 8 * j + 2 * (lane % 4) + (e & 1);
      out[row * kN + col] = acc[4 * j + e];
    }
}

// S (64 x kN) = Q (64 x kD) K (kN x kD)^T.
template <int kD, int kN>
__global__ void qk_kernel(const uint8_t* q, const uint8_t* k, float* s_out) {
  using QTile = SwizzledTile8<64, kD>;
  using KTile = SwizzledTile8<kN, kD>;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t q_base = smem_addr(smem), k_base = q_base + QTile::kBytes;
  fill_tile<QTile>(q_base, q, 64, kD);
  fill_tile<KTile>(k_base, k, kN, kD);
  fence_proxy_async_shared();
  __syncthreads();
  float acc[kN / 2];
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < kD / 32; ++ks) {
    const uint32_t in_row = (ks % 4) * 32;
    const uint64_t da = make_smem_desc_sw128(q_base + (ks / 4) * QTile::kColumnBlockBytes + in_row, 16, 1024);
    const uint64_t db = make_smem_desc_sw128(k_base + (ks / 4) * KTile::kColumnBlockBytes + in_row, 16, 1024);
    WgmmaSS<__nv_fp8_e4m3, kN>::run(acc, da, db, ks > 0 ? 1 : 0);
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  fence_operands(acc);
  store_acc<kN>(acc, s_out);
}

// S (64 x kN) = Q (64 x 64) K (kN x 64)^T on 64-byte-swizzled e4m3 tiles (the d64 native layout): two k32 steps,
// each 32 bytes further along the 64-byte rows.
template <int kN>
__global__ void qk_sw64_kernel(const uint8_t* q, const uint8_t* k, float* s_out) {
  using QTile = SwizzledTile8Sw64<64>;
  using KTile = SwizzledTile8Sw64<kN>;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t q_base = smem_addr(smem), k_base = q_base + QTile::kBytes;
  fill_tile<QTile>(q_base, q, 64, 64);
  fill_tile<KTile>(k_base, k, kN, 64);
  fence_proxy_async_shared();
  __syncthreads();
  float acc[kN / 2];
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < 2; ++ks) {
    const uint64_t da = make_smem_desc_sw64(q_base + ks * 32, 16, 512);
    const uint64_t db = make_smem_desc_sw64(k_base + ks * 32, 16, 512);
    WgmmaSS<__nv_fp8_e4m3, kN>::run(acc, da, db, ks > 0 ? 1 : 0);
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  fence_operands(acc);
  store_acc<kN>(acc, s_out);
}

// O (64 x kN) = P (64 x kK) V (kK x kN), P given as floats in an accumulator's layout; kSplit: P as two e4m3
// terms (pack_p_e4m3_split, two wgmmas per step), else one (pack_p_e4m3).
// kMappedKeys > 0: V^T by transpose_v_e4m3_128 (the bank-conflict-free lane mapping; 128 x 128 only) with that many
// valid keys (128: the full block's constant-offset path; fewer: the last block's path, which zeroes the rest).
// kN 64: V on the 64-byte swizzle (the d64 native raw layout), transposed by transpose_v_e4m3_full when every key is
// valid (kMappedKeys 0 or kK), else by the generic per-key path with kMappedKeys valid keys.
// kK 64: V^T rows of 64 keys on the 64-byte swizzle (the d256 native tiles' block_n 64), transposed as kN 64's.
template <int kK, int kN, bool kSplit = false, int kMappedKeys = 0>
__global__ void pv_kernel(const float* p, const uint8_t* v, float* o) {
  using VTile = std::conditional_t<kN == 64, SwizzledTile8Sw64<kK>, SwizzledTile8<kK, kN>>;
  using VtTile = std::conditional_t<kK == 64, SwizzledTile8Sw64<kN>, SwizzledTile8<kN, kK>>;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t v_base = smem_addr(smem), vt_base = v_base + VTile::kBytes;
  fill_tile<VTile>(v_base, v, kK, kN);
  __syncthreads();
  if constexpr (kN == 64 || kK == 64) {
    if constexpr (kMappedKeys == 0 || kMappedKeys == kK) {
      transpose_v_e4m3_full<kK, kN, VTile, VtTile>(v_base, vt_base, threadIdx.x);
    } else {
      transpose_v_e4m3<kK, kN, VTile, VtTile>(v_base, vt_base, threadIdx.x, blockDim.x, kMappedKeys);
    }
  } else if constexpr (kMappedKeys > 0) {
    static_assert(kK == 128 && kN == 128, "the lane mapping covers 128 x 128");
    transpose_v_e4m3_128<2>(v_base, vt_base, threadIdx.x, kMappedKeys);
  } else {
    transpose_v_e4m3<kK, kN>(v_base, vt_base, threadIdx.x, blockDim.x);
  }
  fence_proxy_async_shared();
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  float s[kK / 2];
#pragma unroll
  for (int j = 0; j < kK / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * warp + lane / 4 + 8 * (e >> 1);
      const int col = 8 * j + 2 * (lane % 4) + (e & 1);
      s[4 * j + e] = p[row * kK + col];
    }
  float acc[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;
  uint32_t a[kK / 32][4], lo[kK / 32][4];
#pragma unroll
  for (int kk = 0; kk < kK / 32; ++kk) {
    if constexpr (kSplit) {
      pack_p_e4m3_split(s, kk, a[kk], lo[kk]);
    } else {
      pack_p_e4m3(s, kk, a[kk]);
    }
  }
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kK / 32; ++kk) {
    uint64_t db;
    if constexpr (kK == 64) {
      db = make_smem_desc_sw64(vt_base + kk * 32, 16, 512);  // one 64-byte row: two 32-key steps
    } else {
      db = make_smem_desc_sw128(vt_base + (kk / 4) * VtTile::kColumnBlockBytes + (kk % 4) * 32, 16, 1024);
    }
    WgmmaRS<__nv_fp8_e4m3, kN>::run(acc, a[kk], db, kk > 0 ? 1 : 0);
    if constexpr (kSplit) WgmmaRS<__nv_fp8_e4m3, kN>::run(acc, lo[kk], db, 1);
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  fence_operands(acc);
  store_acc<kN>(acc, o);
}

// The e4m3 wgmma accumulator is not fp32: measured on the H200, a k = 128-256 product lands up to ~1e-3 of its
// value away from the exact sum (about 13 kept bits; the fp32 bound 1e-4 * k failed by 1.2-1.5x). 2^-10 of the
// largest sum of |products| bounds that, and a misplaced key or column (a layout bug) is off by a sizeable fraction
// of the value, far above it.
inline float e4m3_accumulation_tolerance(double max_abs_sum) { return static_cast<float>(max_abs_sum / 1024.0); }

// kSw64: the 64-byte-swizzled tiles (kD 64 only).
template <int kD, int kN, bool kSw64 = false>
bool check_qk() {
  static_assert(!kSw64 || kD == 64, "the 64-byte swizzle holds rows of 64 e4m3 values");
  const auto q = e4m3_values(64 * kD, kD + 3 * kN), k = e4m3_values(kN * kD, 11 * kD + kN);
  std::vector<float> want(64 * kN);
  double max_abs_sum = 0;
  for (int i = 0; i < 64; ++i)
    for (int n = 0; n < kN; ++n) {
      double acc = 0, abs_sum = 0;
      for (int d = 0; d < kD; ++d) {
        acc += double(q[i * kD + d]) * k[n * kD + d];
        abs_sum += std::fabs(double(q[i * kD + d]) * k[n * kD + d]);
      }
      want[i * kN + n] = float(acc);
      max_abs_sum = std::max(max_abs_sum, abs_sum);
    }
  auto* dq = to_device(e4m3_bytes(q));
  auto* dk = to_device(e4m3_bytes(k));
  float* ds = nullptr;
  PRIM_CHECK(cudaMalloc(&ds, want.size() * sizeof(float)));
  PRIM_CHECK(cudaMemset(ds, 0xff, want.size() * sizeof(float)));
  const int smem = kD * (64 + kN);
  auto launch = [&](auto kernel) {
    PRIM_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    kernel<<<1, 128, smem>>>(dq, dk, ds);
  };
  if constexpr (kSw64) {
    launch(qk_sw64_kernel<kN>);
  } else {
    launch(qk_kernel<kD, kN>);
  }
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(want.size());
  PRIM_CHECK(cudaMemcpy(got.data(), ds, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  char name[64];
  std::snprintf(name, sizeof(name), "wgmma SS e4m3 m64n%dk32 x %d steps%s", kN, kD / 32,
                kSw64 ? " (64-byte swizzle)" : "");
  return all_close(got, want, e4m3_accumulation_tolerance(max_abs_sum), name);
}

// P (64 x kK) times V (kK x kN) in double, and the largest sum of |products| (the accumulation tolerance's scale).
struct PvReference {
  std::vector<float> out;
  double max_abs_sum;
};
template <int kK, int kN>
PvReference exact_pv(const std::vector<float>& p, const std::vector<float>& v) {
  PvReference r{std::vector<float>(64 * kN), 0.0};
  for (int i = 0; i < 64; ++i)
    for (int n = 0; n < kN; ++n) {
      double acc = 0, abs_sum = 0;
      for (int k = 0; k < kK; ++k) {
        acc += double(p[i * kK + k]) * v[k * kN + n];
        abs_sum += std::fabs(double(p[i * kK + k]) * v[k * kN + n]);
      }
      r.out[i * kN + n] = float(acc);
      r.max_abs_sum = std::max(r.max_abs_sum, abs_sum);
    }
  return r;
}

// One launch of a pv_kernel variant on P (fp32) and V (e4m3 bytes of v); the output is poisoned (NaN) first.
template <int kK, int kN, class Kernel>
std::vector<float> run_pv(Kernel kernel, const std::vector<float>& p, const std::vector<float>& v) {
  float* dp = to_device(p);
  auto* dv = to_device(e4m3_bytes(v));
  float* d_o = nullptr;
  PRIM_CHECK(cudaMalloc(&d_o, 64 * kN * sizeof(float)));
  PRIM_CHECK(cudaMemset(d_o, 0xff, 64 * kN * sizeof(float)));
  const int smem = 2 * kK * kN;  // V and V^T, one byte a value
  PRIM_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, 128, smem>>>(dp, dv, d_o);
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(64 * kN);
  PRIM_CHECK(cudaMemcpy(got.data(), d_o, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  return got;
}

// kMappedKeys as pv_kernel's; with fewer than kK valid keys, the keys past them hold NaN in V (the transpose must
// write zeros there) and zeros in the reference.
template <int kK, int kN, int kMappedKeys = 0>
bool check_pv() {
  const auto p = e4m3_values(64 * kK, 5 * kK + kN);
  auto v = e4m3_values(kK * kN, kK + 13 * kN), v_ref = v;
  const int valid = kMappedKeys > 0 ? kMappedKeys : kK;
  for (int k = valid; k < kK; ++k)
    for (int n = 0; n < kN; ++n) {
      v[k * kN + n] = NAN;
      v_ref[k * kN + n] = 0.f;
    }
  const PvReference ref = exact_pv<kK, kN>(p, v_ref);
  const std::vector<float> got = run_pv<kK, kN>(pv_kernel<kK, kN, false, kMappedKeys>, p, v);
  const auto& want = ref.out;
  const double max_abs_sum = ref.max_abs_sum;
  char name[96];
  std::snprintf(name, sizeof(name), "wgmma RS e4m3 P V^T m64n%dk32 x %d steps%s, %d valid keys", kN, kK / 32,
                kN == 64   ? " (64-byte raw V)"
                : kK == 64 ? " (64-byte V^T rows)"
                : kMappedKeys > 0 ? " (lane-mapped transpose)"
                                  : "",
                valid);
  return all_close(got, want, e4m3_accumulation_tolerance(max_abs_sum), name);
}

// P as fp32 probabilities (not e4m3 values; scaled up to 256 as the kernel scales them): one e4m3 term rounds each
// by up to 2^-4, two terms (P_hi + P_lo) by up to 2^-8. The split result must be within 2^-8 of the largest sum of
// |products| plus the accumulator's 2^-10, and at least 4x closer than the one-term result (so the residual is
// really used, and in the right fragment slots).
template <int kK, int kN>
bool check_pv_split() {
  std::vector<float> p(64 * kK);
  unsigned state = 12345u + kK + kN;
  for (auto& x : p) {
    state = state * 1664525u + 1013904223u;
    x = 256.f * float(state >> 8) / float(1u << 24);
  }
  const auto v = e4m3_values(kK * kN, 7 * kK + kN);
  const PvReference ref = exact_pv<kK, kN>(p, v);
  const auto& want = ref.out;
  const double max_abs_sum = ref.max_abs_sum;
  auto run = [&](auto kernel) {
    const std::vector<float> got = run_pv<kK, kN>(kernel, p, v);
    float worst = 0.f;
    for (size_t i = 0; i < got.size(); ++i) {
      worst = std::max(worst, std::isfinite(got[i]) ? std::fabs(got[i] - want[i]) : INFINITY);
    }
    return std::make_pair(got, worst);
  };
  const auto [split, split_err] = run(pv_kernel<kK, kN, true>);
  const auto [one, one_err] = run(pv_kernel<kK, kN, false>);
  char name[96];
  std::snprintf(name, sizeof(name), "wgmma RS e4m3 P_hi + P_lo m64n%dk32 x %d steps", kN, kK / 32);
  const bool close = all_close(split, want, static_cast<float>(max_abs_sum * (1.0 / 256 + 1.0 / 1024)), name);
  const bool better = split_err * 4.f <= one_err;
  std::printf("%s one e4m3 term: max err %.3g; two terms: %.3g (must be 4x smaller)\n", better ? "ok  " : "FAIL",
              one_err, split_err);
  return close && better;
}

// The V widening of the fp16 P*V tiles (widen_v_e4m3_f16, entry 78): every element of the 16-bit V tile equals its
// e4m3 value (exact), and the keys from valid_keys on are zero although V holds NaN there.
template <int kDv>
__global__ void widen_kernel(const uint8_t* v, float* out, int valid_keys) {
  constexpr int kK = 128;
  using RawBytes = std::conditional_t<kDv == 64, SwizzledTile8Sw64<kK>, SwizzledTile8<kK, kDv>>;
  using RawTile = SwizzledTileFor<kK, kDv / 2>;
  using VTile = SwizzledTile<kK, kDv>;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t raw = smem_addr(smem), v16 = raw + RawTile::kBytes;
  fill_tile<RawBytes>(raw, v, kK, kDv);
  __syncthreads();
  widen_v_e4m3_f16<kK, kDv, RawTile, VTile, 128>(raw, v16, threadIdx.x, valid_keys);
  __syncthreads();
  for (int i = threadIdx.x; i < kK * kDv; i += blockDim.x) {
    const int r = i / kDv, c = i % kDv;
    uint16_t h;
    asm volatile("ld.shared.u16 %0, [%1];\n" : "=h"(h) : "r"(v16 + VTile::element_offset(r, c)));
    out[i] = __half2float(__ushort_as_half(h));
  }
}

template <int kDv>
bool check_widen(int valid_keys) {
  constexpr int kK = 128;
  auto v = e4m3_values(kK * kDv, 31 * kDv + valid_keys);
  std::vector<float> want = v;
  for (int k = valid_keys; k < kK; ++k)
    for (int n = 0; n < kDv; ++n) {
      v[k * kDv + n] = NAN;
      want[k * kDv + n] = 0.f;
    }
  const std::vector<uint8_t> bytes = e4m3_bytes(v);
  uint8_t* d_v;
  float* d_out;
  PRIM_CHECK(cudaMalloc(&d_v, bytes.size()));
  PRIM_CHECK(cudaMalloc(&d_out, want.size() * sizeof(float)));
  PRIM_CHECK(cudaMemcpy(d_v, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  PRIM_CHECK(cudaMemset(d_out, 0xff, want.size() * sizeof(float)));  // NaN until written
  const int smem = SwizzledTileFor<kK, kDv / 2>::kBytes + SwizzledTile<kK, kDv>::kBytes;
  PRIM_CHECK(cudaFuncSetAttribute(widen_kernel<kDv>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  widen_kernel<kDv><<<1, 128, smem>>>(d_v, d_out, valid_keys);
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(want.size());
  PRIM_CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  PRIM_CHECK(cudaFree(d_v));
  PRIM_CHECK(cudaFree(d_out));
  char name[96];
  std::snprintf(name, sizeof(name), "e4m3 V widened to fp16, d%d, %d valid keys", kDv, valid_keys);
  return all_close(got, want, 0.f, name);
}

int main() {
  // The key order on the host side: a permutation of each 32-key chunk.
  bool seen[32] = {};
  for (int k = 0; k < 32; ++k) seen[chunk_key(k)] = true;
  for (bool s : seen)
    if (!s) {
      std::printf("FAIL: chunk_key is not a permutation\n");
      return 1;
    }
  require_hopper_or_skip();
  // Head dims 128 and 256 on the 128-byte swizzle; 64 on the 64-byte swizzle.
  bool ok = check_qk<128, 128>() & check_qk<256, 128>() & check_qk<128, 64>() & check_qk<128, 256>();
  ok &= check_qk<64, 128, true>() & check_qk<64, 64, true>();  // d64 native layout
  ok &= check_pv<128, 64>() & check_pv<128, 64, 100>();          // d64: 64-byte raw V, full and last-block paths
  ok &= check_pv<64, 256>() & check_pv<64, 256, 40>();           // d256: 64-key V^T rows on the 64-byte swizzle
  ok &= check_qk<256, 64>();                                     // d256: S over 64-key blocks
  ok &= check_pv<128, 128>() & check_pv<256, 128>() & check_pv<128, 256>() & check_pv<256, 256>();
  ok &= check_pv_split<128, 128>() & check_pv_split<256, 256>();
  ok &= check_pv<128, 128, 128>() & check_pv<128, 128, 100>() & check_pv<128, 128, 1>();
  ok &= check_widen<64>(128) & check_widen<64>(77) & check_widen<128>(128) & check_widen<128>(1);
  return ok ? 0 : 1;
}

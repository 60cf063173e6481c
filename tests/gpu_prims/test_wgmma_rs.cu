// wgmma with A from registers (the P fragment built from an accumulator's layout) and B in shared memory
// MN-major (V stored key-major, 128-byte swizzle, or the 64-byte swizzle of the d96 tiles' 192-byte rows):
// O = P V over K keys, N = head dim, as the kernel steps it.
#include "prim_test_util.h"
#include "sm90/prims/async_copy.h"
#include "sm90/prims/convert.h"
#include "sm90/prims/smem_tile.h"
#include "sm90/prims/wgmma.h"

using namespace flashseek::sm90;

template <int kK, int kN>
__global__ void pv_kernel(const float* p, const __nv_bfloat16* v, float* o) {
  using VTile = SwizzledTileFor<kK, kN>;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t v_base = smem_addr(smem);
  for (int idx = threadIdx.x; idx < kK * kN / 8; idx += 128)
    cp_async_16_zfill(v_base + VTile::chunk_offset(idx / (kN / 8), idx % (kN / 8)), v + idx * 8, true);
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // P as an m64 x kK accumulator would hold it, then packed exactly like the kernel's convert_p.
  float s[kK / 2];
#pragma unroll
  for (int j = 0; j < kK / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * warp + lane / 4 + 8 * (e >> 1);
      const int col = 8 * j + 2 * (lane % 4) + (e & 1);
      s[4 * j + e] = p[row * kK + col];
    }
  uint32_t pf[kK / 4];
#pragma unroll
  for (int i = 0; i < kK / 4; ++i) pf[i] = pack2<__nv_bfloat16>(s[2 * i], s[2 * i + 1]);

  float acc[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kK / 16; ++kk) {
    // Leading offset: bytes between column blocks along N; stride offset: the next 8 rows along K.
    const uint32_t addr = v_base + kk * 16 * VTile::kRowBytes;
    const uint64_t db = VTile::kSwizzleBytes == 64 ? make_smem_desc_sw64(addr, VTile::kColumnBlockBytes, 512)
                                                   : make_smem_desc_sw128(addr, VTile::kColumnBlockBytes, 1024);
    const uint32_t a[4] = {pf[4 * kk], pf[4 * kk + 1], pf[4 * kk + 2], pf[4 * kk + 3]};
    WgmmaRS<__nv_bfloat16, kN>::run(acc, a, db, kk > 0 ? 1 : 0);
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  fence_operands(acc);
#pragma unroll
  for (int j = 0; j < kN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * warp + lane / 4 + 8 * (e >> 1);
      const int col = 8 * j + 2 * (lane % 4) + (e & 1);
      o[row * kN + col] = acc[4 * j + e];
    }
}

template <int kK, int kN>
bool check() {
  const auto p = random_bf16_values(64 * kK, kK + 7 * kN);
  const auto v = random_bf16_values(kK * kN, kK * 5 + kN);
  std::vector<float> want(64 * kN, 0.f);
  for (int i = 0; i < 64; ++i)
    for (int n = 0; n < kN; ++n) {
      double acc = 0;
      for (int k = 0; k < kK; ++k) acc += double(p[i * kK + k]) * v[k * kN + n];
      want[i * kN + n] = float(acc);
    }
  float* dp = to_device(p);
  auto* dv = to_device(to_bf16(v));
  float* d_o = nullptr;
  PRIM_CHECK(cudaMalloc(&d_o, want.size() * sizeof(float)));
  PRIM_CHECK(cudaMemset(d_o, 0xff, want.size() * sizeof(float)));
  const int smem = SwizzledTileFor<kK, kN>::kBytes;
  auto kernel = pv_kernel<kK, kN>;
  PRIM_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, 128, smem>>>(dp, dv, d_o);
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(want.size());
  PRIM_CHECK(cudaMemcpy(got.data(), d_o, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  char name[64];
  std::snprintf(name, sizeof(name), "wgmma RS m64n%dk16 x %d steps", kN, kK / 16);
  return all_close(got, want, 1e-3f * kK, name);
}

int main() {
  require_hopper_or_skip();
  bool ok = check<128, 128>() & check<128, 64>() & check<80, 256>() & check<112, 192>() & check<128, 192>() &
            check<128, 96>() & check<64, 96>();  // N 96: the 64-byte swizzle (the d96 tiles' V)
  return ok ? 0 : 1;
}

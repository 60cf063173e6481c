// wgmma with both operands in shared memory, K-major, 128-byte swizzle (S = Q K^T in the kernel): a 64 x N x D
// product stepped over D 16 columns at a time exactly as the kernel steps it, against a host fp32 product.
#include "prim_test_util.h"
#include "sm90/prims/async_copy.h"
#include "sm90/prims/smem_tile.h"
#include "sm90/prims/wgmma.h"

using namespace flashseek::sm90;

template <int kN, int kD>
__global__ void qk_kernel(const __nv_bfloat16* a, const __nv_bfloat16* b, float* c) {
  using ATile = SwizzledTile<64, kD>;
  using BTile = SwizzledTile<kN, kD>;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t a_base = smem_addr(smem);
  const uint32_t b_base = a_base + ATile::kBytes;
  for (int idx = threadIdx.x; idx < 64 * kD / 8; idx += 128)
    cp_async_16_zfill(a_base + ATile::chunk_offset(idx / (kD / 8), idx % (kD / 8)), a + idx * 8, true);
  for (int idx = threadIdx.x; idx < kN * kD / 8; idx += 128)
    cp_async_16_zfill(b_base + BTile::chunk_offset(idx / (kD / 8), idx % (kD / 8)), b + idx * 8, true);
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // generic-proxy writes, async-proxy reads
  __syncthreads();

  float acc[kN / 2];
#pragma unroll
  for (int i = 0; i < kN / 2; ++i) acc[i] = 0.f;
  wgmma_fence();
#pragma unroll
  for (int ks = 0; ks < kD / 16; ++ks) {
    const uint32_t in_row = (ks % 4) * 32;
    const uint64_t da = make_smem_desc_sw128(a_base + (ks / 4) * ATile::kColumnBlockBytes + in_row, 16, 1024);
    const uint64_t db = make_smem_desc_sw128(b_base + (ks / 4) * BTile::kColumnBlockBytes + in_row, 16, 1024);
    WgmmaSS<__nv_bfloat16, kN>::run(acc, da, db, ks > 0 ? 1 : 0);
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  fence_operands(acc);

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int j = 0; j < kN / 8; ++j)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * warp + lane / 4 + 8 * (e >> 1);
      const int col = 8 * j + 2 * (lane % 4) + (e & 1);
      c[row * kN + col] = acc[4 * j + e];
    }
}

template <int kN, int kD>
bool check() {
  const auto a = random_bf16_values(64 * kD, kN + kD);
  const auto b = random_bf16_values(kN * kD, kN * 3 + kD);
  std::vector<float> want(64 * kN, 0.f);
  for (int i = 0; i < 64; ++i)
    for (int j = 0; j < kN; ++j) {
      double s = 0;
      for (int k = 0; k < kD; ++k) s += double(a[i * kD + k]) * b[j * kD + k];
      want[i * kN + j] = float(s);
    }
  auto* da = to_device(to_bf16(a));
  auto* db = to_device(to_bf16(b));
  float* dc = nullptr;
  PRIM_CHECK(cudaMalloc(&dc, want.size() * sizeof(float)));
  PRIM_CHECK(cudaMemset(dc, 0xff, want.size() * sizeof(float)));  // NaN poison
  const int smem = SwizzledTile<64, kD>::kBytes + SwizzledTile<kN, kD>::kBytes;
  auto kernel = qk_kernel<kN, kD>;
  PRIM_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  kernel<<<1, 128, smem>>>(da, db, dc);
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(want.size());
  PRIM_CHECK(cudaMemcpy(got.data(), dc, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  char name[64];
  std::snprintf(name, sizeof(name), "wgmma SS m64n%dk16 x %d steps", kN, kD / 16);
  return all_close(got, want, 1e-3f * kD, name);
}

int main() {
  require_hopper_or_skip();
  bool ok = check<128, 128>() & check<128, 64>() & check<112, 192>() & check<80, 256>() & check<128, 192>();
  return ok ? 0 : 1;
}

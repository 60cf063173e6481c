// SwizzledTile: cp.async chunks placed by chunk_offset and read back by element_offset give back the matrix,
// and no two chunks of a tile share an address.
#include <set>

#include "prim_test_util.h"
#include "sm90/prims/async_copy.h"
#include "sm90/prims/smem_tile.h"

using namespace flashseek::sm90;

template <class Tile, int kRows, int kCols>
__global__ void roundtrip_kernel(const __nv_bfloat16* in, float* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = smem_addr(smem);
  for (int idx = threadIdx.x; idx < kRows * kCols / 8; idx += blockDim.x) {
    const int row = idx / (kCols / 8), chunk = idx % (kCols / 8);
    cp_async_16_zfill(base + Tile::chunk_offset(row, chunk), in + row * kCols + chunk * 8, true);
  }
  asm volatile("cp.async.wait_all;\n" ::: "memory");
  __syncthreads();
  for (int idx = threadIdx.x; idx < kRows * kCols; idx += blockDim.x) {
    const int row = idx / kCols, col = idx % kCols;
    out[idx] = __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(smem + Tile::element_offset(row, col)));
  }
}

template <int kRows, int kCols>
bool check_tile() {
  using Tile = SwizzledTile<kRows, kCols>;
  std::set<uint32_t> seen;
  for (int r = 0; r < kRows; ++r)
    for (int c = 0; c < kCols / 8; ++c) {
      const uint32_t off = Tile::chunk_offset(r, c);
      if (off % 16 != 0 || off >= Tile::kBytes || !seen.insert(off).second) {
        std::printf("FAIL chunk_offset(%d, %d) = %u collides or leaves the tile\n", r, c, off);
        return false;
      }
    }
  const auto values = random_bf16_values(kRows * kCols, kRows * 131 + kCols);
  auto* d_in = to_device(to_bf16(values));
  float* d_out = nullptr;
  PRIM_CHECK(cudaMalloc(&d_out, values.size() * sizeof(float)));
  auto kernel = roundtrip_kernel<Tile, kRows, kCols>;
  PRIM_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, Tile::kBytes));
  kernel<<<1, 128, Tile::kBytes>>>(d_in, d_out);
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(values.size());
  PRIM_CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  char name[64];
  std::snprintf(name, sizeof(name), "swizzled tile %dx%d", kRows, kCols);
  return all_close(got, values, 0.f, name);
}

int main() {
  require_hopper_or_skip();
  bool ok = check_tile<128, 128>() & check_tile<80, 256>() & check_tile<112, 192>() & check_tile<64, 64>();
  return ok ? 0 : 1;
}

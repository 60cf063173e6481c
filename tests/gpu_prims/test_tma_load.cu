// TMA (kLoopTmaKv's producer, sm90/producer_tma.h): a 3D tensor map over a (rows, heads, cols) bf16 tensor with
// padded strides, encoded on the host through the runtime's driver entry point (host/tensor_map.h), loads one
// (block_n x 128) K tile of one head with one elected thread: expect_tx + two boxes (64 columns each, 128-byte
// swizzle) + one arrival of count 128 on a barrier initialised for 128. Read back through SwizzledTile's
// element_offset, the tile must equal the tensor's rows, with zeros for rows past the tensor's end and for
// columns past d (d = 96 in the second case).
#include <cuda.h>

#include <cstring>
#include <string>

#include "host/tensor_map.h"
#include "prim_test_util.h"
#include "sm90/prims/async_copy.h"
#include "sm90/prims/mbarrier.h"
#include "sm90/prims/smem_tile.h"
#include "sm90/prims/tma.h"

using namespace flashseek::sm90;

constexpr int kBlockN = 128;
constexpr int kCols = 128;
using Tile = SwizzledTile<kBlockN, kCols>;

__global__ void tma_tile_kernel(const __grid_constant__ TmaDescriptor tmap, int head, int first_row, float* out) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = smem_addr(smem);
  const uint32_t bar = base + Tile::kBytes;
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 128);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    prefetch_tensormap(&tmap);
    mbarrier_expect_tx(bar, Tile::kBytes);
    for (int cb = 0; cb < Tile::kColumnBlocks; ++cb) {
      tma_load_3d(base + cb * Tile::kColumnBlockBytes, &tmap, cb * 64, head, first_row, bar);
    }
    mbarrier_arrive_count(bar, 128);
  }
  mbarrier_wait(bar, 0);
  for (int idx = threadIdx.x; idx < kBlockN * kCols; idx += blockDim.x) {
    const int row = idx / kCols, col = idx % kCols;
    out[idx] = __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(smem + Tile::element_offset(row, col)));
  }
}

bool check(int rows, int heads, int d, int64_t head_stride, int64_t row_stride, int head, int first_row) {
  const size_t elems = static_cast<size_t>(rows - 1) * row_stride + (heads - 1) * head_stride + d;
  const auto values = random_bf16_values(elems, rows * 7 + d);
  auto* d_in = to_device(to_bf16(values));
  CUtensorMap map;
  const std::string why = flashseek::encode_rows_tensor_map(&map, d_in, d, heads, rows, head_stride, row_stride,
                                                            kBlockN);
  if (!why.empty()) {
    std::printf("FAIL: encode_rows_tensor_map: %s\n", why.c_str());
    return false;
  }
  TmaDescriptor desc;
  static_assert(sizeof(desc) == sizeof(map), "TmaDescriptor must match CUtensorMap");
  std::memcpy(&desc, &map, sizeof(desc));
  float* d_out = nullptr;
  PRIM_CHECK(cudaMalloc(&d_out, kBlockN * kCols * sizeof(float)));
  const int smem_bytes = Tile::kBytes + 64;
  PRIM_CHECK(cudaFuncSetAttribute(tma_tile_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  tma_tile_kernel<<<1, 128, smem_bytes>>>(desc, head, first_row, d_out);
  PRIM_CHECK(cudaGetLastError());
  PRIM_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(kBlockN * kCols), want(kBlockN * kCols, 0.f);
  PRIM_CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int r = 0; r < kBlockN; ++r)
    for (int c = 0; c < d; ++c)
      if (first_row + r < rows) want[r * kCols + c] = values[(first_row + r) * row_stride + head * head_stride + c];
  char name[128];
  std::snprintf(name, sizeof(name), "tma tile rows %d heads %d d %d head %d first_row %d", rows, heads, d, head,
                first_row);
  PRIM_CHECK(cudaFree(d_in));
  PRIM_CHECK(cudaFree(d_out));
  return all_close(got, want, 0.f, name);
}

int main() {
  require_hopper_or_skip();
  bool ok = true;
  // (total_k, Hkv, d) contiguous, a full block inside the tensor.
  ok &= check(1000, 4, 128, 128, 4 * 128, 2, 256);
  // The tensor's end inside the box: rows past it read as zeros.
  ok &= check(1000, 4, 128, 128, 4 * 128, 3, 1000 - 40);
  // d 96 in a 128-column tile with padded strides (a KV slice of a fused qkv tensor): columns 96.. are zeros.
  ok &= check(700, 2, 96, 104, 3 * 2 * 104, 1, 64);
  return ok ? 0 : 1;
}

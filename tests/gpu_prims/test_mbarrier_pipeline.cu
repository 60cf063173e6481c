// The producer/consumer stage ring: a producer warpgroup streams tiles with cp.async (zero-filling rows past
// the end) and cp.async.mbarrier.arrive.noinc; a consumer warpgroup waits on the full barrier, reads, and
// releases through the empty barrier. Many more tiles than stages exercise the phase parity logic.
#include "prim_test_util.h"
#include "sm90/prims/async_copy.h"
#include "sm90/prims/mbarrier.h"
#include "sm90/prims/smem_tile.h"

using namespace flashseek::sm90;

constexpr int kStages = 2;
constexpr int kTiles = 37;
constexpr int kRows = 64, kCols = 64;
constexpr int kValidRowsLastTile = 23;
using Tile = SwizzledTile<kRows, kCols>;

__global__ void __launch_bounds__(256, 1) pipeline_kernel(const __nv_bfloat16* in, float* tile_sums) {
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = smem_addr(smem);
  const uint32_t bars = base + kStages * Tile::kBytes;
  auto full = [&](int s) { return bars + 8 * s; };
  auto empty = [&](int s) { return bars + 8 * (kStages + s); };
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(full(s), 128);
      mbarrier_init(empty(s), 4);
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  const int tid = threadIdx.x % 128;
  if (threadIdx.x < 128) {
    for (int t = 0; t < kTiles; ++t) {
      const int stage = t % kStages;
      mbarrier_wait(empty(stage), ((t / kStages) & 1) ^ 1);
      const int valid_rows = t == kTiles - 1 ? kValidRowsLastTile : kRows;
      for (int idx = tid; idx < kRows * kCols / 8; idx += 128) {
        const int row = idx / (kCols / 8), chunk = idx % (kCols / 8);
        const bool valid = row < valid_rows;
        cp_async_16_zfill(base + stage * Tile::kBytes + Tile::chunk_offset(row, chunk),
                          in + (size_t(t) * kRows + row) * kCols + chunk * 8, valid);
      }
      cp_async_arrive_on(full(stage));
    }
    asm volatile("cp.async.wait_all;\n" ::: "memory");
  } else {
    for (int t = 0; t < kTiles; ++t) {
      const int stage = t % kStages;
      mbarrier_wait(full(stage), (t / kStages) & 1);
      float sum = 0.f;
      for (int idx = tid; idx < kRows * kCols; idx += 128) {
        const int row = idx / kCols, col = idx % kCols;
        sum += __bfloat162float(
            *reinterpret_cast<const __nv_bfloat16*>(smem + stage * Tile::kBytes + Tile::element_offset(row, col)));
      }
      for (int o = 16; o > 0; o >>= 1) sum += __shfl_xor_sync(0xffffffff, sum, o);
      if (tid % 32 == 0) {
        atomicAdd(&tile_sums[t], sum);
        mbarrier_arrive(empty(stage));
      }
    }
  }
}

int main() {
  require_hopper_or_skip();
  std::vector<float> values(size_t(kTiles) * kRows * kCols);
  std::mt19937 rng(3);
  for (auto& v : values) v = float(int(rng() % 17) - 8);  // small integers: sums are exact
  // Rows past the end of the last tile hold NaN in memory: zero-fill must keep them out.
  for (int r = kValidRowsLastTile; r < kRows; ++r)
    for (int c = 0; c < kCols; ++c) values[(size_t(kTiles - 1) * kRows + r) * kCols + c] = NAN;
  std::vector<float> want(kTiles, 0.f);
  for (int t = 0; t < kTiles; ++t)
    for (int r = 0; r < (t == kTiles - 1 ? kValidRowsLastTile : kRows); ++r)
      for (int c = 0; c < kCols; ++c) want[t] += values[(size_t(t) * kRows + r) * kCols + c];
  auto* d_in = to_device(to_bf16(values));
  float* d_sums = to_device(std::vector<float>(kTiles, 0.f));
  const int smem = kStages * Tile::kBytes + 2 * kStages * 8;
  PRIM_CHECK(cudaFuncSetAttribute(pipeline_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  pipeline_kernel<<<1, 256, smem>>>(d_in, d_sums);
  PRIM_CHECK(cudaGetLastError());
  std::vector<float> got(kTiles);
  PRIM_CHECK(cudaMemcpy(got.data(), d_sums, kTiles * sizeof(float), cudaMemcpyDeviceToHost));
  return all_close(got, want, 0.f, "mbarrier stage ring (37 tiles, 2 stages, zero-filled tail)") ? 0 : 1;
}

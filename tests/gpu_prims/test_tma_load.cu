// TMA (the K/V producer of sm90/producer_tma.h): a 4D tensor map (cols, heads, rows, pages) over a bf16 tensor
// with arbitrary strides, encoded on the host through the runtime's driver entry point (host/tensor_map.h), fills
// one (block_n x 128) K tile of one head: lane j of one warp loads box j (box_rows rows of page pages[j] from row
// rows[j]; 64 columns each, 128-byte swizzle) at tile row j * box_rows; lane 0 raises the transaction count and
// gives the 128 arrivals of a barrier initialised for 128. Read back through SwizzledTile's element_offset, the
// tile must equal the tensor's rows, with zeros for rows past a page's end and for columns past d (d = 96).
// Cases: a dense K (one page, one box per block), an NHD and an HND paged cache with 16-row boxes; and the 64-byte
// swizzle (32-column boxes: the d64 e4m3 layout, prims/fp8_fragments.h SwizzledTile8Sw64) on a paged and a dense K.
#include <cuda.h>

#include <cstring>
#include <string>
#include <vector>

#include "host/tensor_map.h"
#include "prim_test_util.h"
#include "sm90/prims/async_copy.h"
#include "sm90/prims/fp8_fragments.h"
#include "sm90/prims/mbarrier.h"
#include "sm90/prims/smem_tile.h"
#include "sm90/prims/tma.h"

using namespace flashseek::sm90;

constexpr int kBlockN = 128;
constexpr int kMaxBoxes = 16;

// The tile a case fills: 128 16-bit columns on the 128-byte swizzle (two 64-column blocks, SwizzledTile), or 32 on
// the 64-byte swizzle (one 64-byte row per key: the d64 e4m3 layout, SwizzledTile8Sw64, as pairs of bytes).
template <bool kSw64>
struct TileOf {
  static constexpr int kCols = kSw64 ? 32 : 128;
  static constexpr int kColumnBlocks = kSw64 ? 1 : 2;
  static constexpr int kRowBytes = kSw64 ? 64 : 128;
  static constexpr int kColumnBlockBytes = kBlockN * kRowBytes;
  static constexpr int kBytes = kColumnBlocks * kColumnBlockBytes;
  __host__ __device__ static constexpr uint32_t element_offset(int row, int col) {
    return kSw64 ? SwizzledTile8Sw64<kBlockN>::byte_offset(row, 2 * col)
                 : SwizzledTile<kBlockN, 128>::element_offset(row, col);
  }
};

struct Boxes {
  int count;
  int rows[kMaxBoxes];
  int pages[kMaxBoxes];
};

template <bool kSw64>
__global__ void tma_tile_kernel(const __grid_constant__ TmaDescriptor tmap, int head, int box_rows, Boxes boxes,
                                float* out) {
  using Tile = TileOf<kSw64>;
  constexpr int kCols = Tile::kCols;
  extern __shared__ __align__(1024) uint8_t smem[];
  const uint32_t base = smem_addr(smem);
  const uint32_t bar = base + Tile::kBytes;
  if (threadIdx.x == 0) {
    mbarrier_init(bar, 128);
    mbarrier_init_fence();
  }
  __syncthreads();
  const int lane = threadIdx.x;
  if (threadIdx.x < 32) {
    if (lane == 0) {
      prefetch_tensormap(&tmap);
      mbarrier_expect_tx(bar, Tile::kBytes);
    }
    if (lane < boxes.count) {
      for (int cb = 0; cb < Tile::kColumnBlocks; ++cb) {
        tma_load_4d(base + lane * box_rows * Tile::kRowBytes + cb * Tile::kColumnBlockBytes, &tmap, cb * 64, head,
                    boxes.rows[lane], boxes.pages[lane], bar);
      }
    }
    if (lane == 0) mbarrier_arrive_count(bar, 128);
  }
  mbarrier_wait(bar, 0);
  for (int idx = threadIdx.x; idx < kBlockN * kCols; idx += blockDim.x) {
    const int row = idx / kCols, col = idx % kCols;
    out[idx] = __bfloat162float(*reinterpret_cast<const __nv_bfloat16*>(smem + Tile::element_offset(row, col)));
  }
}

// A (pages, rows, heads, d) tensor at the given element strides; the block is `boxes` of box_rows rows.
template <bool kSw64 = false>
bool check(const char* what, int pages, int rows, int heads, int d, int64_t page_stride, int64_t row_stride,
           int64_t head_stride, int head, int box_rows, const Boxes& boxes) {
  using Tile = TileOf<kSw64>;
  constexpr int kCols = Tile::kCols;
  const size_t elems = static_cast<size_t>(pages - 1) * page_stride + static_cast<size_t>(rows - 1) * row_stride +
                       (heads - 1) * head_stride + d;
  const auto values = random_bf16_values(elems, rows * 7 + d + pages);
  auto* d_in = to_device(to_bf16(values));
  CUtensorMap map;
  const std::string why = flashseek::encode_kv_tensor_map(&map, d_in, d, heads, rows, pages, head_stride,
                                                          row_stride, page_stride, box_rows, kSw64);
  if (!why.empty()) {
    std::printf("FAIL: %s: encode_kv_tensor_map: %s\n", what, why.c_str());
    return false;
  }
  TmaDescriptor desc;
  static_assert(sizeof(desc) == sizeof(map), "TmaDescriptor must match CUtensorMap");
  std::memcpy(&desc, &map, sizeof(desc));
  float* d_out = nullptr;
  PRIM_CHECK(cudaMalloc(&d_out, kBlockN * kCols * sizeof(float)));
  const int smem_bytes = Tile::kBytes + 64;
  PRIM_CHECK(
      cudaFuncSetAttribute(tma_tile_kernel<kSw64>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  tma_tile_kernel<kSw64><<<1, 128, smem_bytes>>>(desc, head, box_rows, boxes, d_out);
  PRIM_CHECK(cudaGetLastError());
  PRIM_CHECK(cudaDeviceSynchronize());
  std::vector<float> got(kBlockN * kCols), want(kBlockN * kCols, 0.f);
  PRIM_CHECK(cudaMemcpy(got.data(), d_out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  for (int j = 0; j < boxes.count; ++j)
    for (int r = 0; r < box_rows; ++r)
      for (int c = 0; c < d; ++c) {
        const int row = boxes.rows[j] + r;
        if (row < rows)
          want[(j * box_rows + r) * kCols + c] =
              values[boxes.pages[j] * page_stride + row * row_stride + head * head_stride + c];
      }
  char name[160];
  std::snprintf(name, sizeof(name), "tma tile %s (pages %d rows %d heads %d d %d head %d box rows %d%s)", what,
                pages, rows, heads, d, head, box_rows, kSw64 ? ", 64-byte swizzle" : "");
  PRIM_CHECK(cudaFree(d_in));
  PRIM_CHECK(cudaFree(d_out));
  return all_close(got, want, 0.f, name);
}

int main() {
  require_hopper_or_skip();
  bool ok = true;
  // Dense (total_k, Hkv, d), contiguous: one page, a full block inside the tensor.
  ok &= check("dense", 1, 1000, 4, 128, 0, 4 * 128, 128, 2, kBlockN, Boxes{1, {256}, {0}});
  // The tensor's end inside the box: rows past it read as zeros.
  ok &= check("dense end", 1, 1000, 4, 128, 0, 4 * 128, 128, 3, kBlockN, Boxes{1, {1000 - 40}, {0}});
  // d 96 in a 128-column tile with padded strides (a KV slice of a fused qkv tensor): columns 96.. are zeros.
  ok &= check("dense d96", 1, 700, 2, 96, 0, 3 * 2 * 104, 104, 1, kBlockN, Boxes{1, {64}, {0}});
  // Paged NHD (pages, 16, Hkv, d): eight 16-row boxes from scattered pages.
  const Boxes scattered{8, {0, 0, 0, 0, 0, 0, 0, 0}, {5, 0, 11, 3, 3, 9, 1, 12}};
  ok &= check("paged NHD", 13, 16, 4, 128, 16 * 4 * 128, 4 * 128, 128, 1, 16, scattered);
  // Paged HND (pages, Hkv, 64, d) with 16-row boxes inside 64-row pages (rows 0, 16, 32, 48 of a page).
  const Boxes in_pages{8, {0, 16, 32, 48, 0, 16, 32, 48}, {2, 2, 2, 2, 7, 7, 7, 7}};
  ok &= check("paged HND", 9, 64, 2, 128, 2 * 64 * 128, 128, 64 * 128, 1, 16, in_pages);
  // The d64 e4m3 layout (64-byte rows, 64-byte swizzle) as 32 pairs: paged NHD with 16-row boxes, a dense end.
  ok &= check<true>("paged NHD sw64", 13, 16, 4, 32, 16 * 4 * 32, 4 * 32, 32, 2, 16, scattered);
  ok &= check<true>("dense end sw64", 1, 1000, 2, 32, 0, 2 * 32, 32, 1, kBlockN, Boxes{1, {1000 - 40}, {0}});
  return ok ? 0 : 1;
}

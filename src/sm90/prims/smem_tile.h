// The one shared-memory tile layout of the kernels: a (rows x cols) tile of 16-bit elements stored as column
// blocks of 64 elements (128 bytes per row), each block row-major with the 128-byte swizzle: the 16-byte chunk
// c of row r lives at chunk position c ^ (r % 8). wgmma reads it as a K-major operand (Q, K: rows = M or N,
// columns = head dim) and as an MN-major operand (V: rows = keys = K dim, columns = head dim = N).
#pragma once

#include <cstdint>

namespace flashseek::sm90 {

template <int kRows, int kCols>
struct SwizzledTile {
  static_assert(kCols % 64 == 0, "tiles hold whole 64-column blocks");
  static_assert(kRows % 8 == 0, "tiles hold whole 8-row swizzle atoms");
  static constexpr int kRowBytes = 128;
  static constexpr int kColumnBlocks = kCols / 64;
  static constexpr int kColumnBlockBytes = kRows * kRowBytes;
  static constexpr int kBytes = kColumnBlocks * kColumnBlockBytes;
  static constexpr int kChunksPerRow = kCols / 8;  // 16-byte chunks

  // Byte offset of 16-byte chunk `chunk` (column chunk*8) of row `row`.
  __host__ __device__ static constexpr uint32_t chunk_offset(int row, int chunk) {
    return static_cast<uint32_t>((chunk >> 3) * kColumnBlockBytes + row * kRowBytes +
                                 (((chunk & 7) ^ (row & 7)) << 4));
  }
  // Byte offset of element (row, col); col even pairs share a 4-byte word.
  __host__ __device__ static constexpr uint32_t element_offset(int row, int col) {
    return chunk_offset(row, col >> 3) + ((col & 7) << 1);
  }
};

}  // namespace flashseek::sm90

// The one shared-memory tile layout of the kernels: a (rows x cols) tile of 16-bit elements stored as column
// blocks of 64 elements (128 bytes per row), each block row-major with the 128-byte swizzle: the 16-byte chunk
// c of row r lives at chunk position c ^ (r % 8). wgmma reads it as a K-major operand (Q, K: rows = M or N,
// columns = head dim) and as an MN-major operand (V: rows = keys = K dim, columns = head dim = N).
#pragma once

#include <cstdint>
#include <type_traits>

#include "../host_device.h"

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
  static constexpr int kSwizzleBytes = 128;

  // Byte offset of 16-byte chunk `chunk` (column chunk*8) of row `row`.
  FLASHSEEK_HOST_DEVICE static constexpr uint32_t chunk_offset(int row, int chunk) {
    return static_cast<uint32_t>((chunk >> 3) * kColumnBlockBytes + row * kRowBytes +
                                 (((chunk & 7) ^ (row & 7)) << 4));
  }
  // Byte offset of element (row, col); col even pairs share a 4-byte word.
  FLASHSEEK_HOST_DEVICE static constexpr uint32_t element_offset(int row, int col) {
    return chunk_offset(row, col >> 3) + ((col & 7) << 1);
  }
};

// The 64-byte-swizzled tile (wgmma layout type 2, TMA CU_TENSOR_MAP_SWIZZLE_64B): column blocks of 32 16-bit
// elements (64 e4m3 values) per row, each block 8-row atoms of 512 bytes; the 16-byte chunk c (0..3) of a block's
// row r lives at chunk position c ^ ((r / 2) % 4). One block for the d64 native e4m3 tiles, three for d192's
// 192-byte rows (which no 128-byte block divides). The interface of SwizzledTile so that the producers and the
// consumer take either; K-major only (Q, K, the raw V rows and V^T).
template <int kRows, int kCols>
struct SwizzledTile64 {
  static_assert(kCols % 32 == 0, "tiles hold whole 32-column (64-byte) blocks");
  static_assert(kRows % 8 == 0, "tiles hold whole 8-row swizzle atoms");
  static constexpr int kRowBytes = 64;
  static constexpr int kColumnBlocks = kCols / 32;
  static constexpr int kColumnBlockBytes = kRows * kRowBytes;
  static constexpr int kBytes = kColumnBlocks * kColumnBlockBytes;
  static constexpr int kChunksPerRow = kCols / 8;
  static constexpr int kSwizzleBytes = 64;
  FLASHSEEK_HOST_DEVICE static constexpr uint32_t chunk_offset(int row, int chunk) {
    return static_cast<uint32_t>((chunk >> 2) * kColumnBlockBytes + row * kRowBytes +
                                 (((chunk & 3) ^ ((row >> 1) & 3)) << 4));
  }
  FLASHSEEK_HOST_DEVICE static constexpr uint32_t element_offset(int row, int col) {
    return chunk_offset(row, col >> 3) + ((col & 7) << 1);
  }
};

// The tile a 16-bit column count takes: the 128-byte swizzle where 64-column blocks divide the row, else the
// 64-byte swizzle (32 columns: d64 e4m3 rows; 96: d192 e4m3 rows).
template <int kRows, int kCols>
using SwizzledTileFor =
    std::conditional_t<kCols % 64 != 0, SwizzledTile64<kRows, kCols>, SwizzledTile<kRows, kCols>>;

}  // namespace flashseek::sm90

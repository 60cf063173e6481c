// Which 16-value chunk of a raw e4m3 V block each producer thread widens into the fp16 V tile
// (prims/fp8_fragments.h widen_v_e4m3_f16, docs/perf-log.md entry 78): unit u of a block's (keys x chunks) units.
// Plain C++ so that the CPU tests check the mapping against the tiles' swizzles (tests/cpp/test_plan.cpp).
#pragma once

#include "host_device.h"

namespace flashseek::sm90 {

struct WidenUnit {
  int row;    // key of the block
  int chunk;  // 16-byte raw chunk of its row (e4m3 columns 16 chunk .. 16 chunk + 15)
};

// d64 (4 chunks a row): unit u is chunk u % 4 of row u / 4; a phase of 8 threads reads two adjacent 64-byte raw rows
// and stores at swizzle positions {0, 2, 4, 6} ^ r and {1, 3, 5, 7} ^ r.
// d128 (8 chunks a row, the fp16 row two 64-column blocks): in row order a phase's 8 threads would write the two
// column blocks' same positions (2-way conflicts on every store), so each group of 8 units takes chunks 0-3 of one
// row and 4-7 of the next (then the other way round): the reads hit raw positions {0..3} ^ r and {4..7} ^ (r + 1),
// the stores {0, 2, 4, 6} ^ r and {1, 3, 5, 7} ^ r.
// Either way unit u + 128 is unit u's row + 128 / chunks with the same chunk, so a thread's passes advance by
// constant offsets (whole 8-row swizzle atoms).
template <int kChunks>
FLASHSEEK_HOST_DEVICE constexpr WidenUnit widen_unit(int u) {
  static_assert(kChunks == 4 || kChunks == 8, "d64 or d128 rows");
  if constexpr (kChunks == 8) {
    const int group = u >> 3;
    const int lane = u & 7;
    return WidenUnit{2 * (group >> 1) + (lane >> 2), (lane & 3) + 4 * (((lane >> 2) ^ group) & 1)};
  } else {
    return WidenUnit{u / kChunks, u % kChunks};
  }
}

}  // namespace flashseek::sm90

// A row's visible columns of one thread's S fragment as a bit mask (docs/perf-log.md entry 75). Plain C++ as well,
// so that CPU tests compare it with the element-wise limits it replaces (tests/cpp/test_plan.cpp).
//
// A thread holds columns col0 + 8 j + e of an accumulator row (j < kN / 8 <= 31, e in {0, 1}). A row sees one
// range of keys [lo, hi], so for each e the visible j form one run of bits. One mask per (row, e) costs a handful
// of integer instructions; each element is then one FSEL on a predicate that ptxas unpacks seven at a time (R2P).
// Two compares per element (col > hi, col < lo) and a select made the window's mask 10.7% of the d64 sliding
// window kernel's samples (entry 64).
#pragma once

#include <cstdint>

#include "host_device.h"

namespace flashseek {

// ~0 << s and ~0 >> s for s >= 0, 0 from s = 32 on (one SHF each on the device: the funnel shifts clamp at 32).
FLASHSEEK_HOST_DEVICE inline uint32_t ones_from(int s) {
#ifdef __CUDA_ARCH__
  return __funnelshift_lc(0u, 0xffffffffu, static_cast<unsigned>(s));
#else
  return s >= 32 ? 0u : 0xffffffffu << s;
#endif
}
FLASHSEEK_HOST_DEVICE inline uint32_t ones_below(int s) {  // ~0 >> s
#ifdef __CUDA_ARCH__
  return __funnelshift_rc(0xffffffffu, 0u, static_cast<unsigned>(s));
#else
  return s >= 32 ? 0u : 0xffffffffu >> s;
#endif
}

// Bit j set iff lo <= 8 j <= hi (lo, hi relative to the column of bit 0; hi < 256, lo below overflow).
FLASHSEEK_HOST_DEVICE inline uint32_t visible_column_bits(int lo, int hi) {
  const int first = lo <= 0 ? 0 : (lo + 7) >> 3;  // ceil(lo / 8), at least 0
  const int last = hi >> 3;                       // floor(hi / 8) (arithmetic shift), below 32
  return ones_from(first) & ones_below(31 - last);
}

// The bits of element pair e of a row whose visible keys are [lo, hi], for a thread whose first column is col0 and
// whose fragment spans kN <= 248 columns: clamped to [col0 - 8, col0 + kN - 1] first, so that unbounded limits (+-2^30)
// do not overflow.
template <int kN>
FLASHSEEK_HOST_DEVICE inline uint32_t row_column_bits(int lo, int hi, int col0, int e) {
  const int lo_rel = (lo > col0 - 8 ? lo : col0 - 8) - col0 - e;
  const int hi_rel = (hi < col0 + kN - 1 ? hi : col0 + kN - 1) - col0 - e;
  return visible_column_bits(lo_rel, hi_rel);
}

// Key blocks [lo, hi) need no element masked for any row of a tile (entry 109): block n (keys n * block_n ..
// n * block_n + block_n - 1) lies below seqlen_k, at or before `right_last` (the last key the tile's first row sees;
// right_bounded) and at or after `left_first` (the first key its last row sees; left_bounded). The loop then tests a
// block with two compares instead of restating those limits each block. hi may be below lo (no unmasked block).
FLASHSEEK_HOST_DEVICE inline int floor_div_pos(int a, int b) { return a >= 0 ? a / b : -((b - 1 - a) / b); }
FLASHSEEK_HOST_DEVICE inline void unmasked_block_range(int block_n, int seqlen_k, bool right_bounded, int right_last,
                                                       bool left_bounded, int left_first, int& lo, int& hi) {
  hi = floor_div_pos(seqlen_k, block_n);
  if (right_bounded) {
    const int h = floor_div_pos(right_last + 1, block_n);
    hi = h < hi ? h : hi;
  }
  lo = 0;
  if (left_bounded && left_first > 0) lo = (left_first + block_n - 1) / block_n;
}

}  // namespace flashseek

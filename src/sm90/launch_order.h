// The one-tile kernel's launch order under FwdParams::lpt_section (docs/perf-log.md entry 66): the tile the CTA of
// linear launch index `linear` takes. Plain C++ as well, so that CPU tests check it (tests/cpp/test_plan.cpp).
#pragma once

#include "host_device.h"

namespace flashseek {

// heaviness 0 is a pair's heaviest tile; (y, z) the pair's grid coordinates.
struct LaunchTile {
  int heaviness;
  int y;
  int z;
};

// The grid's (y, z) pairs (y fastest) in sections of `section`; a section's tiles heaviness by heaviness, its pairs
// fastest. A section of one pair is each pair's tiles after the previous pair's. Dividends below 2^31 (run() checks
// the grid's size).
FLASHSEEK_HOST_DEVICE inline LaunchTile lpt_tile_of(int linear, int grid_x, int grid_y, int grid_z, int section) {
  const int pairs = grid_y * grid_z;
  const int first_pair = linear / (section * grid_x) * section;
  const int section_pairs = pairs - first_pair < section ? pairs - first_pair : section;
  const int r = linear - first_pair * grid_x;
  const int heaviness = r / section_pairs;
  const int pair = first_pair + (r - heaviness * section_pairs);
  return {heaviness, pair % grid_y, pair / grid_y};
}

// Whether lpt's order pays for a grid of `tiles` CTAs on `num_sms` SMs (host only). In the old order the last
// pair's heaviest tile starts when all else is nearly done and runs alone; that tail is about one tile's share of
// 2 * num_sms / tiles of the work, so it matters on small grids only. Entry 66 measured (2 rounds, noise 2%):
// MLAp16 q4k (512 tiles) -13%, G9 2q4k and MLAp16 4q2k (1024) -7% and -5%; grids of 2048 tiles and more within
// +-3% either way (G27 q8k +3%, P3 q8k -3.5%). 10 tiles a SM: a tail of a fifth or more.
inline bool lpt_pays(long long tiles, int num_sms) { return tiles <= 10LL * num_sms; }

}  // namespace flashseek

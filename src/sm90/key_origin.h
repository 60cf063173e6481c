// Where a windowed tile's key blocks start (FwdParams::window_origin_rows, docs/perf-log.md entry 102). Plain C++
// as well, so that CPU tests check it (tests/cpp/test_plan.cpp).
//
// Key blocks from key 0 cut a window's keys wherever the multiples of block_n fall: a 192-row d64 tile of 24
// tokens under a 128-key window sees 151 keys and computed 2 or 3 blocks of 128 (2.1 on average). Blocks that
// start at the tile's first visible key, rounded down to `rows` (a TMA box's rows in a paged cache, so that no box
// straddles two pages; 1 elsewhere), need ceil((151 + up to rows - 1) / block_n): never more blocks than from
// key 0 when rows divides block_n. TileWork::resolve (fwd_kernel.h) takes the origin only where it saves a block.
#pragma once

#include "host_device.h"

namespace flashseek {

// The keys to skip before the tile's first key block: its first visible key `first_key` (negative: none to skip)
// rounded down to a multiple of `rows`, at most `seqlen_k` (0 with rows <= 0: blocks from key 0).
FLASHSEEK_HOST_DEVICE inline int window_key_origin(int first_key, int seqlen_k, int rows) {
  if (rows <= 0 || first_key <= 0) return 0;
  const int origin = first_key / rows * rows;
  return origin < seqlen_k ? origin : (seqlen_k > 0 ? seqlen_k : 0);
}

// FwdParams::window_origin_rows of a call (0: every tile's blocks from key 0). Not where the caller fixes the
// split count (num_splits = 1 is vLLM's batch-invariant mode, and every bit-changing choice of the plan waits for
// num_splits = 0): a tile's origin depends on its first row, so on the batch's tile height, and on the cache's box
// rows, and a request's bits must depend on neither (tests/reliability/test_determinism.py). Nor under context
// parallelism, whose tiles hold every cp_world-th token.
constexpr int window_origin_rows_of(bool enabled, int window_left, int cp_world_size, int caller_num_splits,
                                    bool paged, int kv_tma_rows) {
  if (!enabled || window_left < 0 || cp_world_size > 1 || caller_num_splits != 0) return 0;
  return paged && kv_tma_rows > 0 ? kv_tma_rows : 1;  // no TMA box straddles a page; other layouts take any row
}

}  // namespace flashseek

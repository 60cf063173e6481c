// Compile-time shape of the MLA decode kernel: roles, register budgets, named barriers, shared-memory map.
//
// Roles (three warpgroups): 0 produces (cp.async gathers of the query tile and the key blocks), 1 ("scores")
// computes S = Q' K'^T, the mask and the online softmax, and O[:, 0:256] += P V[:, 0:256]; 2 ("values") takes P
// and the row corrections from shared memory and computes O[:, 256:512] += P V[:, 256:512]. The 64-row tile is
// the same for both consumers: thread t of one holds the same rows as thread t of the other, so P moves between
// them in register-fragment order (no layout change, conflict-free 16-byte shared accesses).
#pragma once

#include <cstdint>

#include "../../host/mla_decode_tile.h"
#include "../prims/smem_tile.h"

namespace flashseek::sm90::mla {

// Named barrier ids of this kernel (0 is __syncthreads).
// (The P exchange between the consumers uses mbarriers, p_full / p_empty below: a named-barrier arrive / sync
// hand-off is correct but compute-sanitizer's racecheck does not see it as ordering.)
enum class Barrier : uint32_t {
  kEpilogue0 = 3,   // + consumer index: staging of the output within one consumer warpgroup
};

template <class Element_>
struct Traits {
  using Element = Element_;
  using Tile = MlaDecodeTile;
  static constexpr int kBlockM = Tile::kBlockM;
  static constexpr int kBlockN = Tile::kBlockN;
  static constexpr int kStages = Tile::kStages;
  static constexpr int kDqk = Tile::kHeadDimQK;
  static constexpr int kDv = Tile::kHeadDimV;
  static constexpr int kDvHalf = kDv / 2;  // output columns per consumer warpgroup
  static constexpr int kThreads = 384;

  // Registers after setmaxnreg: the producer's 36 copies per block with their addresses and 4 prefetched page
  // ids spill at 56; the consumers hold O (128 floats), S (32 floats) and P (16 words) and fit in 208 without
  // spills (checked at 208 and 216). 128 * 80 + 256 * 208 = 63488 <= 65536.
  static constexpr int kProducerRegs = 80;
  static constexpr int kConsumerRegs = 208;

  // Column blocks (64 columns each) of a 576-wide row: 0..7 = v (kv_c, 512), 8 = k (k_pe, 64). The query tile has
  // the same order: q_v in 0..7, q in 8.
  using RowTile = SwizzledTile<kBlockN, kDqk>;
  using QTile = SwizzledTile<kBlockM, kDqk>;
  static_assert(kBlockM == kBlockN, "one tile type serves both");
  static constexpr int kVChunks = kDv / 8;   // 16-byte chunks of a row taken from v
  static constexpr int kKChunks = Tile::kHeadDim / 8;

  // The P exchange buffer: 128 threads x 16 words (P of one thread's rows), then 128 x 2 row factors.
  static constexpr int kPWords = kBlockN / 4;
  static constexpr uint32_t kPBytes = 128 * kPWords * 4;
  static constexpr uint32_t kCorrBytes = 128 * 2 * 4;

  static constexpr uint32_t kQOffset = 0;
  static constexpr uint32_t kKOffset = kQOffset + QTile::kBytes;
  static constexpr uint32_t kPOffset = kKOffset + kStages * RowTile::kBytes;
  static constexpr uint32_t kCorrOffset = kPOffset + kPBytes;
  static constexpr uint32_t kBarrierOffset = kCorrOffset + kCorrBytes;
  // q_full, per stage full and empty, then p_full and p_empty (the consumers' P exchange).
  static constexpr int kNumBarriers = 3 + 2 * kStages;
  static constexpr uint32_t kSmemBytes = kBarrierOffset + kNumBarriers * 8;
  static_assert(kSmemBytes <= 232448, "over the 227 KB shared-memory limit of sm_90");
  static_assert(kKOffset % 1024 == 0 && RowTile::kBytes % 1024 == 0, "swizzle atoms need 1024-byte alignment");

  __host__ __device__ static constexpr uint32_t q_full_barrier() { return kBarrierOffset; }
  __host__ __device__ static constexpr uint32_t full_barrier(int s) { return kBarrierOffset + 8 * (1 + s); }
  __host__ __device__ static constexpr uint32_t empty_barrier(int s) {
    return kBarrierOffset + 8 * (1 + kStages + s);
  }
  // scores -> values: P and the corrections of a block (or the final factors) are written; 128 arrivals.
  __host__ __device__ static constexpr uint32_t p_full_barrier() { return kBarrierOffset + 8 * (1 + 2 * kStages); }
  // values -> scores: the exchange buffer was read; 128 arrivals.
  __host__ __device__ static constexpr uint32_t p_empty_barrier() { return kBarrierOffset + 8 * (2 + 2 * kStages); }
  __host__ __device__ static constexpr uint32_t stage_offset(int s) { return kKOffset + s * RowTile::kBytes; }
};

}  // namespace flashseek::sm90::mla

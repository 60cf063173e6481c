// Compile-time shape of one forward kernel: tiles, threads, register budgets and the shared-memory map.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>

#include <cstdint>
#include <type_traits>

#include "../host/tile_table.h"
#include "loop_values.h"
#include "prims/smem_tile.h"

namespace flashseek::sm90 {

// Element: the 16-bit type the tensor cores multiply (q's dtype; fp16 for an e4m3 q). kFp8Kv: K and V arrive as
// e4m3 and the producer converts them (exactly) into Element tiles; q may then be e4m3 too (FwdParams::q_fp8).
// kVariant: 0 the tile table's tile; n > 0 decode_variant_tile(n) (a decode experiment, tile_table.h).
template <class Element_, int kHeadDim, int kHeadDimV, int kBlockM_, bool kFp8Kv_ = false, int kVariant_ = 0>
struct FwdKernelTraits {
  using Element = Element_;
  static constexpr bool kFp8Kv = kFp8Kv_;
  static constexpr int kVariant = kVariant_;
  static constexpr TileShape kShape =
      kVariant_ == 0 ? find_tile_shape(kHeadDim, kHeadDimV, kBlockM_, kFp8Kv_)
      : kVariant_ == kFp8NativeVariant || kVariant_ == kFp8NativeOnePVariant
          ? fp8_native_tile(kHeadDim, kHeadDimV, kBlockM_)
      : kVariant_ == kFp8NativeF16PvVariant ? fp8_native_f16pv_tile(kHeadDim, kHeadDimV, kBlockM_)
      : kVariant_ == kFp8NativeF16PvTwoCtaVariant ? kFp8NativeF16PvTwoCtaTile
      : kVariant_ == kFp8NativeKeysAsMVariant     ? kFp8NativeKeysAsMTile
      : kVariant_ == kFp8NativeKeysAsMTwoCtaVariant ? kFp8NativeKeysAsMTwoCtaTile
      : kVariant_ == kFp8NativeTwoCtaVariant  ? kFp8NativeTwoCtaTile
      : kVariant_ == kFp8NativeHeadPackVariant ? fp8_native_head_pack_tile(kHeadDim, kHeadDimV)
      : kVariant_ == kFp8NativeHeadPackTwoCtaVariant ? kFp8NativeHeadPackTwoCtaTile
      : kVariant_ == kD96M192Variant                 ? kD96M192Tile
      : kVariant_ == kD64WindowVariant               ? kD64WindowTile
                                                     : decode_variant_tile(kVariant_);
  static_assert(kShape.block_m == kBlockM_, "no such tile in the tile table");
  static_assert(kShape.head_dim == kHeadDim && kShape.head_dim_v == kHeadDimV && kShape.fp8_kv == kFp8Kv_,
                "the variant tile is for other head dims");
  static constexpr int kD = kHeadDim;
  static constexpr int kDv = kHeadDimV;
  static constexpr int kBlockM = kShape.block_m;
  static constexpr int kBlockN = kShape.block_n;  // rows of a K/V block (keys, or keys x heads when head-packed)
  // Head-packed (tile_table.h kFp8NativeHeadPackTiles): FwdParams::kv_head_pack KV heads per CTA, block row t is key
  // t >> kv_head_pack_log2 of head t & (kv_head_pack - 1); TMA boxes only.
  static constexpr bool kHeadPacked =
      kVariant_ == kFp8NativeHeadPackVariant || kVariant_ == kFp8NativeHeadPackTwoCtaVariant;
  static_assert(!kHeadPacked || (!kShape.native_copies && kBlockM_ == 64), "head-packed: TMA, one consumer");
  static constexpr int kStages = kShape.stages;
  static constexpr int kRawStages = kShape.raw_stages;
  static_assert(kBlockN % 16 == 0, "P*V steps over keys 16 at a time");
  // Native e4m3 (kFp8NativeVariant): the GEMMs take e4m3 operands (k32 steps); Element stays the output type.
  static constexpr bool kFp8Native = kShape.fp8_native;
  static_assert(!kFp8Native || (kFp8Kv && std::is_same_v<Element, __nv_bfloat16>), "native e4m3: bf16 out");
  using MmaElement = std::conditional_t<kFp8Native, __nv_fp8_e4m3, Element>;
  static constexpr int kElementBytes = kFp8Native ? 1 : 2;
  // P is multiplied by 2^8 before its e4m3 rounding (exp2's argument + 8, the consumer's softmax update; max 256 of
  // e4m3's 448) so that small probabilities keep their bits; the epilogue divides it out of O and the row sums.
  // fp16 P (kF16Pv) keeps the factor: 256 is far inside fp16's range and its normals then reach 2^-22 of the max.
  static constexpr float kPScale = kFp8Native ? 256.f : 1.f;
  // Native e4m3, variant 200: P enters P*V as two e4m3 terms, P_hi = e4m3(P) and P_lo = e4m3(P - P_hi), two wgmmas
  // per key step into the same O. One e4m3 P (3 mantissa bits, up to 6% per probability) put one output element
  // in 10^8 past vLLM's 0.15 rule (entry 18); the pair keeps ~7 bits, close to bf16's 8. Decode is memory-bound,
  // so the second wgmma costs it nothing; prefill pays 1.5 units of e4m3 tensor work instead of 1 (bf16: 2).
  // Native e4m3, variant 205 (kF16Pv): P*V in fp16 on a V tile the producer widened from e4m3 (exact), P as one
  // fp16 term; QK^T stays e4m3.
  static constexpr bool kF16Pv = kVariant_ == kFp8NativeF16PvVariant || kVariant_ == kFp8NativeF16PvTwoCtaVariant ||
                                 kVariant_ == kFp8NativeKeysAsMVariant || kVariant_ == kFp8NativeKeysAsMTwoCtaVariant;
  static_assert(!kF16Pv || kFp8Native, "fp16 P*V is a native e4m3 variant");
  static constexpr bool kSplitP = kFp8Native && !kF16Pv && kVariant_ != kFp8NativeOnePVariant;
  // The P*V operands' type: e4m3 (P and V^T) on the native tiles, fp16 on kF16Pv, else the 16-bit Element.
  using PvMmaElement = std::conditional_t<kF16Pv, __half, MmaElement>;
  // P*V reads V^T (e4m3, K-major) on the native tiles, else a 16-bit V (MN-major).
  static constexpr bool kPvE4m3 = kFp8Native && !kF16Pv;

  // Key-split tiles (TileShape::key_split, decode tile 4): kKeySplit consumer warpgroups per 64 rows, each taking
  // every kKeySplit-th key block.
  static constexpr int kKeySplit = kShape.key_split;
  static_assert(kKeySplit == 1 || (kShape.stages > kKeySplit && kShape.stages % kKeySplit == 0),
                "a warpgroup waits for its blocks' fills only: each stage must hold one warpgroup's blocks (a ring "
                "of a multiple of the key split), so that a full barrier's parity names that warpgroup's fill "
                "(entry 89)");
  static constexpr int kConsumerWarpgroups = kBlockM / 64 * kKeySplit;
  // P*V of a block retires before QK^T of the next writes S (consumer.h), so that S and P are never live at once:
  // the one-block windowed d64 tile (tile_table.h kD64WindowTile), whose tiles are mostly one block anyway.
  static constexpr bool kSerialPv = kVariant_ == kD64WindowVariant;
  // Two consumer warpgroups take turns issuing their GEMMs, so one's softmax overlaps the other's GEMMs (not the
  // key-split tiles', whose warpgroups run different block counts).
  static constexpr bool kPingpong = kConsumerWarpgroups == 2 && kKeySplit == 1;
  static constexpr int kThreads = 128 * (1 + kConsumerWarpgroups);
  // Registers per thread after setmaxnreg (only with two consumer warpgroups: 384 threads start at 168 each):
  // the gathering producer keeps enough for its address arithmetic; consumers hold S (kBlockN / 2 floats),
  // P (kBlockN / 4 words) and O (kDv / 2 floats) at once. 128 * 40 + 256 * 232 = 64512 <= 65536.
  // With one consumer warpgroup (256 threads) every thread may use up to 255 registers from the start.
  // Two CTAs per SM (decode variant): 256 threads start at 128 registers each (half the register file); the
  // producer gives up to 40, the consumer takes 216: 128 * 40 + 128 * 216 = 32768.
  static constexpr int kCtasPerSm = kShape.ctas_per_sm;
  static_assert(kCtasPerSm >= 1 && kCtasPerSm <= 4, "one to four CTAs per SM");
  // Three consumer warpgroups (block_m 192, d64): 512 threads start at 128; the producer gives up to 32, the
  // consumers take 160 (S 64 + P 32 + O 32 words at d64 / block_n 128; 152 spilled): 128 * 32 + 384 * 160 = 65536.
  static constexpr bool kReallocateRegisters = kConsumerWarpgroups >= 2 || kCtasPerSm >= 2;
  // The native e4m3 two-CTA tile's producer transposes V (tile_table.h kFp8NativeTwoCtaTile): 56, consumer 200.
  // Native d192's producer issues three K boxes per lane (64-byte column blocks) beside the transpose: at 40 it
  // spilled; 48 leaves the two consumers 224 each (128 x 48 + 256 x 224 = 63488 <= 384 x 168).
  // Three consumer warpgroups: 32 (the native d64 producer's transpose fits too; at 40 the consumers' 152 spilled).
  // Four CTAs per SM (decode tile 9, 64 registers at launch): 32, the keys-as-M consumer 96.
  static constexpr int kProducerRegs = kConsumerWarpgroups == 3 || kCtasPerSm == 4 ? 32
                                       : kFp8Native && kCtasPerSm == 2          ? 56
                                       : kFp8Native && kHeadDim % 128 != 0 && kHeadDim > 64 ? 48
                                                                                : 40;
  // setmaxnreg.inc takes registers only from those the CTA's own warpgroups released (it blocks until they are
  // there): the split must fit what the CTA got at launch, kThreads x the launch bound's registers per thread
  // (384 threads: 168, not the register file's 65536 / 384; a d192 split of 48 + 2 x 232 = 65536 hung).
  static constexpr int kLaunchRegs = (65536 / (kThreads * kCtasPerSm)) / 8 * 8;
  static constexpr int kConsumerRegs =
      ((kThreads * kLaunchRegs - 128 * kProducerRegs) / (128 * kConsumerWarpgroups)) / 8 * 8;
  static_assert(!kReallocateRegisters || kConsumerWarpgroups != 2 || kProducerRegs != 40 || kConsumerRegs == 232,
                "the measured split of the two-consumer tiles");
  static_assert(!kReallocateRegisters ||
                    128 * kProducerRegs + 128 * kConsumerWarpgroups * kConsumerRegs <= kThreads * kLaunchRegs,
                "register split over the registers the CTA holds at launch");

  // Tiles in bytes: an e4m3 tile of c columns has the bytes (and swizzle) of a 16-bit tile of c / 2; rows of 64
  // bytes (d64 native e4m3) take the 64-byte swizzle (SwizzledTile64).
  using QTile = SwizzledTileFor<kBlockM, kD * kElementBytes / 2>;
  using KTile = SwizzledTileFor<kBlockN, kD * kElementBytes / 2>;
  // The tile P*V reads: V (keys x dv, MN-major) for 16-bit, V^T (dv x keys, K-major) for native e4m3.
  // 16-bit V of dv 96 (the d96 tiles): three 64-byte-swizzled column blocks, MN-major (SwizzledTileFor).
  using VTile = std::conditional_t<kPvE4m3, SwizzledTileFor<kDv, kBlockN / 2>, SwizzledTileFor<kBlockN, kDv>>;
  // Native e4m3: V as it arrives (keys x dv bytes); a placeholder for the others.
  using VRawTile = std::conditional_t<kFp8Native, SwizzledTileFor<kBlockN, kDv / 2>, SwizzledTile<8, 64>>;
  using OTile = SwizzledTileFor<kBlockM, kDv>;     // the output staged for the 16-byte stores
  static_assert(kFp8Native || kDv <= kD, "the output is staged in the Q tile");

  // Shared-memory map (byte offsets from a 1024-byte aligned base).
  static constexpr uint32_t kQOffset = 0;
  static constexpr uint32_t kKOffset = kQOffset + QTile::kBytes;
  static constexpr uint32_t kVOffset = kKOffset + kStages * KTile::kBytes;
  // fp8: raw e4m3 staging, per raw stage the K rows (kD bytes each) then the V rows (kDv bytes each), row-major.
  static constexpr uint32_t kRawOffset = kVOffset + kStages * VTile::kBytes;
  static constexpr uint32_t kRawKBytes = kBlockN * kD;
  static constexpr uint32_t kRawStageBytes = kFp8Native ? VRawTile::kBytes : kBlockN * (kD + kDv);
  static_assert(!kFp8Kv || kFp8Native || kRawStages * kRawStageBytes >= kBlockM * kD,
                "an e4m3 Q tile is staged there too");
  static_assert(!kFp8Native || (kRawOffset % 1024 == 0 && kRawStageBytes % 1024 == 0),
                "raw V stages take 128-byte-swizzled boxes, and the transpose XORs offsets below 1024 into them");
  // Per key row of the block being loaded: the element offsets of its K and V rows, double buffered.
  static constexpr uint32_t kRowOffsetsOffset = kRawOffset + kRawStages * kRawStageBytes;
  static constexpr uint32_t kRowOffsetsBytes = 2 * 2 * kBlockN * sizeof(int64_t);
  // Native e4m3 stages O in a 16-bit tile of its own (its Q tile holds bytes); the others in Q.
  static constexpr uint32_t kOStagingOffset =
      kFp8Native ? (kRowOffsetsOffset + kRowOffsetsBytes + 1023) / 1024 * 1024 : kQOffset;
  // Keys-as-M tiles (TileShape::query_rows, consumer_keys_as_m.h): P^T (query rows x block_n, 16-bit, K-major with
  // the 128-byte swizzle: the B operand of O^T = V^T P^T), then the warps' column maxima (two buffers of 4 warps x
  // query rows floats, alternating by block).
  static constexpr int kQueryRows = kShape.query_rows;
  static_assert(kQueryRows == 0 || ((kQueryRows == 8 || kQueryRows == 16) && kBlockM == 64 && (!kFp8Kv || kF16Pv) &&
                                    kD % 64 == 0 && kDv % 64 == 0),
                "keys-as-M tiles: 8 or 16 query rows, 16-bit P*V (16-bit, or native e4m3 with fp16 P*V)");
  // One P^T tile and one pair of maxima buffers per consumer warpgroup.
  using PtTile = SwizzledTile<kQueryRows == 0 ? 8 : kQueryRows, kQueryRows == 0 ? 64 : kBlockN>;
  // (Native e4m3: past its O staging tile.)
  static constexpr uint32_t kPtOffset =
      ((kFp8Native ? kOStagingOffset + OTile::kBytes : kRowOffsetsOffset + kRowOffsetsBytes) + 1023) / 1024 * 1024;
  static constexpr uint32_t kColMaxOffset = kPtOffset + kConsumerWarpgroups * PtTile::kBytes;
  static constexpr uint32_t kColMaxBytes = kConsumerWarpgroups * 2 * 4 * kQueryRows * sizeof(float);
  static constexpr uint32_t kBarrierOffset = kQueryRows > 0 ? kColMaxOffset + kColMaxBytes
                                             : kFp8Native     ? kOStagingOffset + OTile::kBytes
                                                              : kRowOffsetsOffset + kRowOffsetsBytes;
  // Barriers: q_full, then per stage k_full, k_empty, v_full, v_empty; native e4m3 adds per raw stage v_raw_full
  // (V's TMA landed) and v_raw_empty (the four producer warps transposed it).
  static constexpr int kNumBarriers = 1 + 4 * kStages + (kFp8Native ? 2 * kRawStages : 0);
  static constexpr uint32_t kSmemBytes = kBarrierOffset + kNumBarriers * sizeof(uint64_t);
  static_assert(kSmemBytes <= 232448, "over the 227 KB shared-memory limit of sm_90");
  // 228 KB per SM, 1 KB of it reserved per resident CTA.
  static_assert(kCtasPerSm * (kSmemBytes + 1024) <= 233472, "the CTAs per SM do not fit the SM's shared memory");
  static_assert(kKOffset % 1024 == 0 && kVOffset % 1024 == 0 && KTile::kBytes % 1024 == 0 &&
                    VTile::kBytes % 1024 == 0,
                "swizzle atoms need 1024-byte aligned tiles");

  // The persistent kernel (kLoopPersistent, fwd_persistent.h) adds, past the map above: an O staging tile (the
  // epilogue cannot stage in Q, which the producer refills for the next tile during this tile's last P*V and
  // epilogue) and the q_empty barrier (the consumers' release of Q after their last QK^T).
  // Then the tile hand-off of the dynamic scheduler: two slots holding a tile index, each with a full barrier
  // (the fetching thread's arrival) and an empty one (one arrival per warp that read it).
  // Where the O tile does not fit beside the stages, the epilogue stores O from registers instead
  // (kPersistORegs): the 64-row decode tiles (entries 83, 86: a handful of their 64 rows are queries, G query heads
  // x the query tokens; d128 212 KB + 16 KB). Entry 82 staged d192 / 128's O in the V stage the last block did not
  // use, as FA3 does: the next tile's first V waited for the epilogue's stores (1.032 slower over the mla family);
  // entry 85 stored it from registers (1.0008, MLAp128 4q2k +12%). That kernel is gone.
  static constexpr bool kPersistORegs =
      kBlockM == 64 || (kSmemBytes + 1023) / 1024 * 1024 + OTile::kBytes + 64 > 232448;
  static constexpr uint32_t kPersistOStagingOffset = (kSmemBytes + 1023) / 1024 * 1024;
  static constexpr uint32_t kPersistQEmptyBarrier =
      kPersistORegs ? (kSmemBytes + 7) / 8 * 8 : kPersistOStagingOffset + OTile::kBytes;
  static constexpr uint32_t kPersistTileFullBarrier = kPersistQEmptyBarrier + 8;    // + 8 * slot
  static constexpr uint32_t kPersistTileEmptyBarrier = kPersistTileFullBarrier + 16;  // + 8 * slot
  static constexpr uint32_t kPersistTileSlots = kPersistTileEmptyBarrier + 16;      // 2 ints
  static constexpr uint32_t kPersistSmemBytes = kPersistTileSlots + 2 * sizeof(int);

  __host__ __device__ static constexpr uint32_t q_full_barrier() { return kBarrierOffset; }
  __host__ __device__ static constexpr uint32_t k_full_barrier(int s) { return kBarrierOffset + 8 * (1 + s); }
  __host__ __device__ static constexpr uint32_t k_empty_barrier(int s) {
    return kBarrierOffset + 8 * (1 + kStages + s);
  }
  __host__ __device__ static constexpr uint32_t v_full_barrier(int s) {
    return kBarrierOffset + 8 * (1 + 2 * kStages + s);
  }
  __host__ __device__ static constexpr uint32_t v_empty_barrier(int s) {
    return kBarrierOffset + 8 * (1 + 3 * kStages + s);
  }
  __host__ __device__ static constexpr uint32_t v_raw_full_barrier(int r) {
    return kBarrierOffset + 8 * (1 + 4 * kStages + r);
  }
  __host__ __device__ static constexpr uint32_t v_raw_empty_barrier(int r) {
    return kBarrierOffset + 8 * (1 + 4 * kStages + kRawStages + r);
  }
};

}  // namespace flashseek::sm90

// Host-callable entry points of the sm90 kernels. Includes no device code, so host files compiled by the plain
// C++ compiler can call them.
#pragma once

#include <cuda_runtime_api.h>

#include "append_kv.h"
#include "fwd_params.h"
#include "loop_values.h"
#include "merge.h"

namespace flashseek::sm90 {

// SMs of the current device, queried once per device (132, an H100 / H200's count, if the query fails).
int device_sm_count();

// The launches the persistent kernel takes (fwd_persistent.h); the others run the one-tile kernel: K/V that TMA
// streams in every tile, and 1.5 waves of tiles or more (under that most CTAs would get one tile: nothing to
// overlap, and the tile fetch and counter reset cost 1-3 us; docs/perf-log.md entry 18).
// The one-tile grid's CTAs: m blocks x KV heads x splits, per sequence unless the grid is flat.
inline long long one_tile_grid_ctas(const FwdParams& p, int num_m_blocks) {
  return static_cast<long long>(num_m_blocks) * p.num_heads_kv * p.num_splits * (p.flat_tiles ? 1 : p.batch);
}

inline bool persistent_takes(const FwdParams& p, long long tiles, int num_sms) {
  const bool streams = p.kv_tma_rows > 0 && !(p.kv_layout == KVLayout::kPaged && p.leftpad_k != nullptr);
  return streams && 2 * tiles >= 3LL * num_sms;
}

// Runs the forward kernel whose tile is (head_dim_padded, head_dim_v_padded, block_m) for the 16-bit compute type
// `compute` (q's dtype; fp16 for an e4m3 q) and, with fp8_kv, an e4m3 K/V cache; when p.num_splits > 1 also the
// combine of the splits (into p.out_type). Returns cudaErrorInvalidValue for a tile with no kernel.
// `experiment`: the main-loop variant of the tiles that have several (FLASHSEEK_EXPERIMENT; -1: the default).
// `tile_variant`: LaunchPlan::tile_variant (a decode tile experiment; 0: the tile table's tile).
// `maps`: the K/V tensor maps of the TMA producer, read where p.kv_tma_rows > 0.
// `fp8_native`: q, k and v e4m3 on the native e4m3 tiles (the maps describe the e4m3 K and V), with P as two e4m3
// terms (kSplitP), one (kOneP), or P*V in fp16 on a widened V (kF16Pv: d64; kF16PvD128: d64 and d128's tiles but the head-packed;
// the other tiles take kSplitP).
enum class Fp8Native { kNone, kSplitP, kOneP, kF16Pv, kF16PvD128 };
cudaError_t launch_forward(ScalarType compute, bool fp8_kv, Fp8Native fp8_native, int head_dim_padded,
                           int head_dim_v_padded, int block_m, const FwdParams& p, const KvTensorMaps& maps,
                           int num_m_blocks, int max_seqlen_q, cudaStream_t stream, int experiment = -1,
                           int tile_variant = 0);

// Runs the MLA decode kernel (q 64 + q_v 512 against rows [v 512 | k 64], dv 512) for q's dtype; when
// p.num_splits > 1 also the combine of the splits.
cudaError_t launch_mla_decode(ScalarType dtype, const FwdParams& p, int num_m_blocks, int max_seqlen_q,
                              cudaStream_t stream);

// Writes get_scheduler_metadata's buffer: the header, then `per_sequence_splits` for each of `batch` sequences.
cudaError_t launch_write_scheduler_metadata(int* out, const int (&header)[8], int batch, int per_sequence_splits,
                                            cudaStream_t stream);

}  // namespace flashseek::sm90

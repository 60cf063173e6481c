// From validated arguments to kernel parameter blocks and launches. Host code only.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <cuda_runtime_api.h>

#include "../sm90/key_origin.h"
#include "../sm90/launch.h"
#include "../sm90/launch_order.h"
#include "experiment.h"
#include "per_device.h"
#include "split_heuristic.h"
#include "flashseek/flashseek.h"
#include "tensor_map.h"
#include "tile_loop.h"
#include "tile_table.h"

namespace flashseek {
namespace {

constexpr float kLog2e = 1.4426950408889634f;

void check_cuda(cudaError_t status, const char* what) {
  if (status != cudaSuccess) {
    throw Error(Error::Kind::kRuntime, std::string(what) + " failed: " + cudaGetErrorString(status));
  }
}

ScalarType scalar_type(DType dtype) {
  switch (dtype) {
    case DType::kBFloat16: return ScalarType::kBFloat16;
    case DType::kFloat16: return ScalarType::kFloat16;
    default: return ScalarType::kFloat32;
  }
}

template <class T>
const T* ptr_or_null(const TensorView& t) {
  return t.given() ? static_cast<const T*>(t.data) : nullptr;
}

// The descale of an e4m3 operand ((B, Hkv) float32, size-1 dims broadcast); none (1) for a 16-bit operand, whose
// descale FA3 ignores too.
Descale descale_of(const TensorView& descale, const TensorView& operand) {
  Descale d{nullptr, 0, 0};
  if (!descale.given() || operand.dtype != DType::kFloat8E4M3) return d;
  d.ptr = static_cast<const float*>(descale.data);
  d.batch_stride = descale.shape[0] == 1 ? 0 : descale.stride[0];
  d.head_stride = descale.shape[1] == 1 ? 0 : descale.stride[1];
  return d;
}

// The 16-bit type the tensor cores multiply in: q's, fp16 for an e4m3 q (e4m3 -> fp16 is exact).
ScalarType compute_type(const AttentionArgs& a) {
  return a.q.dtype == DType::kFloat8E4M3 ? ScalarType::kFloat16 : scalar_type(a.q.dtype);
}

// FLASHSEEK_EXPERIMENT's fp8 producer variants (sm90::Fp8Mode). 16-byte copies need every K and V row start
// 16-byte aligned: e4m3 elements are bytes, so the base pointers, every stride the producer multiplies by and the
// head dims (16-value chunks, zero-filled past d) must be multiples of 16; otherwise the 8-byte path runs.
int fp8_mode_of(const FwdParams& p, bool fp8_kv, const Experiment& e) {
  if (!fp8_kv) return 0;
  int mode = 0;
  const auto a16 = [](int64_t x) { return x % 16 == 0; };
  const bool aligned = reinterpret_cast<uintptr_t>(p.k) % 16 == 0 && reinterpret_cast<uintptr_t>(p.v) % 16 == 0 &&
                       a16(p.k_row_stride) && a16(p.k_head_stride) && a16(p.k_page_stride) &&
                       a16(p.v_row_stride) && a16(p.v_head_stride) && a16(p.v_page_stride) &&
                       p.head_dim % 16 == 0 && p.head_dim_v % 16 == 0;
  if (e.fp8_copy16 && aligned) mode |= kFp8Copy16;
  if (e.fp8_skip_convert) mode |= kFp8SkipConvert;
  if (e.fp8_skip_copy) mode |= kFp8SkipCopy;
  if (e.fp8_keyed_transpose) mode |= kFp8KeyedTranspose;
  return mode;
}

FwdParams make_fwd_params(const AttentionArgs& a, const LaunchPlan& plan, void* workspace) {
  FwdParams p{};
  p.q = a.q.data;
  p.q_fp8 = a.q.dtype == DType::kFloat8E4M3;
  p.q_row_stride = a.q.stride[0];
  p.q_head_stride = a.q.stride[1];
  p.cu_seqlens_q = ptr_or_null<int>(a.cu_seqlens_q);
  p.fixed_seqlen_q = a.cu_seqlens_q.given() ? 0 : static_cast<int>(a.fixed_seqlen_q);
  p.total_q = static_cast<int>(a.q.shape[0]);

  p.k = a.k.data;
  p.v = a.v.data;
  if (a.k.rank == 3) {
    p.kv_layout = KVLayout::kVarlen;
    p.k_row_stride = a.k.stride[0];
    p.k_head_stride = a.k.stride[1];
    p.v_row_stride = a.v.stride[0];
    p.v_head_stride = a.v.stride[1];
    p.total_k = static_cast<int>(a.k.shape[0]);
    p.page_size = 1;
  } else {
    p.kv_layout = a.block_table.given() ? KVLayout::kPaged : KVLayout::kBatched;
    p.k_page_stride = a.k.stride[0];
    p.k_row_stride = a.k.stride[1];
    p.k_head_stride = a.k.stride[2];
    p.v_page_stride = a.v.stride[0];
    p.v_row_stride = a.v.stride[1];
    p.v_head_stride = a.v.stride[2];
    p.num_pages = static_cast<int>(a.k.shape[0]);
    p.page_size = static_cast<int>(a.k.shape[1]);
  }
  p.page_div = FastDiv::make(static_cast<uint32_t>(p.page_size > 0 ? p.page_size : 1));
  p.cu_seqlens_k = ptr_or_null<int>(a.cu_seqlens_k);
  p.seqused_k = ptr_or_null<int>(a.seqused_k);
  p.block_table = ptr_or_null<int>(a.block_table);
  p.block_table_stride = a.block_table.given() ? a.block_table.stride[0] : 0;
  p.block_table_width = a.block_table.given() ? static_cast<int>(a.block_table.shape[1]) : 0;
  p.leftpad_k = ptr_or_null<int>(a.leftpad_k);
  p.cache_batch_idx = ptr_or_null<int>(a.cache_batch_idx);

  p.out = a.out.data;
  p.out_type = scalar_type(a.out.dtype);
  p.o_row_stride = a.out.stride[0];
  p.o_head_stride = a.out.stride[1];
  p.lse = a.softmax_lse.given() ? static_cast<float*>(a.softmax_lse.data) : nullptr;

  p.num_splits = plan.num_splits;
  const Experiment& experiment = Experiment::get();
  p.combine_mode = (experiment.combine_warp ? 1 : 0) | (experiment.pdl && plan.num_splits > 1 ? 2 : 0) |
                   (experiment.combine_prefetch ? 8 : 0) | (experiment.combine_carveout ? 16 : 0);
  p.pdl = (experiment.fwd_pdl ? 1 : 0) | (experiment.pdl_trigger && (p.combine_mode & 2) ? 2 : 0);
  if (experiment.pdl_chain) {
    p.pdl |= 1 | 2;
    p.combine_mode |= 32;
  }
  if (experiment.warp_combine_pdl) p.combine_mode |= 64;
  // A varlen batch far shorter than batch x max_seqlen_q (a 257-query prefill beside 16 decodes: 34952 rows per
  // sequence grid, 2184 real) combines over q's rows: the per-sequence grid's empty CTAs each read their sequence's
  // bounds before leaving, 20 us on that call (entry 49).
  if (plan.num_splits > 1 && experiment.combine_q_rows && a.cu_seqlens_q.given() &&
      a.q.shape[0] < static_cast<int64_t>(a.batch_size) * a.max_seqlen_q) {
    p.combine_mode |= 4;
  }
  if (experiment.combine_warp_rows > 0) {  // the rows launch_combine_splits' grid covers
    const long long seqlen_q = a.cu_seqlens_q.given() ? a.max_seqlen_q : a.fixed_seqlen_q;
    const long long combined_rows =
        ((p.combine_mode & 4) != 0 ? a.q.shape[0] : a.batch_size * seqlen_q) * a.q.shape[1];
    if (combine_by_warps(combined_rows, plan.num_splits, experiment.combine_warp_rows)) p.combine_mode |= 1;
  }
  if (plan.num_splits > 1) {
    const size_t rows = static_cast<size_t>(plan.num_splits) * a.q.shape[0] * a.q.shape[1];
    p.o_partial = static_cast<float*>(workspace);
    p.lse_partial = p.o_partial + rows * plan.head_dim_v_padded;
  }

  p.batch = a.batch_size;
  p.num_heads_q = static_cast<int>(a.q.shape[1]);
  p.num_heads_kv = static_cast<int>(a.k.shape[a.k.rank - 2]);
  p.qheads_per_kvhead = p.num_heads_q / p.num_heads_kv;
  p.qheads_div = FastDiv::make(static_cast<uint32_t>(p.qheads_per_kvhead));
  p.kv_head_pack = 1;  // pack_kv_heads() for the head-packed tile
  p.kv_head_pack_log2 = 0;
  p.head_dim = static_cast<int>(a.q.shape[2]);
  p.head_dim_v = static_cast<int>(a.v.shape[a.v.rank - 1]);

  p.softmax_scale = a.softmax_scale > 0.f ? a.softmax_scale : 1.f / std::sqrt(static_cast<float>(p.head_dim));
  p.softcap = a.softcap;
  p.score_scale_log2 = a.softcap > 0.f ? kLog2e : p.softmax_scale * kLog2e;
  p.causal = a.causal;
  // A window side of 2^30 keys or more sees every key of any sequence: unbounded (-1). The kernels' limits are
  // tok + diag -+ side in int, which a side near INT_MAX wrapped to no visible key.
  auto window_side = [](int side) { return side >= (1 << 30) ? -1 : side; };
  p.window_left = window_side(a.window_left);
  p.window_right = a.causal ? 0 : window_side(a.window_right);
  p.s_aux = a.s_aux.given() ? a.s_aux.data : nullptr;
  p.s_aux_type = scalar_type(a.s_aux.dtype);

  if (a.q_v.given()) {
    p.q_v = a.q_v.data;
    p.qv_row_stride = a.q_v.stride[0];
    p.qv_head_stride = a.q_v.stride[1];
    // FA3's default with q_v: the logits sum over d + dv products.
    if (a.softmax_scale <= 0.f) {
      p.softmax_scale = 1.f / std::sqrt(static_cast<float>(p.head_dim + a.q_v.shape[2]));
      p.score_scale_log2 = p.softmax_scale * kLog2e;
    }
  }
  p.cp_world_size = a.cp_world_size;
  p.cp_rank = a.cp_world_size > 1 ? a.cp_rank : 0;
  p.cp_tot_seqused_k = a.cp_world_size > 1 ? ptr_or_null<int>(a.cp_tot_seqused_k) : nullptr;
  p.q_descale = descale_of(a.q_descale, a.q);
  p.k_descale = descale_of(a.k_descale, a.k);
  p.v_descale = descale_of(a.v_descale, a.v);
  p.fp8_mode = fp8_mode_of(p, a.k.dtype == DType::kFloat8E4M3, Experiment::get());
  return p;
}

// The TMA producer's K/V tensor maps (16-bit K/V, sm90/producer_tma.h); returns the rows per box for
// FwdParams::kv_tma_rows, or 0 where TMA cannot describe K/V (the kernel then copies with cp.async): an e4m3
// cache (its producer converts), MLA decode (its own kernel), a page size whose boxes would not start on a
// swizzle atom, strides or a base that are not 16-byte multiples. FLASHSEEK_EXPERIMENT=cpasync forces 0.
int kv_tensor_maps_of(const FwdParams& p, const LaunchPlan& plan, bool fp8_kv, KvTensorMaps& maps) {
  if (fp8_kv || p.q_v != nullptr || Experiment::get().cp_async_kv) return 0;
  const bool paged = p.kv_layout == KVLayout::kPaged;
  const int box_rows = kv_tma_box_rows(paged, p.page_size, plan.block_n);
  if (box_rows == 0) return 0;
  const bool dense = p.kv_layout == KVLayout::kVarlen;
  const int64_t rows = dense ? p.total_k : p.page_size;
  const int64_t pages = dense ? 1 : p.num_pages;
  // The d96 tiles' 192-byte rows take the 64-byte swizzle (32-column boxes; SwizzledTileFor).
  const std::string k_why =
      encode_kv_tensor_map(reinterpret_cast<CUtensorMap*>(&maps.k), p.k, p.head_dim, p.num_heads_kv, rows, pages,
                           p.k_head_stride, p.k_row_stride, p.k_page_stride, box_rows,
                           plan.head_dim_padded % 64 != 0);
  if (!k_why.empty()) return 0;
  const std::string v_why =
      encode_kv_tensor_map(reinterpret_cast<CUtensorMap*>(&maps.v), p.v, p.head_dim_v, p.num_heads_kv, rows, pages,
                           p.v_head_stride, p.v_row_stride, p.v_page_stride, box_rows,
                           plan.head_dim_v_padded % 64 != 0);
  return v_why.empty() ? box_rows : 0;
}

// q-tma (entry 69): the queries as a tensor map whose box is one 64-column block of a packed Q tile (block_m / G
// tokens x the G query heads of a KV head, head fastest: the rows load_q's copies write), for the TMA producer
// (16-bit K/V by TMA) of the tiles with the 128-byte swizzle, where the boxes pay (q_boxes_pay). Returns the box's
// tokens for FwdParams::q_tma_box_tokens, or 0 (the copies): a group that does not divide the tile's rows, q in
// e4m3, strides or a base that are not 16-byte multiples, fewer tokens in the call than a box.
int q_tensor_map_of(const FwdParams& p, int batch, int head_dim_padded, int block_m, bool kv_by_tma,
                    KvTensorMaps& maps) {
  const int mode = Experiment::get().q_tma_mode;
  if (mode == 0 || !kv_by_tma || p.q_fp8 || head_dim_padded % 64 != 0) return 0;
  const int group = p.qheads_per_kvhead;
  if (group < 1 || block_m % group != 0) return 0;
  const int box_tokens = block_m / group;
  if (mode == 1 && !q_boxes_pay(p.total_q, batch, box_tokens)) return 0;
  const std::string why =
      encode_kv_tensor_map(reinterpret_cast<CUtensorMap*>(&maps.q), p.q, p.head_dim, p.num_heads_q, p.total_q, 1,
                           p.q_head_stride, p.q_row_stride, 0, box_tokens, false, group);
  return why.empty() ? box_tokens : 0;
}

// How the native e4m3 tiles (q, k and v e4m3 multiplied as e4m3; tile_table.h kFp8NativeTiles) get K and V: not
// at all (`native` false: the converting tiles), by TMA boxes of `tma_rows` rows, or by 16-byte copies
// (`tma_rows` 0, sm90/producer_fp8_native.h).
struct NativeKv {
  bool native;
  int tma_rows;
};

// The native tiles take a call whose padded head dims have a native tile (64, 128, 256 and 192 / 128; rows of 64
// or 192 bytes take the 64-byte swizzle), with d and dv multiples of 16 and every q, k and v row 16-byte aligned.
// K and V come by TMA where a map can describe them (as pairs of bytes: the 16-bit encoder with half the columns
// and strides) and no box would straddle a page (left padding, pages of fewer than 8 rows); otherwise, or under
// FLASHSEEK_EXPERIMENT=fp8-cpasync, by copies where every native tile of the head dims has the copy path
// (fp8_native_copies_of). Else, and under fp8-convert, the converting tiles.
// `tile_variant` 203 / 204 (head-packed, `head_pack` KV heads per box): TMA boxes only, and only for descales that are
// the same for every KV head (the kernel reads the group's first head's); {false, 0} sends the call to the
// one-head tiles.
NativeKv fp8_native_kv_of(const AttentionArgs& a, const FwdParams& p, const LaunchPlan& plan, int tile_variant,
                          int head_pack, KvTensorMaps& maps) {
  const Experiment& e = Experiment::get();
  const bool packed = tile_variant == kFp8NativeHeadPackVariant || tile_variant == kFp8NativeHeadPackTwoCtaVariant;
  const TileShape tile =
      tile_variant == kFp8NativeTwoCtaVariant          ? kFp8NativeTwoCtaTile
      : tile_variant == kFp8NativeKeysAsMVariant        ? kFp8NativeKeysAsMTile
      : tile_variant == kFp8NativeKeysAsMTwoCtaVariant  ? kFp8NativeKeysAsMTwoCtaTile
      : tile_variant == kFp8NativeHeadPackTwoCtaVariant ? kFp8NativeHeadPackTwoCtaTile
      : packed ? fp8_native_head_pack_tile(plan.head_dim_padded, plan.head_dim_v_padded)
               : fp8_native_tile(plan.head_dim_padded, plan.head_dim_v_padded, plan.block_m);
  if (!e.fp8_native || a.q.dtype != DType::kFloat8E4M3 || a.k.dtype != DType::kFloat8E4M3 || p.q_v != nullptr ||
      (tile_variant != 0 && tile_variant != kFp8NativeTwoCtaVariant && tile_variant != kFp8NativeKeysAsMVariant &&
       tile_variant != kFp8NativeKeysAsMTwoCtaVariant && !packed) ||
      tile.block_m == 0 ||
      p.head_dim % 16 != 0 || p.head_dim_v % 16 != 0) {
    return {false, 0};
  }
  if (packed && (head_pack < 2 || p.num_heads_kv % head_pack != 0 || p.q_descale.head_stride != 0 ||
                 p.k_descale.head_stride != 0 || p.v_descale.head_stride != 0)) {
    return {false, 0};
  }
  // Q goes by 16-byte copies, K and V by TMA boxes or 16-byte copies: every q, k and v row start 16-byte aligned
  // (a TMA map needs 16-byte strides as well).
  bool rows16 = reinterpret_cast<uintptr_t>(p.q) % 16 == 0 && reinterpret_cast<uintptr_t>(p.k) % 16 == 0 &&
                reinterpret_cast<uintptr_t>(p.v) % 16 == 0;
  for (const int64_t stride : {p.q_row_stride, p.q_head_stride, p.k_row_stride, p.k_head_stride, p.k_page_stride,
                               p.v_row_stride, p.v_head_stride, p.v_page_stride}) {
    rows16 = rows16 && stride % 16 == 0;
  }
  if (!rows16) return {false, 0};
  const NativeKv by_copies{!packed && fp8_native_copies_of(plan.head_dim_padded, plan.head_dim_v_padded), 0};
  if (e.fp8_native_copies) return by_copies;
  const bool paged = p.kv_layout == KVLayout::kPaged;
  if (paged && p.leftpad_k != nullptr) return by_copies;
  const int box_heads = packed ? head_pack : 1;
  const int box_rows = kv_tma_box_rows(paged, p.page_size, tile.block_n / box_heads);
  if (box_rows == 0) return by_copies;
  const bool dense = p.kv_layout == KVLayout::kVarlen;
  const int64_t rows = dense ? p.total_k : p.page_size;
  const int64_t pages = dense ? 1 : p.num_pages;
  // Rows whose bytes no 128-byte block divides (d 64, d 192) take the 64-byte swizzle (SwizzledTileFor).
  const bool k_swizzle64 = plan.head_dim_padded % 128 != 0;
  const bool v_swizzle64 = plan.head_dim_v_padded % 128 != 0;
  const std::string k_why =
      encode_kv_tensor_map(reinterpret_cast<CUtensorMap*>(&maps.k), p.k, p.head_dim / 2, p.num_heads_kv, rows, pages,
                           p.k_head_stride / 2, p.k_row_stride / 2, p.k_page_stride / 2, box_rows, k_swizzle64,
                           box_heads);
  if (!k_why.empty()) return by_copies;
  const std::string v_why =
      encode_kv_tensor_map(reinterpret_cast<CUtensorMap*>(&maps.v), p.v, p.head_dim_v / 2, p.num_heads_kv, rows,
                           pages, p.v_head_stride / 2, p.v_row_stride / 2, p.v_page_stride / 2, box_rows,
                           v_swizzle64, box_heads);
  return v_why.empty() ? NativeKv{true, box_rows} : by_copies;
}

// A head-packed call's parameters: the CTA grid counts groups of `head_pack` KV heads, each with its heads' query
// heads stacked (the packed rows, Q loads, outputs and LSE then address query heads as before).
void pack_kv_heads(FwdParams& p, int head_pack) {
  int log2 = 0;
  while ((1 << log2) < head_pack) ++log2;
  p.kv_head_pack = head_pack;
  p.kv_head_pack_log2 = log2;
  p.num_heads_kv /= head_pack;
  p.qheads_per_kvhead *= head_pack;
  p.qheads_div = FastDiv::make(static_cast<uint32_t>(p.qheads_per_kvhead));
}

// The main-loop variant: the experiment's, else the persistent kernel (sm90/fwd_persistent.h) where the plan prefers
// it, unless no-persist: loop value kLoopBaseFlags | kLoopPersistent | kLoopTileFastDiv = 134659 (entry 64; every
// persistent tile lists it), 3587 under no-tile-fastdiv. Tiles without that variant run their default.
int loop_flags_of(const Experiment& e, const LaunchPlan& plan, const FwdParams& p, int grid_m, int num_sms) {
  if (e.loop_flags >= 0) return e.loop_flags;
  if (!e.persistent || !plan.persistent) return -1;
  // The calls the persistent kernel does not take go to the one-tile kernel from here, so that no kernel is launched
  // from two translation units (entry 18).
  const long long ctas = sm90::one_tile_grid_ctas(p, grid_m);
  if (!sm90::persistent_takes(p, ctas, num_sms)) return -1;
  if (!persistent_grid_pays(e, ctas, num_sms)) return -1;
  return e.tile_fastdiv ? (sm90::kPersistentLoopFlags | sm90::kTileFastDivLoopBit) : sm90::kPersistentLoopFlags;
}

// lpt (entry 66): the one-tile kernel's heaviest m blocks first across sections of (sequence, KV head) pairs, as
// many pairs a section as whose K/V fit lpt_l2_mb of L2 (pairs whose tiles are in flight together re-read their
// K/V from L2, entry 15's MHA batch). On the flat grid a pair is a KV head, and the K/V its tiles re-read is its
// longest sequence's (a mixed batch's decodes read theirs once in any order). Only where tiles differ in cost
// (causal or a window), on grids small enough for the old order's tail to matter (launch_order.h lpt_pays); the
// persistent kernel deals its own order.
int lpt_section_of(const Experiment& e, const AttentionArgs& a, const LaunchPlan& plan, const FwdParams& p,
                   int grid_m, bool fp8_kv, int num_sms) {
  if (e.lpt_mode == 0 || e.lpt_l2_mb <= 0 || grid_m < 2) return 0;
  if (!a.causal && a.window_left < 0 && a.window_right < 0) return 0;
  const int64_t kv_bytes = std::max<int64_t>(1, a.max_seqlen_k) * (plan.head_dim_padded + plan.head_dim_v_padded) *
                           (fp8_kv ? 1 : 2);
  const int64_t pairs = static_cast<int64_t>(p.flat_tiles ? 1 : a.batch_size) * p.num_heads_kv * p.num_splits;
  if (pairs * grid_m >= (int64_t{1} << 31)) return 0;  // the kernel's linear launch index is an int
  if (e.lpt_mode == 1 && !lpt_pays(pairs * grid_m, num_sms)) return 0;
  const int64_t fit = (static_cast<int64_t>(e.lpt_l2_mb) << 20) / kv_bytes;
  return static_cast<int>(std::clamp<int64_t>(fit, 1, std::max<int64_t>(pairs, 1)));
}

}  // namespace

void run(const AttentionArgs& a, const LaunchPlan& plan, void* workspace, void* stream) {
  if (a.batch_size <= 0 || plan.num_m_blocks <= 0 || a.q.shape[0] == 0) return;  // nothing to attend
  const int host_stop = Experiment::get().host_stop;  // diagnostic: where the host time goes
  if (host_stop == 1) return;
  if (plan.num_splits > 1 && plan.cluster_splits == 0 && workspace == nullptr) {
    throw Error(Error::Kind::kValue, "workspace: expected " + std::to_string(plan.workspace_bytes) +
                                         " bytes for the split partials, got none");
  }
  FwdParams p = make_fwd_params(a, plan, workspace);
  // The call's device (the binding's device guard makes it the current one): its SM count from query_device's
  // per-device cache, read once here rather than at each rule below.
  const int num_sms = query_device(a.q.device).num_sms;
  const int max_seqlen_q = static_cast<int>(a.cu_seqlens_q.given() ? a.max_seqlen_q : a.fixed_seqlen_q);
  if (a.q_v.given()) {
    check_cuda(sm90::launch_mla_decode(scalar_type(a.q.dtype), p, plan.num_m_blocks, max_seqlen_q,
                                       static_cast<cudaStream_t>(stream)),
               "flashseek MLA decode launch");
    return;
  }
  const bool fp8_kv = a.k.dtype == DType::kFloat8E4M3;
  KvTensorMaps maps;
  // The head-packed tile refused (per-head descales, no TMA box fits): the one-head native tile, or the
  // converting one, with the plan's split count.
  int tile_variant = plan.tile_variant;
  NativeKv native_kv = fp8_native_kv_of(a, p, plan, tile_variant, plan.kv_head_pack, maps);
  const bool packed_plan = plan.kv_head_pack > 1;
  const bool head_packed = packed_plan && native_kv.native;
  if (packed_plan && !native_kv.native) {
    tile_variant = 0;
    native_kv = fp8_native_kv_of(a, p, plan, tile_variant, 1, maps);
  }
  if (head_packed) pack_kv_heads(p, plan.kv_head_pack);
  const bool fp8_native = native_kv.native;
  p.kv_tma_rows = fp8_native ? native_kv.tma_rows : kv_tensor_maps_of(p, plan, fp8_kv, maps);
  p.window_origin_rows = window_origin_rows_of(Experiment::get().window_origin, p.window_left, p.cp_world_size,
                                               a.num_splits, p.kv_layout == KVLayout::kPaged, p.kv_tma_rows);
  // The 192-row native d64 tile refused: the converting tile has 128 rows, so the grid is counted again; so is a
  // head-packed call's (its rows stack the group's heads).
  const int block_m = fp8_kv && !fp8_native && plan.block_m == 192 ? 128 : plan.block_m;
  const int num_m_blocks =
      block_m == plan.block_m && !head_packed
          ? plan.num_m_blocks
          : static_cast<int>((static_cast<int64_t>(max_seqlen_q) * p.qheads_per_kvhead + block_m - 1) / block_m);
  // A varlen batch of very different lengths (a chunked prefill beside decodes) gets a grid of its real tiles
  // (sm90/tile_index.h) instead of num_m_blocks (sized by the longest sequence) per sequence.
  const int64_t per_sequence_tiles = static_cast<int64_t>(num_m_blocks) * a.batch_size;
  const int64_t flat_tiles = flat_tiles_per_kv_head(p.total_q, p.qheads_per_kvhead, block_m, a.batch_size);
  p.flat_tiles = a.cu_seqlens_q.given() && takes_flat_grid(flat_tiles, per_sequence_tiles) ? 1 : 0;
  const int grid_m = p.flat_tiles ? static_cast<int>(flat_tiles) : num_m_blocks;
  p.q_tma_box_tokens = q_tensor_map_of(p, a.batch_size, plan.head_dim_padded, block_m,
                                       !fp8_native && !fp8_kv && p.kv_tma_rows > 0, maps);
  p.lpt_section = lpt_section_of(Experiment::get(), a, plan, p, grid_m, fp8_kv, num_sms);
  p.kv_coords_early = Experiment::get().kv_coords_early ? 1 : 0;
  // 1, 2 or 4 (ProducerTma::issue_roles). Default: four on the native e4m3 tiles (their 2 KB boxes carry half the
  // bytes of a 16-bit box: 1-3% faster over the fp8 family, entry 29), two elsewhere (four cost 16-bit decode 0.6%).
  const int issue_warps = Experiment::get().tma_issue_warps;
  p.kv_issue_warps = issue_warps == 1 || issue_warps == 2 || issue_warps == 4 ? issue_warps : fp8_native ? 4 : 2;
  // ... and four on a 16-bit grid of few CTAs (four_issuers_pay, entry 70).
  if (Experiment::get().tma_warps_few_ctas && issue_warps == 0 && !fp8_native) {
    if (four_issuers_pay(sm90::one_tile_grid_ctas(p, grid_m), num_sms)) p.kv_issue_warps = 4;
  }
  const sm90::Fp8Native native_mode = !fp8_native                      ? sm90::Fp8Native::kNone
                                      : Experiment::get().fp8_native_one_p ? sm90::Fp8Native::kOneP
                                      : Experiment::get().fp8_f16_pv && Experiment::get().fp8_f16_pv_d128
                                          ? sm90::Fp8Native::kF16PvD128
                                      : Experiment::get().fp8_f16_pv ? sm90::Fp8Native::kF16Pv
                                                                           : sm90::Fp8Native::kSplitP;
  if (host_stop == 2) return;
  // The native two-CTA tile refused (a paged cache with left padding, unaligned rows): the converting tile of the
  // table (one split: the plan took the two-CTA tile only without splits).
  if ((tile_variant == kFp8NativeTwoCtaVariant || tile_variant == kFp8NativeKeysAsMVariant ||
       tile_variant == kFp8NativeKeysAsMTwoCtaVariant) &&
      !fp8_native) {
    tile_variant = 0;
  }
  int loop_flags = loop_flags_of(Experiment::get(), plan, p, grid_m, num_sms);
  if (fp8_native && block_m == 64 && Experiment::get().fp8_producer_ahead) loop_flags = sm90::kNativeProducerAheadLoopFlags;
  // The 192-row native tile on the persistent kernel (entry 99). Only the launcher (fwd_kernel.h) knows which tile
  // has that form (the fp16-P*V d64 one): the others ignore the value, and under 1.5 waves it falls back to the
  // one-tile kernel. (A copy of that knowledge here, by native mode, missed the default mode in entry 99.)
  if (fp8_native && block_m == 192 && Experiment::get().fp8_persist) loop_flags = sm90::kPersistentLoopFlags;
  const long long grid_ctas = sm90::one_tile_grid_ctas(p, grid_m);
  const int ctas_per_sm = tile_variant >= 1 && tile_variant <= kNumDecodeVariants
                              ? decode_variant_tile(tile_variant).ctas_per_sm
                              : 1;
  // Entry 98: which end of a flat grid's batch starts first (the one-tile kernel's; the persistent kernel keeps
  // order 0) matters only where the CTAs are more than a wave; choosing costs each CTA some latency (fp8 mixed
  // q2k_32q1s2k, 6 waves: +1.5%), so only up to 4 waves, where a heavy tile started last is a large share.
  const int flat_order = Experiment::get().flat_order;
  const long long wave = static_cast<long long>(num_sms) * ctas_per_sm;
  p.flat_order = !p.flat_tiles ? 0 : flat_order >= 0 ? flat_order : grid_ctas > wave && grid_ctas <= 4 * wave ? 1 : 0;
  const TileLoopKey tile_key{plan.head_dim_padded, plan.head_dim_v_padded, block_m, tile_variant,
                             compute_type(a) == ScalarType::kBFloat16, fp8_kv, fp8_native, grid_ctas,
                             static_cast<long long>(num_sms) * ctas_per_sm};
  const int variant_bits = (p.q_tma_box_tokens > 0 ? sm90::kQTmaLoopBit : 0) |
                           (Experiment::get().lean_tail && !fp8_kv ? sm90::kLeanTailLoopBit : 0);
  // The one-block windowed d64 tile (entry 103) has one persistent value, q-tma in it: Q by boxes where
  // q_tma_box_tokens allows, else by copies; its one-tile kernel where run() would not take the persistent one.
  const bool window_tile = tile_variant == kD64WindowVariant;
  const bool window_tile_persistent = window_tile && loop_flags >= 0;
  if (variant_bits != 0 && !window_tile) {
    const int with_bits = loop_flags_with_bits(tile_key, loop_flags, variant_bits);
    if (with_bits >= 0) loop_flags = with_bits;
    if (with_bits < 0 || (with_bits & sm90::kQTmaLoopBit) == 0) p.q_tma_box_tokens = 0;
  }
  loop_flags = tile_loop_flags(Experiment::get(), tile_key, loop_flags);
  if (window_tile) loop_flags = window_tile_persistent ? sm90::kD64WindowLoopFlags : -1;
  // cluster-combine (entry 120): the splits of a keys-as-M decode combine in their cluster, which is the run of grid
  // y indices of one (sequence, KV head, m block): the one-tile kernel, launch order as the grid's.
  // The plan decided it (no workspace was allocated for it); run()'s tile is the plan's on these calls (16-bit).
  p.cluster_splits = plan.cluster_splits;
  if (p.cluster_splits > 0 &&
      cluster_combine_splits(Experiment::get(), tile_variant, fp8_kv, fp8_native, p.num_splits) != p.cluster_splits) {
    throw Error(Error::Kind::kRuntime, "flashseek internal: the cluster combine planned for " +
                                         std::to_string(p.cluster_splits) + " splits no longer applies at launch");
  }
  if (p.cluster_splits > 0) {
    p.lpt_section = 0;
    loop_flags = -1;
  }
  check_cuda(sm90::launch_forward(compute_type(a), fp8_kv, native_mode, plan.head_dim_padded,
                                  plan.head_dim_v_padded, block_m, p, maps, grid_m, max_seqlen_q,
                                  static_cast<cudaStream_t>(stream), loop_flags, tile_variant),
             "flashseek forward launch");
}

void compute_scheduler_metadata(const SchedulerArgs& a, const LaunchPlan& plan, void* stream) {
  const int header[8] = {SchedulerMetadataLayout::kMagic, plan.num_splits, plan.block_m, plan.block_n,
                         a.batch_size, a.num_heads_q, a.num_heads_kv, 0};
  check_cuda(sm90::launch_write_scheduler_metadata(static_cast<int*>(a.metadata_out.data), header, a.batch_size,
                                                   plan.num_splits, static_cast<cudaStream_t>(stream)),
             "flashseek scheduler metadata");
}

void run(const MergeArgs& a, void* stream) {
  sm90::MergeParams p{};
  p.prefix_out = a.prefix_out.data;
  p.suffix_out = a.suffix_out.data;
  p.out = a.out.data;
  p.prefix_row_stride = a.prefix_out.stride[0];
  p.prefix_head_stride = a.prefix_out.stride[1];
  p.suffix_row_stride = a.suffix_out.stride[0];
  p.suffix_head_stride = a.suffix_out.stride[1];
  p.out_row_stride = a.out.stride[0];
  p.out_head_stride = a.out.stride[1];
  p.prefix_lse = static_cast<const float*>(a.prefix_lse.data);
  p.suffix_lse = static_cast<const float*>(a.suffix_lse.data);
  p.out_lse = a.out_lse.given() ? static_cast<float*>(a.out_lse.data) : nullptr;
  p.num_tokens = static_cast<int>(a.out.shape[0]);
  p.num_heads = static_cast<int>(a.out.shape[1]);
  p.head_dim = static_cast<int>(a.out.shape[2]);
  p.dtype = scalar_type(a.out.dtype);
  p.programmatic = Experiment::get().fwd_pdl || Experiment::get().pdl_chain;
  p.load_first = Experiment::get().row_prefetch;
  check_cuda(sm90::launch_merge_attn_states(p, static_cast<cudaStream_t>(stream)), "flashseek merge_attn_states");
}

void run(const AppendKVArgs& a, void* stream) {
  sm90::AppendKVParams p{};
  p.k_cache = a.k_cache.data;
  p.v_cache = a.v_cache.data;
  p.k_page_stride = a.k_cache.stride[0];
  p.k_row_stride = a.k_cache.stride[1];
  p.k_head_stride = a.k_cache.stride[2];
  p.v_page_stride = a.v_cache.stride[0];
  p.v_row_stride = a.v_cache.stride[1];
  p.v_head_stride = a.v_cache.stride[2];
  p.paged = a.block_table.given();
  p.block_table = ptr_or_null<int>(a.block_table);
  p.block_table_stride = a.block_table.given() ? a.block_table.stride[0] : 0;
  p.block_table_width = a.block_table.given() ? static_cast<int>(a.block_table.shape[1]) : 0;
  p.page_size = static_cast<int>(a.k_cache.shape[1]);
  p.num_pages = static_cast<int>(a.k_cache.shape[0]);
  p.cache_seqlens = static_cast<const int*>(a.cache_seqlens.data);
  p.cache_batch_idx = ptr_or_null<int>(a.cache_batch_idx);
  if (a.k_new.given()) {
    p.k_new = a.k_new.data;
    p.v_new = a.v_new.data;
    p.kn_batch_stride = a.k_new.stride[0];
    p.kn_row_stride = a.k_new.stride[1];
    p.kn_head_stride = a.k_new.stride[2];
    p.vn_batch_stride = a.v_new.stride[0];
    p.vn_row_stride = a.v_new.stride[1];
    p.vn_head_stride = a.v_new.stride[2];
    p.seqlen_new = static_cast<int>(a.k_new.shape[1]);
  }
  p.q = a.q.data;
  p.q_batch_stride = a.q.stride[0];
  p.q_row_stride = a.q.stride[1];
  p.q_head_stride = a.q.stride[2];
  p.seqlen_q = static_cast<int>(a.q.shape[1]);
  if (a.rotary_cos.given()) {
    p.q_rotated = a.q_rotated.data;
    p.qr_batch_stride = a.q_rotated.stride[0];
    p.qr_row_stride = a.q_rotated.stride[1];
    p.qr_head_stride = a.q_rotated.stride[2];
    p.rotary_cos = a.rotary_cos.data;
    p.rotary_sin = a.rotary_sin.data;
    p.rotary_row_stride = a.rotary_cos.stride[0];
    p.rotary_rows = static_cast<int>(a.rotary_cos.shape[0]);
    p.rotary_dim = static_cast<int>(2 * a.rotary_cos.shape[1]);
  }
  p.rotary_interleaved = a.rotary_interleaved;
  p.q_positions_advance = a.causal;
  p.load_first = Experiment::get().row_prefetch;
  p.trigger_dependents = Experiment::get().pdl_chain;
  p.batch = static_cast<int>(a.q.shape[0]);
  p.num_heads_q = static_cast<int>(a.q.shape[2]);
  p.num_heads_kv = static_cast<int>(a.k_cache.shape[2]);
  p.head_dim = static_cast<int>(a.k_cache.shape[3]);
  p.head_dim_v = static_cast<int>(a.v_cache.shape[3]);
  p.dtype = scalar_type(a.q.dtype);
  check_cuda(sm90::launch_append_kv(p, static_cast<cudaStream_t>(stream)), "flashseek append_kv");
}

DeviceInfo query_device(int device) {
  auto query = [device] {
    DeviceInfo info;
    check_cuda(cudaDeviceGetAttribute(&info.num_sms, cudaDevAttrMultiProcessorCount, device), "device query");
    check_cuda(cudaDeviceGetAttribute(&info.max_smem_per_block, cudaDevAttrMaxSharedMemoryPerBlockOptin, device),
               "device query");
    check_cuda(cudaDeviceGetAttribute(&info.cc_major, cudaDevAttrComputeCapabilityMajor, device), "device query");
    check_cuda(cudaDeviceGetAttribute(&info.cc_minor, cudaDevAttrComputeCapabilityMinor, device), "device query");
    return info;
  };
  // Attribute queries cost microseconds each and a call path runs this per call: once per device, from any thread
  // (a failed query throws out of call_once, which leaves the slot to the next call).
  static PerDevice<DeviceInfo> cache;
  return cache.get(device, query);
}

}  // namespace flashseek

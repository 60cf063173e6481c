// Host-side dispatch of a forward call to the kernel of its tile (dtype, e4m3 cache, head dims, block_m, decode
// tile experiment), then the combine of its splits.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "combine.h"
#include "kernel_traits.h"
#include "launch.h"
#include "per_device_setup.h"

namespace flashseek::sm90 {

// Defined in fwd_kernel.h, instantiated once per tile in inst/.
template <class Traits>
cudaError_t launch_attention_fwd(const FwdParams& p, const KvTensorMaps& maps, int num_m_blocks, int loop_flags,
                                 cudaStream_t stream);

int device_sm_count() {
  static PerDevice<int> counts;
  const int device = current_device();
  return counts.get(device, [device] {
    int n = 0;
    if (device < 0 || cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || n <= 0) {
      n = 132;
    }
    return n;
  });
}

namespace {

// Everything of one launch but the tile.
struct Launch {
  const FwdParams& p;
  const KvTensorMaps& maps;
  int num_m_blocks;
  int max_seqlen_q;
  int experiment;
  int tile_variant;
  cudaStream_t stream;
};

template <class Traits>
cudaError_t launch_tile(const Launch& l) {
  return launch_attention_fwd<Traits>(l.p, l.maps, l.num_m_blocks, l.experiment, l.stream);
}

template <int kDv>
cudaError_t launch_combine(const Launch& l) {
  return l.p.out_type == ScalarType::kFloat16 ? launch_combine_splits<__half, kDv>(l.p, l.max_seqlen_q, l.stream)
                                              : launch_combine_splits<__nv_bfloat16, kDv>(l.p, l.max_seqlen_q,
                                                                                          l.stream);
}

// The decode tile experiments (tile_table.h kDecodeVariantTiles): bf16 block_m 64, d128 (1, 2, 4, 5, 7) and d64 (3, 6, 8, 9); any
// other call, or variant 0, runs the tile table's kernel (the planner only picks a variant where one is built).
template <class Element, bool kFp8Kv, int kD, int kDv>
cudaError_t launch_decode_tile(const Launch& l) {
  static_assert(kNumDecodeVariants == 9, "one case per variant");
  if constexpr (std::is_same_v<Element, __nv_bfloat16> && !kFp8Kv && kD == 128 && kDv == 128) {
    switch (l.tile_variant) {
      case 1: return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 1>>(l);
      case 2: return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 2>>(l);
      case 4: return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 4>>(l);
      case 5: return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 5>>(l);
      case 7: return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 7>>(l);
      default: break;
    }
  }
  if constexpr (std::is_same_v<Element, __nv_bfloat16> && !kFp8Kv && kD == 64 && kDv == 64) {
    if (l.tile_variant == 3) return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 3>>(l);
    if (l.tile_variant == 6) return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 6>>(l);
    if (l.tile_variant == 8) return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 8>>(l);
    if (l.tile_variant == 9) return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, false, 9>>(l);
  }
  return launch_tile<FwdKernelTraits<Element, kD, kDv, 64, kFp8Kv>>(l);
}

template <class Element, bool kFp8Kv, int kD, int kDv>
cudaError_t launch_prefill_tile(int block_m, const Launch& l) {
  if constexpr (kD == 64 && kDv == 64 && !kFp8Kv) {
    if constexpr (std::is_same_v<Element, __nv_bfloat16>) {
      if (block_m == 192 && l.tile_variant == kD64WindowVariant) {  // one-block windows (tile_table.h kD64WindowTile)
        return launch_tile<FwdKernelTraits<Element, kD, kDv, 192, false, kD64WindowVariant>>(l);
      }
    }
    if (block_m == 192) return launch_tile<FwdKernelTraits<Element, kD, kDv, 192, kFp8Kv>>(l);
  }
  if constexpr (kD == 96 && kDv == 96 && !kFp8Kv && std::is_same_v<Element, __nv_bfloat16>) {
    if (block_m == 192 && l.tile_variant == kD96M192Variant) {  // long bf16 prefills (tile_table.h kD96M192Tile)
      return launch_tile<FwdKernelTraits<Element, kD, kDv, 192, false, kD96M192Variant>>(l);
    }
  }
  if (block_m != 128) return cudaErrorInvalidValue;
  return launch_tile<FwdKernelTraits<Element, kD, kDv, 128, kFp8Kv>>(l);
}

template <class Element, bool kFp8Kv, int kD, int kDv>
cudaError_t forward_then_combine(int block_m, const Launch& l) {
  const cudaError_t status = block_m == 64 ? launch_decode_tile<Element, kFp8Kv, kD, kDv>(l)
                                           : launch_prefill_tile<Element, kFp8Kv, kD, kDv>(block_m, l);
  // cluster-combine: the forward's clusters combined the splits (consumer_keys_as_m.h combine_in_cluster)
  if (status != cudaSuccess || l.p.num_splits <= 1 || l.p.cluster_splits > 1) return status;
  return launch_combine<kDv>(l);
}

template <class Element, bool kFp8Kv>
cudaError_t dispatch_head_dims(int d, int dv, int block_m, const Launch& l) {
  if (block_m != 64 && block_m != 128 && block_m != 192) return cudaErrorInvalidValue;
  if (d == 64 && dv == 64) return forward_then_combine<Element, kFp8Kv, 64, 64>(block_m, l);
  if constexpr (!kFp8Kv) {  // the d96 tiles (FLASHSEEK_EXPERIMENT=d96), 16-bit only
    if (d == 96 && dv == 96) return forward_then_combine<Element, kFp8Kv, 96, 96>(block_m, l);
  }
  if (d == 128 && dv == 128) return forward_then_combine<Element, kFp8Kv, 128, 128>(block_m, l);
  if (d == 192 && dv == 128) return forward_then_combine<Element, kFp8Kv, 192, 128>(block_m, l);
  if (d == 192 && dv == 192) return forward_then_combine<Element, kFp8Kv, 192, 192>(block_m, l);
  if (d == 256 && dv == 256) return forward_then_combine<Element, kFp8Kv, 256, 256>(block_m, l);
  return cudaErrorInvalidValue;
}

template <class Element>
cudaError_t dispatch_kv(bool fp8_kv, int d, int dv, int block_m, const Launch& l) {
  return fp8_kv ? dispatch_head_dims<Element, true>(d, dv, block_m, l)
                : dispatch_head_dims<Element, false>(d, dv, block_m, l);
}

// Native e4m3 tiles (q, k and v e4m3, d 128, 64, 256 and 192 / 128; tile_table.h kFp8NativeTiles): bf16 out.
template <int kD, int kDv, int kVariant>
cudaError_t launch_fp8_native_tile(int block_m, const Launch& l) {
  if constexpr (kD == 64 && (kVariant == kFp8NativeVariant || kVariant == kFp8NativeF16PvVariant)) {
    // The 192-row d64 tile (long e4m3 d64 tiles; no-fp8-m192 turns it off; tile_table.h).
    if (block_m == 192) return launch_tile<FwdKernelTraits<__nv_bfloat16, 64, 64, 192, true, kVariant>>(l);
  }
  if (block_m != 64 && block_m != 128) return cudaErrorInvalidValue;
  return block_m == 64 ? launch_tile<FwdKernelTraits<__nv_bfloat16, kD, kDv, 64, true, kVariant>>(l)
                       : launch_tile<FwdKernelTraits<__nv_bfloat16, kD, kDv, 128, true, kVariant>>(l);
}

template <int kD, int kDv = kD>
cudaError_t launch_fp8_native_d(int block_m, Fp8Native mode, const Launch& l) {
  const bool one_p = mode == Fp8Native::kOneP;
  cudaError_t status;
  if constexpr (fp8_native_head_pack_tile(kD, kDv).block_m != 0) {
    // The head-packed decode tile (tile_table.h kFp8NativeHeadPackTiles), where the planner took it and run()
    // packed the call.
    if (l.tile_variant == kFp8NativeHeadPackVariant && block_m == 64 && !one_p) {
      status = launch_tile<FwdKernelTraits<__nv_bfloat16, kD, kDv, 64, true, kFp8NativeHeadPackVariant>>(l);
      if (status != cudaSuccess || l.p.num_splits <= 1) return status;
      return launch_combine<kDv>(l);
    }
  }
  if constexpr (kD == 128) {
    if (l.tile_variant == kFp8NativeHeadPackTwoCtaVariant && block_m == 64 && !one_p) {
      status = launch_tile<FwdKernelTraits<__nv_bfloat16, 128, 128, 64, true, kFp8NativeHeadPackTwoCtaVariant>>(l);
      if (status != cudaSuccess || l.p.num_splits <= 1) return status;
      return launch_combine<kD>(l);
    }
    // The keys-as-M decode tile (tile_table.h kFp8NativeKeysAsMTile, entry 94), where the planner took it (fp16 P*V
    // only: its consumer's O^T = V^T P^T reads the widened V).
    if (l.tile_variant == kFp8NativeKeysAsMVariant && block_m == 64 && mode == Fp8Native::kF16PvD128) {
      status = launch_tile<FwdKernelTraits<__nv_bfloat16, 128, 128, 64, true, kFp8NativeKeysAsMVariant>>(l);
      if (status != cudaSuccess || l.p.num_splits <= 1) return status;
      return launch_combine<kD>(l);
    }
    // ... and its two-CTA form (kFp8NativeKeysAsMTwoCtaTile, entry 107), where the planner took it.
    if (l.tile_variant == kFp8NativeKeysAsMTwoCtaVariant && block_m == 64 && mode == Fp8Native::kF16PvD128) {
      status = launch_tile<FwdKernelTraits<__nv_bfloat16, 128, 128, 64, true, kFp8NativeKeysAsMTwoCtaVariant>>(l);
      if (status != cudaSuccess || l.p.num_splits <= 1) return status;
      return launch_combine<kD>(l);
    }
    // The two-CTA decode tile (tile_table.h kFp8NativeTwoCtaTile), where the planner took it.
    if (l.tile_variant == kFp8NativeTwoCtaVariant && block_m == 64 && !one_p) {
      status = mode == Fp8Native::kF16PvD128
                   ? launch_tile<FwdKernelTraits<__nv_bfloat16, 128, 128, 64, true, kFp8NativeF16PvTwoCtaVariant>>(l)
                   : launch_tile<FwdKernelTraits<__nv_bfloat16, 128, 128, 64, true, kFp8NativeTwoCtaVariant>>(l);
      if (status != cudaSuccess || l.p.num_splits <= 1) return status;
      return launch_combine<kD>(l);
    }
  }
  // d192 / 128 has no one-term P tile (it spilled): fp8-native-1p runs the two-term one there.
  if constexpr (kD == 128) {
    if (mode == Fp8Native::kF16PvD128) {
      status = launch_fp8_native_tile<128, 128, kFp8NativeF16PvVariant>(block_m, l);
      if (status != cudaSuccess || l.p.num_splits <= 1) return status;
      return launch_combine<kDv>(l);
    }
  }
  if constexpr (kD == 64) {
    if (mode == Fp8Native::kF16Pv || mode == Fp8Native::kF16PvD128) {
      status = launch_fp8_native_tile<kD, kDv, kFp8NativeF16PvVariant>(block_m, l);
      if (status != cudaSuccess || l.p.num_splits <= 1) return status;
      return launch_combine<kDv>(l);
    }
  }
  if constexpr (kD != 192) {
    status = one_p ? launch_fp8_native_tile<kD, kDv, kFp8NativeOnePVariant>(block_m, l)
                   : launch_fp8_native_tile<kD, kDv, kFp8NativeVariant>(block_m, l);
  } else {
    status = launch_fp8_native_tile<kD, kDv, kFp8NativeVariant>(block_m, l);
  }
  if (status != cudaSuccess || l.p.num_splits <= 1) return status;
  return launch_combine<kDv>(l);
}

cudaError_t launch_fp8_native(int d, int dv, int block_m, Fp8Native mode, const Launch& l) {
  if (d == 192 && dv == 128) return launch_fp8_native_d<192, 128>(block_m, mode, l);
  if (d != dv) return cudaErrorInvalidValue;
  if (d == 128) return launch_fp8_native_d<128>(block_m, mode, l);
  if (d == 64) return launch_fp8_native_d<64>(block_m, mode, l);
  if (d == 256) return launch_fp8_native_d<256>(block_m, mode, l);
  return cudaErrorInvalidValue;
}

}  // namespace

cudaError_t launch_forward(ScalarType compute, bool fp8_kv, Fp8Native fp8_native, int head_dim_padded,
                           int head_dim_v_padded, int block_m, const FwdParams& p, const KvTensorMaps& maps,
                           int num_m_blocks, int max_seqlen_q, cudaStream_t stream, int experiment, int tile_variant) {
  const Launch l{p, maps, num_m_blocks, max_seqlen_q, experiment, tile_variant, stream};
  if (fp8_native != Fp8Native::kNone) {
    return launch_fp8_native(head_dim_padded, head_dim_v_padded, block_m, fp8_native, l);
  }
  if (compute == ScalarType::kFloat16) {
    return dispatch_kv<__half>(fp8_kv, head_dim_padded, head_dim_v_padded, block_m, l);
  }
  return dispatch_kv<__nv_bfloat16>(fp8_kv, head_dim_padded, head_dim_v_padded, block_m, l);
}

}  // namespace flashseek::sm90

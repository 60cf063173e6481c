// The one tile of the MLA decode kernel (d 64 + q_v 512 against one 576-wide cache row). Shared by the host planner
// and the kernel so the two can never disagree. Plain C++ (no CUDA) so CPU tests can read it.
#pragma once

namespace flashseek {

struct MlaDecodeTile {
  static constexpr int kHeadDim = 64;    // q . k_pe (the rope part, k)
  static constexpr int kHeadDimV = 512;  // q_v . kv_c (the latent part, v), also the output width
  static constexpr int kHeadDimQK = kHeadDim + kHeadDimV;  // S = [q_v | q] . [v | k]^T over 576 columns
  // 64 packed (token, head) rows: one wgmma M. 64 keys per step: one 72 KB stage holds a key block's 576-wide
  // rows once and serves both GEMMs (S over all 576 columns, O += P V over the first 512). Two stages and the
  // 72 KB query tile take 216 KB of the 227 KB; P (8 KB) takes most of the rest.
  static constexpr int kBlockM = 64;
  static constexpr int kBlockN = 64;
  static constexpr int kStages = 2;
};

}  // namespace flashseek

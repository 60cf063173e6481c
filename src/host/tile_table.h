// The tile shapes of the forward kernel, one row per padded head-dim pair. Shared by the host planner and the
// kernel instantiations so the two can never disagree. Plain C++ (no CUDA) so CPU tests can read it.
#pragma once

namespace flashseek {

struct TileShape {
  int head_dim;    // padded head dim of q and k (columns of the Q and K tiles)
  int head_dim_v;  // padded head dim of v and out
  int block_m;     // packed query rows per CTA: two consumer warpgroups of 64 rows
  int block_n;     // keys per mainloop step; a multiple of 16 (the k-step of P*V)
  int stages;      // K/V pipeline depth (16-bit tiles the consumers read)
  bool fp8_kv;     // K and V arrive as e4m3: the producer converts them into the 16-bit stage tiles
  int raw_stages;  // fp8_kv: raw e4m3 K/V blocks in flight (staging buffers the copies land in)
  int ctas_per_sm = 1;  // resident CTAs per SM the kernel is built for (__launch_bounds__, register split)
  bool fp8_native = false;  // q, k and v e4m3 multiplied as e4m3 (QGMMA): V transposed, P in e4m3 (no conversion)
  // Native tiles: the producer also has the copy path for calls no TMA box fits (producer_fp8_native.h); without
  // it those calls take the converting tile.
  bool native_copies = true;
  // Consumer warpgroups that share the same block_m rows and take alternate key blocks, merging their partial
  // softmax and O at the end (decode tile 4): more consumer work in flight per CTA without a split's second kernel.
  int key_split = 1;
  // Keys-as-M decode tiles (decode tile 5, sm90/consumer_keys_as_m.h): the GEMMs take the keys as M and the CTA's
  // packed query rows (at most this many) as N, S^T = K Q^T and O^T = V^T P^T; 0 for the tiles whose M is the query
  // rows. The plan takes such a tile only where every sequence's packed rows fit.
  int query_rows = 0;
};

// Shared memory per CTA: Q tile + stages x (K tile + V tile), all 16-bit, plus raw_stages x (K + V rows in
// e4m3, one byte each) for fp8 caches. Kept under the 227 KB opt-in limit.
constexpr int tile_smem_bytes(const TileShape& t) {
  return t.block_m * t.head_dim * 2 + t.stages * t.block_n * (t.head_dim + t.head_dim_v) * 2 +
         t.raw_stages * t.block_n * (t.head_dim + t.head_dim_v);
}

// Why these shapes. block_m 128 (prefill): two 64-row consumer warpgroups that take turns on the tensor cores;
// block_n as large as registers allow for the S accumulator (block_n / 2 floats per thread) beside O
// (head_dim_v / 2 floats) and P (block_n / 4 words). block_m 64 (decode: query tokens x query heads per KV head
// fit in 64 rows): one consumer warpgroup, so no tensor-core work is spent on padding rows, and the shared
// memory the second Q half would take goes to a deeper K/V pipeline.
//
// fp8 caches (fp8_kv) add the e4m3 staging buffers, so their tiles trade block_n or stages for them. Prefill
// (block_m 128) is compute-bound: one staging buffer, converted while the consumers work on the previous block.
// Decode (block_m 64) is memory-bound: as many staging buffers as fit (raw blocks in flight per CTA; two 16-bit
// stages suffice to overlap the conversion with the consumer). block_n is the same for block_m 64 and 128 of a
// head dim, so that a token's result does not depend on which of the two kernels ran it (same key blocks, same
// online-softmax steps). The staging also receives an e4m3 Q tile once (raw_stages x block_n x (d + dv) >=
// block_m x d, checked in the traits).
constexpr TileShape kTileShapes[] = {
    {64, 64, 128, 128, 3, false, 0},
    {128, 128, 128, 128, 2, false, 0},
    {192, 128, 128, 128, 2, false, 0},
    {192, 192, 128, 112, 2, false, 0},
    {256, 256, 128, 80, 2, false, 0},
    {64, 64, 64, 128, 4, false, 0},
    {128, 128, 64, 128, 3, false, 0},
    {192, 128, 64, 128, 2, false, 0},
    {192, 192, 64, 112, 2, false, 0},
    {256, 256, 64, 80, 2, false, 0},
    {64, 64, 128, 128, 3, true, 2},
    {128, 128, 128, 128, 2, true, 1},
    {192, 128, 128, 96, 2, true, 1},
    {192, 192, 128, 80, 2, true, 1},
    {256, 256, 128, 64, 2, true, 1},
    {64, 64, 64, 128, 2, true, 8},
    {128, 128, 64, 128, 2, true, 2},
    {192, 128, 64, 96, 2, true, 2},
    {192, 192, 64, 80, 2, true, 2},
    {256, 256, 64, 64, 2, true, 2},
    // d64, 192 rows: three consumer warpgroups share each K/V block (as FA3 does at d 64). The plan takes it for
    // long bf16 / fp16 d64 tiles only (plan.cpp); same block_n as the 64- and 128-row tiles (same bits).
    {64, 64, 192, 128, 4, false, 0},
    // d96 (FLASHSEEK_EXPERIMENT=d96, docs/perf-log.md entry 38; 16-bit only): head dims 72-96 padded to 96 instead
    // of 128, a quarter less tensor work per key. 192-byte rows: Q, K and V as three 64-byte-swizzled column
    // blocks (SwizzledTile64; V an MN-major operand). block_n 128 as d128's (zero columns add exact zeros, so a
    // token's bits match the d128-padded tiles'). m128 24 + 3 x 48 = 168 KB; m64 12 + 4 x 48 = 204 KB.
    {96, 96, 128, 128, 3, false, 0},
    {96, 96, 64, 128, 4, false, 0},
};

constexpr int kNumTileShapes = sizeof(kTileShapes) / sizeof(kTileShapes[0]);

// Decode tile experiments (FLASHSEEK_EXPERIMENT tile=N, docs/perf-log.md entry 10): alternatives to the bf16 d128
// (1, 2) and d64 (3) block_m 64 tiles above, instantiated for bf16 only (compile time). Not in kTileShapes: 1 and 2
// break that table's rule that block_m 64 and 128 share block_n (a token's result may differ in the last bits
// between them); 3 keeps it, and differs from the table's tile in stages and CTAs per SM only.
//   1: two CTAs per SM: block_n 64, 2 stages (Q 16 KB + 2 x 32 KB + offsets = 82 KB per CTA), producer 40 and
//      consumer 216 registers (256 threads x 128 at launch, 2 x 32768 per SM), so one CTA's prologue and
//      epilogue run while the other streams.
//   2: the same block_n 64 with six 32 KB stages, one CTA per SM: as many bytes as the default tile (192 KB) in
//      finer stages, so more of them are in flight (a stage is refilled after half the consumer work); isolates
//      block_n 64 and stage granularity from the second CTA.
//   3: bf16 d64, two CTAs per SM: block_n 128 as every d64 tile (so the same bits as the table's d64 decode
//      tile), 3 stages (Q 8 KB + 3 x 32 KB + offsets = 108 KB per CTA), producer 40 and consumer 216 registers.
//      For gpt-oss decodes (OSSt8 at 0.63-0.70 of HBM, docs/perf-log.md entry 21).
//   4: bf16 d128, two consumer warpgroups on the same 64 rows taking alternate key blocks (key_split 2), merged
//      in shared memory at the end; producer 40 / consumers 232 registers. Small decodes spend most of their time
//      in one CTA's per-block chain and in the split combine's second kernel (entry 41). block_n 64 and 6 stages
//      (Q 16 KB + 6 x 32 KB = 208 KB, entry 89): an even ring, so each warpgroup owns every other stage and waits
//      for each of its fills in order (with 3 stages of 128 keys a warpgroup could find its stage still being
//      filled with the other's block, whose phase a parity wait cannot tell from its own block's).
//   5: bf16 d128 with the keys as the GEMMs' M (query_rows 8: calls whose query tokens x group heads fit 8
//      columns, e.g. one token at GQA 8; sm90/consumer_keys_as_m.h). At GQA 8 the 64-row tile's QK^T, softmax and
//      P*V are 7/8 padding rows, and on few CTAs that chain, not the K/V stream, sets the time (entry 88: a
//      32-CTA decode 50.9 -> 36.6 us without it). S^T = K Q^T and O^T = V^T P^T as m64 n8 wgmmas (P^T through
//      shared memory), the softmax over 8 values per thread. Same block_n and stages as the table's tile, so the
//      same key blocks and split counts. The plan's default where the table's one-CTA d128 tile would run and
//      the rows fit (plan.cpp, entry 90; no-keys-as-m).
//   6: the same for bf16 d64 (the table's d64 decode tile's block_n 128 and 4 stages; entry 91): gpt-oss decodes
//      (group 8, d64), whose 64-row tile spends as much on the padded softmax as d128's on half the bytes a block.
//   7: tile 5's consumer on tile 1's stages and two CTAs per SM (block_n 64, 2 stages; entry 105, FLASHSEEK_EXPERIMENT
//      kam2): on grids of 1.5 waves and more the two-CTA tile hides one CTA's chain behind the other's stream, and
//      keys as M shorten that chain.
//   8: the same at d64 on tile 3's stages (block_n 128, 3 stages).
//   9: the same consumer at d64 on four CTAs per SM (block_n 64, 2 stages: Q 8 + 2 x 16 KB + P^T = 43 KB a CTA;
//      producer 32 / consumer 96 registers; entry 111, the default, no-kam4 for tile 8): cuDNN's gpt-oss decode keeps
//      four 128-thread CTAs per SM, so a 512-sequence grid is resident at once where two per SM run 1.94 waves.
constexpr TileShape kDecodeVariantTiles[] = {
    {128, 128, 64, 64, 2, false, 0, 2},
    {128, 128, 64, 64, 6, false, 0, 1},
    {64, 64, 64, 128, 3, false, 0, 2},
    {128, 128, 64, 64, 6, false, 0, 1, false, true, 2},
    {128, 128, 64, 128, 3, false, 0, 1, false, true, 1, 8},
    {64, 64, 64, 128, 4, false, 0, 1, false, true, 1, 8},
    {128, 128, 64, 64, 2, false, 0, 2, false, true, 1, 8},
    {64, 64, 64, 128, 3, false, 0, 2, false, true, 1, 8},
    {64, 64, 64, 64, 2, false, 0, 4, false, true, 1, 8},
};
constexpr int kNumDecodeVariants = sizeof(kDecodeVariantTiles) / sizeof(kDecodeVariantTiles[0]);
// Variant v (1..kNumDecodeVariants), or an empty shape.
constexpr TileShape decode_variant_tile(int v) {
  return v >= 1 && v <= kNumDecodeVariants ? kDecodeVariantTiles[v - 1] : TileShape{0, 0, 0, 0, 0, false, 0};
}

// The keys-as-M tiles' variants (the plan's default for the decodes they fit, entries 90, 91): d128 and d64.
constexpr int kKeysAsMDecodeVariant = 5;
constexpr int kKeysAsMD64DecodeVariant = 6;
constexpr int kKeysAsMTwoCtaDecodeVariant = 7;
constexpr int kKeysAsMTwoCtaD64DecodeVariant = 8;
constexpr int kKeysAsMFourCtaD64DecodeVariant = 9;
// The keys-as-M variant the plan's rules take for a head-dim pair (one consumer warpgroup), or 0: one CTA per SM
// (tiles 5, 6), two (tiles 7, 8; entry 105) or four (tile 9, d64; entry 111).
constexpr int keys_as_m_variant(int head_dim, int head_dim_v, int ctas_per_sm = 1) {
  for (int v = 1; v <= kNumDecodeVariants; ++v) {
    const TileShape t = decode_variant_tile(v);
    if (t.query_rows > 0 && t.key_split == 1 && t.ctas_per_sm == ctas_per_sm && t.head_dim == head_dim &&
        t.head_dim_v == head_dim_v) {
      return v;
    }
  }
  return 0;
}

// d96, 192 rows (long bf16 prefills, entry 67; no-d96-m192 for A/Bs): three consumer warpgroups share each K/V
// block, as FA3 runs head dims up to 96 (192 x 144). block_n 96: at 128 the consumers' S, P and O (64 + 32 + 48
// words) spilled 144 bytes and ptxas serialized the wgmmas (C7512); at 96 (48 + 24 + 48) neither. Not in
// kTileShapes: its key blocks differ from the 64- and 128-row d96 tiles' (other bits), so the plan takes it only
// where the caller leaves the split count to us, as the two-CTA decode tile. Q 36 + 4 x 36 KB = 180 KB.
constexpr int kD96M192Variant = 210;
constexpr TileShape kD96M192Tile = {96, 96, 192, 96, 4, false, 0};

// d64, 192 rows, one key block per windowed tile (docs/perf-log.md entries 101-103; the default since entry 103,
// FLASHSEEK_EXPERIMENT=no-d64-window-tile for A/Bs): block_n 176, so that a 24-token tile under a 128-key window (151 keys, and up to 15 more from the
// key origin's rounding to a TMA box of 16 rows) is one block, as FA3's 160-key block is one. The bf16 192-row d64
// tile's persistent kernel otherwise, with P*V serial to QK^T (kernel_traits.h kSerialPv): S 88 + P 44 + O 32 words
// do not fit the 160-register consumers at once (with the overlap, 396 bytes spilled and the wgmmas serialized). Not
// in kTileShapes (other key blocks, other bits): the plan takes it only where the caller leaves the split count to
// us. Q 24 + 3 x 44 KB = 156 KB (+ O 24 on the persistent kernel).
constexpr int kD64WindowVariant = 211;
constexpr TileShape kD64WindowTile = {64, 64, 192, 176, 3, false, 0};

// Native e4m3 tiles (q, k and v all e4m3, d 128; sm90/producer_fp8_native.h, docs/perf-log.md entry 17): K and the
// raw V arrive by TMA as e4m3, the producer transposes V into V^T (keys contiguous, what e4m3 wgmma needs), the
// consumers multiply e4m3 x e4m3 with P in e4m3. Per stage: K (block_n x d bytes) + V^T (d x block_n); raw V
// stages (block_n x dv) are the transpose's input; O is staged in its own 16-bit tile. block_n 128 as the
// converting tiles of d128, so splits and the prefill / decode results of a token agree with them.
// Four raw V stages (the transpose lags the copies by three blocks): with two, only 32-64 KB per SM were in flight
// and e4m3 decode streamed 1.8 TB/s (docs/perf-log.md entry 19).
// Shared memory: m128 16 + 3 x 32 + 4 x 16 + 32 = 208 KB; m64 8 + 4 x 32 + 4 x 16 + 16 = 216 KB.
constexpr int kFp8NativeVariant = 200;
// The same tiles with P as one e4m3 term (FA3's native path, FLASHSEEK_EXPERIMENT=fp8-native-1p): variant 200
// multiplies P = P_hi + P_lo, two e4m3 terms (entry 19).
constexpr int kFp8NativeOnePVariant = 201;
// The d64 tiles with P*V in fp16 (the default for e4m3 q/k/v at d64; no-fp8-f16pv: variant 200; entry 78): the producer widens the
// raw e4m3 V into a 16-bit V tile (exact: every e4m3 value is an fp16 number) instead of transposing it, and the
// consumers multiply P in fp16 (11 bits, one F2FP a pair) against it: the P*V tensor work of the two e4m3 terms,
// without their split (4 F2FP, an HADD2 and byte permutes a pair) in a kernel the softmax's issue slots bound.
// QK^T stays e4m3. The 16-bit V stages add 4 x 8 KB (m192 168 KB).
constexpr int kFp8NativeF16PvVariant = 205;
// d128's tiles with fp16 P*V (the default for e4m3 d128; no-fp8-f16pv-d128: variant 200; entry 79; not the head-packed ones): its 16-bit V
// stages take 32 KB each, so two K/V stages instead of three (as the bf16 d128 128-row tile), and three raw V stages
// so that the producer's lag (raw stages - 1) stays within the stage count: Q 16 + 2 x (16 + 32) + 3 x 16 raw + 4 + O
// 32 = 196 KB. (With a lag above the stage count the widening of block n would wait for the K stage that QK^T of
// block n itself frees, while the consumers wait for that V after their softmax: every block in series.)
constexpr TileShape kFp8NativeF16PvD128Tile = {128, 128, 128, 128, 2, true, 3, 1, true};
// ... and its 64-row (decode) tile: three K/V stages and three raw V stages instead of four and four (Q 8 + 3 x (16 +
// 32) + 3 x 16 + 4 + O 16 = 220 KB), so that a token's prefill chunk and decode step multiply alike.
constexpr TileShape kFp8NativeF16PvD128DecodeTile = {128, 128, 64, 128, 3, true, 3, 1, true};
// ... and the two-CTA d128 decode tile (variant 206, where the planner takes variant 202): two K/V stages and three
// raw ones instead of three and four (Q 8 + 2 x (8 + 16) + 3 x 8 raw + 2 + O 16 = 98 KB, two CTAs a SM as before).
constexpr int kFp8NativeF16PvTwoCtaVariant = 206;
constexpr TileShape kFp8NativeF16PvTwoCtaTile = {128, 128, 64, 64, 2, true, 3, 2, true};
// ... and the keys-as-M form of the d128 decode tile (variant 208, FLASHSEEK_EXPERIMENT=fp8-keys-as-m; entry 94):
// decode tile 5's consumer on e4m3 q and K (S^T = K Q^T, m64n8k32) and the widened fp16 V (O^T = V^T P^T), where
// the packed rows fit 8. The same stages and producer as the 64-row tile; P^T and the maxima add 2.25 KB.
constexpr int kFp8NativeKeysAsMVariant = 208;
constexpr TileShape kFp8NativeKeysAsMTile = {128, 128, 64, 128, 3, true, 3, 1, true, true, 1, 8};
// ... and on the two-CTA tile's stages (variant 209, the default since entry 107, no-fp8-kam2 for 206): where the
// planner takes the two-CTA tile (206) and the packed rows fit 8, as decode tiles 7 / 8 for bf16 (entry 105).
// 98 KB + P^T and the maxima, two CTAs a SM.
constexpr int kFp8NativeKeysAsMTwoCtaVariant = 209;
constexpr TileShape kFp8NativeKeysAsMTwoCtaTile = {128, 128, 64, 64, 2, true, 3, 2, true, true, 1, 8};
constexpr TileShape kFp8NativeTiles[] = {
    {128, 128, 128, 128, 3, true, 4, 1, true},
    {128, 128, 64, 128, 4, true, 4, 1, true},
    // d64 (64-byte rows, the 64-byte swizzle; entry 27, not yet run on a GPU): m128 8 + 4 x 16 + 4 x 8 + 16 =
    // 120 KB; m64 4 + 4 x 16 + 4 x 8 + 8 = 108 KB.
    {64, 64, 128, 128, 4, true, 4, 1, true},
    {64, 64, 64, 128, 4, true, 4, 1, true},
    // d256 (entry 28, not yet run on a GPU): block_n 64 as the converting d256 tiles, so V^T rows are 64 keys (the
    // 64-byte swizzle); S 32 + P 2 x 8 + O 128 words per consumer thread. m128 32 + 2 x 16 + 2 x 16 + 3 x 16 + 64 =
    // 208 KB; m64 16 + 3 x 16 + 3 x 16 + 4 x 16 + 32 = 208 KB.
    // The m128 d256 tile has no copy path: with it the tile's TMA path ran d256 e4m3 prefill 1.10x slower (fp8/G9
    // 2q4k 678 -> 760 us, entry 32) though its logic did not change.
    {256, 256, 128, 64, 2, true, 3, 1, true, false},
    {256, 256, 64, 64, 3, true, 4, 1, true},
    // d192 / 128 (MLA prefill's q and k rows of 192 bytes: three 64-byte-swizzled column blocks, SwizzledTile64;
    // V and V^T as d128's): block_n 128 as the converting d192 / 128 tiles' 96 would not give whole V^T rows of
    // the 128-byte swizzle. m128 24 + 2 x (24 + 16) + 3 x 16 + 4 + 32 = 188 KB; m64 12 + 3 x 40 + 4 x 16 + 4 + 16 =
    // 216 KB.
    {192, 128, 128, 128, 2, true, 3, 1, true},
    {192, 128, 64, 128, 3, true, 4, 1, true},
    // d64, 192 rows (long e4m3 d64 tiles; 1783 -> 1516 us on fp8/OSS q8k, entry 36): three consumer warpgroups
    // share each K/V block, as the bf16 d64 192-row tile that took OSS prefill 12-18% faster (entry 19); native d64
    // is softmax-bound as bf16 d64 is (entry 29). Q 12 + 4 x (8 + 8) + 4 x 8 + 4 + O 24 = 136 KB.
    {64, 64, 192, 128, 4, true, 4, 1, true},
};

constexpr TileShape fp8_native_tile(int d, int dv, int block_m) {
  for (const TileShape& t : kFp8NativeTiles) {
    if (t.head_dim == d && t.head_dim_v == dv && t.block_m == block_m) return t;
  }
  return TileShape{0, 0, 0, 0, 0, false, 0};
}

// The fp16 P*V tiles (variant 205): the native tiles' shapes, d128's with fewer stages.
constexpr TileShape fp8_native_f16pv_tile(int d, int dv, int block_m) {
  return d == 128 && dv == 128 && block_m == 128  ? kFp8NativeF16PvD128Tile
         : d == 128 && dv == 128 && block_m == 64 ? kFp8NativeF16PvD128DecodeTile
                                                  : fp8_native_tile(d, dv, block_m);
}

// Whether the native tiles of a head-dim pair take the calls no TMA box fits (by copies): only if every tile of
// the pair has the copy path. Else such calls go to the converting tiles at every block_m, so that a token's
// prefill chunk and decode step never run on different arithmetic (native e4m3 products against converted ones).
constexpr bool fp8_native_copies_of(int d, int dv) {
  bool any = false;
  for (const TileShape& t : kFp8NativeTiles) {
    if (t.head_dim == d && t.head_dim_v == dv) {
      if (!t.native_copies) return false;
      any = true;
    }
  }
  return any;
}

// The native e4m3 d128 decode tile for two CTAs per SM (P as two e4m3 terms, as variant 200): one CTA's Q load,
// pipeline fill and epilogue run while the other streams, which the bf16 two-CTA tile turned into 0.81 -> 0.89-0.95
// of cuDNN on decode grids of 1.5 waves and more (entries 10, 16); e4m3 blocks carry half the bytes, so the fixed
// costs weigh twice as much per byte there. block_n 64 (as the bf16 two-CTA tile) so that the stages fit half the
// SM: Q 8 + 3 x (K 8 + V^T 8) + 4 raw V x 8 + offsets 2 + O 16 = 106 KB. The producer keeps 56 registers for the
// transpose, the consumer 200 (S 32 + P 16 + O 64 words): 128 x 56 + 128 x 200 = 32768, half the register file.
// block_n differs from the table's d128 tiles, so a token's result may differ in the last bits from the one-CTA
// tile's: the planner takes it only where the caller leaves the split count to us (plan.cpp), as variant 1.
constexpr int kFp8NativeTwoCtaVariant = 202;
constexpr TileShape kFp8NativeTwoCtaTile = {128, 128, 64, 64, 3, true, 4, 2, true};

// Head-packed native e4m3 decode tiles (variant 203, sm90/producer_fp8_native.h, docs/perf-log.md entry 37): one CTA
// takes H = kv_head_pack KV heads of a sequence. A tensor map box spans the H heads of box_rows keys (NHD: one
// contiguous run of a page's rows), landing row by row as [key][head][column], so that one box carries H x 2 KB
// where the one-head tiles take one 2 KB box per page, head and operand (one SM's TMA unit caps those near
// 3.1 TB/s; 8-head boxes streamed 4.05 TB/s in the micro-benchmark, entry 37). The H heads' query rows stack into
// the 64-row Q tile (H x query heads per KV head x query tokens <= 64) and tile row t of a K/V block is key
// t / H of head t % H: S is block diagonal, the other heads' columns masked. A block holds block_n / H keys.
// block_n 128 (16 KB of e4m3 K per stage, as the one-head tile); TMA only (the calls no box fits take the
// one-head tile). Keys per block differ from the prefill tile's, so a token's bits may differ in the last places:
// the plan takes it only where the caller leaves the split count to us, as the two-CTA tiles.
constexpr int kFp8NativeHeadPackVariant = 203;
constexpr TileShape kFp8NativeHeadPackTiles[] = {
    {128, 128, 64, 128, 4, true, 4, 1, true, false},
    {64, 64, 64, 128, 4, true, 4, 1, true, false},
};

// The same at two CTAs per SM (variant 204, d128; the two-CTA tile's shape, kFp8NativeTwoCtaTile): block_n 64 rows,
// so at most 4 heads for 16-key page boxes.
constexpr int kFp8NativeHeadPackTwoCtaVariant = 204;
constexpr TileShape kFp8NativeHeadPackTwoCtaTile = {128, 128, 64, 64, 3, true, 4, 2, true, false};

constexpr TileShape fp8_native_head_pack_tile(int d, int dv) {
  for (const TileShape& t : kFp8NativeHeadPackTiles) {
    if (t.head_dim == d && t.head_dim_v == dv) return t;
  }
  return TileShape{0, 0, 0, 0, 0, false, 0};
}

// KV heads per CTA for a head-packed decode: the most of 8 (or max_pack, a power of two), 4, 2 that divides the KV heads and whose query rows
// (heads x query heads per KV head x query tokens) fit the 64-row tile; 1 (no packing) if none.
constexpr int kv_head_pack_of(int num_heads_kv, int qheads_per_kvhead, long long max_seqlen_q, int max_pack = 8) {
  for (int h = max_pack; h >= 2; h /= 2) {
    if (num_heads_kv % h == 0 && static_cast<long long>(h) * qheads_per_kvhead * max_seqlen_q <= 64) return h;
  }
  return 1;
}

// The padded head-dim pair a call runs on: the smallest tile that holds d (and dv), or {0, 0} if none.
struct PaddedHeadDims {
  int head_dim;
  int head_dim_v;
};

// tiles96: 16-bit calls under FLASHSEEK_EXPERIMENT=d96 (the d96 tiles; e4m3 has no 96-byte-row layout).
constexpr PaddedHeadDims pad_head_dims(int d, int dv, bool tiles96 = false) {
  if (d == 192 && dv == 128) return {192, 128};
  if (d != dv) return {0, 0};
  if (d <= 64) return {64, 64};
  if (tiles96 && d <= 96) return {96, 96};
  if (d <= 128) return {128, 128};
  if (d <= 192) return {192, 192};
  if (d <= 256) return {256, 256};
  return {0, 0};
}

constexpr TileShape find_tile_shape(int padded_d, int padded_dv, int block_m = 128, bool fp8_kv = false) {
  for (const TileShape& t : kTileShapes) {
    if (t.head_dim == padded_d && t.head_dim_v == padded_dv && t.block_m == block_m && t.fp8_kv == fp8_kv) return t;
  }
  return TileShape{0, 0, 0, 0, 0, false, 0};
}

// Rows per box of the TMA producer (sm90/producer_tma.h) for a tile of block_n keys: a dense or batched K/V
// streams whole blocks (block_n rows); a paged cache one box per gcd(page_size, block_n) rows, so that no box
// straddles two pages. A box must start on an 8-row atom of the 128-byte swizzle: a paged cache whose gcd is
// not a multiple of 8 (page sizes 1..4, 12, ...) gets 0, every block by cp.async.
constexpr int kv_tma_box_rows(bool paged, int page_size, int block_n) {
  if (!paged) return block_n;
  int a = page_size, b = block_n;
  while (b != 0) {
    const int t = a % b;
    a = b;
    b = t;
  }
  return page_size > 0 && a % 8 == 0 ? a : 0;
}

// Tiles per KV head of a varlen batch when blockIdx.x enumerates real tiles only (sm90/tile_index.h: sequence b's
// tiles start at floor(cu_seqlens_q[b] x G / block_m) + b, so at most one hole per sequence).
constexpr long long flat_tiles_per_kv_head(long long total_q, int qheads_per_kvhead, int block_m, int batch) {
  return total_q * qheads_per_kvhead / block_m + batch;
}

// run() takes that flat grid where it saves a fifth of the per-sequence grid's (batch x m blocks of the longest
// sequence) CTAs; the planner counts the same tiles for its split count.
constexpr bool takes_flat_grid(long long flat_tiles, long long per_sequence_tiles) {
  return flat_tiles * 5 < per_sequence_tiles * 4;
}

// q-tma (entry 69): Q by tensor-map boxes pays where a call's sequences average at least one box of tokens (block_m /
// G). A box always carries its full block_m rows, so a mixed batch of decodes (one token, G rows of block_m) read
// 32-128x the Q bytes the copies read and lost 4-10% (L8 q1k_1024q1s1k +9.5%), while 16q512 gained 3%.
constexpr bool q_boxes_pay(long long total_q, long long batch, int box_tokens) {
  return total_q >= batch * box_tokens;
}

// tma-warps-few (entry 70): a 16-bit grid of at most half as many CTAs as SMs (a caller's split cap: splits32-md's 32)
// is bound by each CTA's box issue rate, which four issuing warps raise (q1s128k splits32-md -5.6%, 8q1s1k -3.7%).
constexpr bool four_issuers_pay(long long ctas, int num_sms) { return 2 * ctas <= num_sms; }

// Decode-like calls (every CTA's packed rows fit in 64) take the one-consumer tile.
// 64 or 128 rows by the packed query rows of the longest sequence (the plan may take 192 at d 64: plan.cpp).
constexpr int choose_block_m(long long max_packed_rows) { return max_packed_rows <= 64 ? 64 : 128; }

}  // namespace flashseek

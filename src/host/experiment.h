// Run-time switches for A/B measurements in one build: FLASHSEEK_EXPERIMENT, a comma-separated list of tokens,
// read once per process. Unset or empty: the defaults (the measured or predicted best). docs/perf-log.md lists
// the tokens and what each one measured.
//   combine-warp the warp-per-row combine kernel (8 rows per CTA)
//   combine-warp-rows=N  ... where the combine has at least N rows and at most 32 splits (split_heuristic.h
//                combine_by_warps; entry 99: N 2048 is the default, cascade p4k / p1k -4.2% / -2.7%; 0 turns it off)
//   no-fp8-persist  the 192-row native e4m3 d64 tile (fp16 P*V) on the one-tile kernel only (default since entry 99:
//                on the persistent kernel where it takes the call, 1.5 waves of TMA-streamed tiles; fp8 OSS q8k
//                w128 221 -> 182 us, descale-random 1324 -> 1175 us); fp8-persist: the default
//   no-window-origin  every tile's key blocks from key 0 (default since entry 102: a windowed tile's blocks from
//                its first visible key, rounded down to a paged cache's box rows, where that saves a block;
//                FwdParams::window_origin_rows; OSS w128 -7.4%, sinks w128 -5.2%, fp8 w128 -5.7%); window-origin:
//                the default
//   no-d64-window-tile  bf16 d64 windows on the 128-key blocks of the 192-row tile (default since entry 103: calls
//                whose every 192-row tile sees at most 176 keys, with the key origin's rounding, on the one-block
//                tile, tile_table.h kD64WindowTile; OSS w128 -20%, sinks w128 -19%); d64-window-tile: the default
//   flat-order=N the one-tile kernel's flat-grid direction forced: 0 from the last sequence, 2 from the first, 1 the
//                default's choice by the first and last sequences (entry 98; default: 1 on grids of 1-4 waves)
//   no-pdl       the combine launched plainly after the forward kernel (default: as its programmatic dependent,
//                which hides the second launch: -3..-5% on split small decodes, entry 29); pdl: the default
//   no-pdl-trigger  the split forward kernel does not let the combine launch early (default: it does, at its
//                start, griddepcontrol.launch_dependents, so the combine's CTAs wait on the free SMs; with
//                combine-prefetch 0.953 of the time over 101 short split calls, entry 53)
//   m192-turns   the bf16 d64 192-row tiles' three consumer warpgroups issue their GEMMs in turn, round robin (as
//                FA3's d64 tile; entry 81), one-tile and persistent; measured neutral (0.9993 over 18), not a default
//   no-decode-persist  the bf16 d128 two-CTA decode tile keeps one CTA per tile on every grid (default: its
//                persistent kernel on grids of 3 waves of tiles and more, entry 86: over-992 -13.5%, 128q1s1k -5%,
//                512q1s2k -3%, 128q1s8k -0.2%; grids of one wave measured +1.3..+3.4% on it and of 1.9 waves
//                -2.3..+0.6%, so they keep one CTA per tile; the one-CTA d128 tile was not measured on such grids)
//   decode-persist  the bf16 64-row decode tiles (d128 and d64, the table's and the two-CTA variants) on the
//                persistent kernel on every grid it takes (>= 1.5 waves of tiles, K/V by TMA): the next (sequence, KV
//                head)'s Q and first K/V blocks stream during this one's last blocks and epilogue, O stored from
//                registers (entry 83). Measured 0.9994 over 64 decode and edge scenarios (entry 86): the d64 tile
//                +6.2% on OSSt8 256q1s4k, so d64 is not a default. With no-cta2 / no-d64-cta2 on the one-CTA tiles.
//   combine-carveout  the split combine kernels prefer the whole unified L1 as shared memory, the carveout every
//                forward kernel of 100+ KB runs with, so that an SM need not drain and reconfigure between the two
//                (entry 80; measured 1.004 over 52 short split calls: the default lets the driver pick)
//   no-pdl-chain the forward and merge_attn_states launched plainly, and no trigger in the kvcache append, the row
//                combine or an unsplit forward (default since entry 113: fwd-pdl, and every kernel of ours that may
//                come before a forward or a merge lets its dependent launch at its start, so that the dependent's
//                CTAs are placed while it runs and wait there; lse / kvcache 0.991 of the time, cascade-p512 -4.7%,
//                appends -1..-1.7%); pdl-chain: the default
//   warp-combine-pdl  the warp-per-row split combine (rows >= 2048, at most 32 splits: cascade prefix passes, long
//                varlen batches) launched as the forward's programmatic dependent, waiting before it reads the
//                partials, and under pdl-chain letting its own dependent launch, as the row combine does (entry 117;
//                the same bits)
//   fwd-pdl      the forward kernel and merge_attn_states launched as programmatic dependents of the stream's
//                previous kernel, waiting before their first read (a cascade's second pass, the forward after a
//                kvcache append; entry 53: 0.998 over the lse and kvcache families, inside the noise; not the default)
//   no-row-prefetch  merge_attn_states and the kvcache append load a row column by column between their stores
//                (default: every input of a row before its first store, one memory round trip instead of one per
//                32 columns; the same arithmetic, so the same bits; appends -1..-1.8%, cascades -0.4..-1.6%,
//                entry 54); row-prefetch: the default
//   no-combine-prefetch  the split combine loads its partial O after the weights (default: its first partials
//                beside the LSE loads, one L2 round trip less; the same order of sums, so the same bits; entry 53)
//   split-fa     FlashAttention's wave-efficiency split rule instead of the cost model
//   splitcap=N   at most N splits from the heuristic (num_splits = 0)
//   split-model-v1  the split cost model's constants before entry 30 (35 GB/s a CTA, no per-row combine cost)
//   splits=N     N splits where the heuristic would consider splitting (within the caller's bound and the key
//                blocks, rounded down to a count that leaves no split empty): the split sweep's switch
//   rate=N       the cost model's per-CTA streaming rate in GB/s
//   no-cta2      keep the one-CTA decode tile where the planner would take two CTAs per SM (grids of 1.5 waves
//                and more without splits, bf16 d128; plan.cpp)
//   no-d64-cta2  keep the one-CTA d64 decode tile where the planner takes decode tile 3 (bf16 d64 decode grids of
//                1.5 waves and more: block_m 64, block_n 128, two CTAs per SM; the same bits as the table's d64
//                tile, so also under num_splits = 1; entry 21). d64-cta2: the default, kept for older commands
//   no-fp8-cta2  keep the one-CTA native e4m3 d128 decode tile where the planner takes the two-CTA one
//                (tile_table.h kFp8NativeTwoCtaTile: e4m3 q, k and v, decode grids of 1.5 waves and more without
//                splits, num_splits = 0; plan.cpp)
//   no-keys-as-m keep the table's d128 / d64 decode tiles where the plan takes decode tile 5 / 6 (keys as the GEMMs'
//                M: bf16 calls whose packed rows fit 8 columns, where the table's one-CTA tile would run, the
//                caller's num_splits not 1; entries 90, 91). keys-as-m: the default, kept for older commands
//   no-kam2      keep the two-CTA decode tiles (1 at d128, 3 at d64) where the plan takes keys as M on two CTAs per SM
//                (decode tiles 7 and 8, entry 105: the keys-as-M consumer on those tiles' stages and register split,
//                one CTA per tile, not the d128 tile's persistent kernel; decode-paged 0.990 of the time, gpt-oss
//                512q1s2k -4.4%) where the rows fit 8 and the caller's num_splits is not 1. kam2: the default
//   no-fp8-kam2  keep the native two-CTA e4m3 d128 decode tile where the plan takes its keys-as-M form (variant 209:
//                the fp16-P*V two-CTA tile's stages with variant 208's consumer; entry 107: fp8 L8 128q1s 0.987 of
//                the time) for decodes whose packed rows fit 8. fp8-kam2: the default, kept for older commands
//   mask-range   the bf16 d128 128-row and d64 192-row tiles' one-tile loop tests a block for masking against the
//                tile's range of unmasked blocks, computed once (two compares a block), instead of restating the
//                mask's limits each block (entry 109; the same bits)
//   no-mask-range-d64  the d64 192-row tile's one-tile loop restates the mask's limits each block (default since
//                entry 112: mask-range on that tile only; gpt-oss prefills 0.964 of the time, q32k -6.8%; mask-range
//                lost 2-3% on the d128 tile's q32k, entry 109); mask-range-d64: the default
//   tma-no-fence with mask-range: the consumer fences the async proxy only before blocks that may have come by
//                copies (a CTA whose producer copies, the partial block visited first and its V), not before every
//                block (entry 110; the same bits)
//   no-kam4      keep decode tile 8 (keys as M, two CTAs per SM) for the bf16 d64 decodes the plan runs on decode
//                tile 9: the same consumer on four CTAs per SM, block_n 64, 2 stages (entry 111: gpt-oss decodes
//                0.991 of the time). kam4: the default, kept for older commands
//   kam2-split2  bf16 decodes of 3/4 to 1.5 waves of tiles, 4k keys and more, rows that fit 8, split count left to
//                us: two splits on decode tile 7 / 8 (two CTAs per SM) instead of one CTA per SM (entry 108)
//   no-kam2-splits  keep decode tile 5 / 6 (one CTA per SM, keys as M) for the bf16 split decodes the plan runs on
//                decode tile 7 / 8 (two CTAs per SM) in twice the splits, split count left to us (entry 115; the
//                default since entry 118: decode-splitkv 0.990 of the time, 55 split decodes 0.9945).
//                kam2-splits: the default, kept for older commands
//   cluster-combine  a split bf16 / fp16 decode on a keys-as-M tile (5-9) in 2 to 8 splits runs its splits as one
//                thread-block cluster that combines the partials through distributed shared memory: no partials
//                in the workspace, no combine kernel (entry 120)
//   keys-as-m-ctas=N  that rule (bf16 and e4m3) only on decode grids of fewer than N CTAs (splits counted): the
//                stream-bound grids (L70t8 128q1s8k, 64q1s4k: 1-2% slower on tile 5, the page-16 target's miss)
//                keep the table's tiles; an experiment (entry 95)
//   no-fp8-keys-as-m  keep the native 64-row e4m3 d128 decode tile where the plan takes variant 208 (decode tile
//                5's rule for e4m3 q, k and v at d128 on the native tiles with fp16 P*V; entries 94, 95).
//                fp8-keys-as-m: the default, kept for older commands
//   tile=N       the bf16 decode tile experiment N (tile_table.h kDecodeVariantTiles; 0: the default tile) on
//                every decode tile of its head dim; aliases: cta2 (tile=1, d128, two CTAs per SM, block_n 64 x 2
//                stages), bn64s6 (tile=2, d128, block_n 64 x 6); tile=3 is d64's two-CTA tile
//   N            bf16 block_m-128 d128 / d64 only: a main-loop variant (sm90::LoopFlags bits) listed in
//                sm90/fwd_experiments.h (d128: stage-skip matrix, exact rewrites left out, docs/perf-log.md
//                entry 9, values relative to 1539; both: 3587 the persistent kernel, entries 14-15; 1539 the default
//                without the warpgroup index broadcast, entry 19; 5635 is the default); also loop=N; an unlisted
//                value fails the launch of those tiles
//   no-persist   the one-CTA-per-tile kernel everywhere (default: the persistent kernel, loop value 3587, for the
//                bf16 d64 / d128 prefill tiles where the plan prefers it: LaunchPlan::persistent, short tiles and
//                mixed batches of more than two waves; docs/perf-log.md entries 14-15, 18, 95). 3587 forces it
//   persist-half-waves=N  the persistent kernel on grids of more than N half waves (default 4, entry 95; 3: the
//                rule before it, 1.5 waves and more)
//   no-m192      long d64 tiles keep 128 rows (the plan's default takes the three-consumer 192-row tile; entry 19)
//   no-persist192  bf16 d64 short tiles (where the plan takes the persistent kernel) on the 128-row persistent
//                kernel (default: the 192-row tile's persistent kernel, three consumer warpgroups as FA3 at d 64;
//                gpt-oss 8q2k -16%, w128 windows -15%, entry 42); persist192: the default, kept for older commands
//   no-tile-fastdiv  the persistent kernel decodes its tile numbers with four run-time integer divisions a tile
//                (loop value 3587) instead of multiply-shift divisions from the launcher (the default, 134659; the
//                same tiles, so the same bits; 0.995 over 50 persistent-tile scenarios, OSS w128 windows -4%,
//                entry 64); tile-fastdiv: the default, kept for older commands
//   persist192-tma  the default: the 192-row tile for those only where K/V stream by TMA (a page size of 1-4
//                tokens goes by copies, on which the 192-row tile lost 11%: edge/8-2-d40/p1, entry 47); elsewhere
//                the 128-row tile. persist192-any: every such tile (entry 42's rule). persist192-strict: only
//                where run() will take the persistent kernel (TMA and 1.5 waves of 192-row tiles; entry 44: a
//                short TMA-able call lost 4% on the 128-row tile, operator sliding256 d40)
//   lpt[=MB]     the one-tile kernel's causal / windowed grid launched heaviest tile first across sections of
//                (sequence, KV head) pairs (the flat grid: KV heads) whose K/V fit MB megabytes (default 40) of
//                L2, instead of pair after pair (FwdParams::lpt_section; the same tiles, so the same bits), on
//                every such grid. Default: only grids of at most 10 tiles a SM (launch_order.h lpt_pays; entry
//                66: MLAp16 q4k -13%, G9 2q4k -7%; larger grids within noise either way). no-lpt: never
//   no-d96-m192  the long bf16 d96 prefills keep the 128-row d96 tile (default: 192 rows, three consumer
//                warpgroups, block_n 96, where the caller leaves the split count to us; P3 q32k -13.5%, q8k -6%,
//                entry 67). d96-m192: the default, kept for older commands
//   no-d96-persist  the short bf16 prefills of head dims 72-96 (the persistent kernel's) pad to 128 (default:
//                the d96 tile's persistent kernel; VIT72 16q729 -9%, P3 8q2k -11%, entry 68). d96-persist: the
//                default, kept for older commands
//   q-tma        the TMA producer loads a 16-bit tile's packed Q rows by one box per 64-column block (tensor map
//                KvTensorMaps::q) instead of 16-byte copies (the same bits) in every call it can. Default: where
//                the call's sequences average at least one box of tokens (tile_table.h q_boxes_pay; entry 69:
//                16q512 -3%, mixed batches of decodes +4..+10% where every tile loaded). no-q-tma: never
//   kv-coords-early  the 16-bit TMA producer reads each block's box coordinates one block ahead and waits for
//                the read before the current block's boxes, as before entry 76 (default: two blocks ahead, each
//                waited for where its block is issued; the same boxes)
//   no-lean-tail the tiles' epilogue as before entry 71 (default: kLoopLeanTail, the LSE's logarithm only where
//                stored and the store loop by incremental rows, the same bits, on the tiles that list it: bf16
//                d128 128-row, d64 128-row persistent; with q-tma 16q512 -7%). lean-tail: the default
//   combine-per-sequence  the split combine's grid is max_seqlen_q x heads rows per sequence for every call
//                (default: a varlen call whose q has fewer rows than batch x max_seqlen_q combines over q's rows;
//                entry 49)
//   split-recount-all  the real-tile split recount (split-rows-real) also where the longest-sequence bound leaves
//                the call unsplit (entry 49; the default recounts only where the bound splits)
//   split-rows-max  the split count of a varlen call from the longest sequence's m blocks per sequence and
//                batch x max_seqlen_q combined rows, as get_scheduler_metadata must (default split-rows-real: the
//                call's real tiles and rows, from q's token count; entry 48)
//   cpasync      16-bit K/V by cp.async in every block (no TMA producer; sm90/producer_tma.h)
//   l2promo=N    the K/V tensor maps' L2 promotion, N = 0, 64, 128 or 256 bytes (default: the box's row width,
//                128 or 64; l2promo=256 was the default before entry 51)
//   tma-one-warp one producer warp issues both K's and V's TMA boxes (the default splits them over two warps,
//                FwdParams::kv_issue_warps, and over four on the native e4m3 tiles, entry 29; same bits);
//                tma-warps=N: N = 1, 2 or 4 everywhere; the default adds 4 on 16-bit grids of at most half
//                as many CTAs as SMs (tile_table.h four_issuers_pay; the caller-capped splits: entry 70, q1s128k
//                splits32-md -5.6%); no-tma-warps-few: 2 there too
//   fp8-cp8      e4m3 cache: 8-byte cp.async.ca copies everywhere (the default takes 16-byte cp.async.cg copies
//                and 16-value conversion chunks where rows are 16-byte aligned; Fp8Mode in sm90/fwd_params.h)
//   fp8-convert  q, k and v e4m3 on the converting tiles (e4m3 -> 16-bit in the producer, exact logits) instead
//                of the native e4m3 tiles (QGMMA, P as two e4m3 terms P_hi + P_lo; the default at d 128 since
//                entry 19: 0.77-0.92 of the bf16 decode time against 1.14-1.41 converting)
//   no-fp8-m192  long e4m3 q/k/v d64 tiles keep the 128-row native tile (default: the 192-row native tile, three
//                consumer warpgroups, as bf16 d64 takes; fp8/OSS q8k 1783 -> 1516 us, entry 36); fp8-m192: the
//                default, kept for older commands
//   no-fp8-m192-short  short e4m3 d64 tiles (those bf16 runs on the persistent kernel, which the native tiles
//                lack) keep the 128-row native tile (default: 192 rows there too; fp8/OSS q8k w128 275.7 ->
//                236.7 us, entry 53)
//   fp8-headpack e4m3 decodes stream up to 8 KV heads per CTA on the head-packed tile (variant 203, where the plan
//                takes it: tile_table.h kFp8NativeHeadPackTiles, entry 37); fp8-headpack2: up to 4 on its two-CTA
//                form (variant 204, d128); no-fp8-headpack: the default, one KV head per CTA
//   d96          16-bit head dims 72-96 on the d96 tiles everywhere (tile_table.h, entry 38; default: the one-tile
//                128-row prefills only, plan.cpp takes_d96_tiles); no-d96: padded to 128 everywhere
//   no-fp8-producer-ahead  the native e4m3 64-row tiles take the loop before entry 39 (default: block-table
//                entries read two blocks ahead and clamped when the block is issued, the V transpose's loads
//                batched, loop value 30211; 0.66 -> 0.64 of bf16 at 128 x 8k keys, OSS 1.06 -> 0.92);
//                fp8-producer-ahead: the default, kept for older commands
//   fp8-cpasync  the native e4m3 tiles take K and V by 16-byte copies from the producer's 128 threads in every call
//                (default: TMA boxes where a tensor map describes them, copies where not; producer_fp8_native.h)
//   fp8-native   the default; kept so that older commands still parse
//   fp8-native-1p the native tiles with P as one e4m3 term, as FA3 (misses vLLM's 0.15 rule on two cases, entry 19)
//   no-fp8-f16pv the native d64 (and d128) tiles multiply P as two e4m3 terms against a transposed V (default: P*V in fp16 on
//                a V the producer widens from e4m3: OSS q8k 1496 -> 1327 us, 64q1s4k 166 -> 144, entry 78);
//                fp8-f16pv: the default
//   no-fp8-f16pv-d128 d128's native tiles keep P as two e4m3 terms (default: fp16 P*V there too, fewer K/V stages;
//                A/B 0.962 over the fp8 family and the operator grid's fp8 cases, L8 q8k -11.6%, entry 79);
//                fp8-f16pv-d128: the default
//   fp8-nocvt    DIAGNOSTIC (wrong results): the fp8 producer skips the conversion (copy cost alone)
//   host-stop-run    DIAGNOSTIC (nothing computed): the forward call returns when run() starts, after the binding,
//                the allocations, validation and the plan (scripts/host_breakdown.py)
//   host-stop-launch DIAGNOSTIC (nothing computed): returns right before the kernel launches, after the
//                parameters and the TMA tensor maps
//   fp8-nocopy   DIAGNOSTIC (wrong results): the fp8 producer skips the K/V copies (conversion cost alone)
//   fp8n-keyed-transpose  the native e4m3 producer transposes every V block on the last block's path (per-key
//                addresses), the transpose before entry 24 (same results; an A/B switch)
#pragma once

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace flashseek {

struct Experiment {
  bool combine_warp = false;
  bool pdl = true;
  bool pdl_trigger = true;       // entry 53
  bool fwd_pdl = false;          // entry 53 (measured neutral)
  bool pdl_chain = true;         // entry 113
  bool warp_combine_pdl = false;  // entry 117
  bool combine_carveout = false;  // entry 80
  bool m192_turns = false;        // entry 81
  bool tma_no_fence = false;      // entry 110: with mask_range, no proxy fence on TMA-loaded blocks
  bool mask_range = false;        // entry 109: the unmasked blocks' range on the long prefill tiles' one-tile values
  bool mask_range_d64 = true;     // entry 112: mask_range on the d64 192-row tile only
  bool decode_persist = false;       // entry 83: every grid, d128 and d64
  bool decode_persist_waves = true;  // entry 86: the d128 two-CTA tile, grids of 3 waves and more
  bool combine_prefetch = true;  // entry 53
  bool row_prefetch = true;      // entry 54 (interleaved A/B at 057db11; the full grid at 329aa1b ran without it)
  bool split_fa = false;
  int split_cap = 0;     // 0: none
  bool split_model_v1 = false;  // the split model's constants before entry 30
  int split_force = 0;   // 0: the model's count; n: n splits (clamped to the key blocks and the caller's bound)
  int cta_rate_gbps = 0; // 0: the model's default
  int loop_flags = -1;   // -1: the kernel's default main-loop variant
  bool persistent = true;  // the persistent kernel for the tiles that have it (launch_forward: loop value 3587)
  bool tile_fastdiv = true;  // entry 64: 0.995 over 50 persistent-tile scenarios
  bool auto_two_ctas = true;  // the planner's two-CTA decode rule (plan.cpp)
  bool keys_as_m = true;      // the planner's keys-as-M decode rule (plan.cpp, entry 90)
  bool fp8_keys_as_m_two_ctas = true;  // fp8-kam2: variant 209 where the native two-CTA tile would run (entry 107)
  bool keys_as_m_two_ctas = true;  // kam2: decode tiles 7 / 8 where the two-CTA tiles 1 / 3 would run (entry 105)
  bool keys_as_m_four_ctas = true;  // kam4: decode tile 9 where the plan takes tile 8 (entry 111)
  bool keys_as_m_two_ctas_split2 = false;  // kam2-split2: one-wave long decodes in 2 splits on tiles 7 / 8 (entry 108)
  bool keys_as_m_two_ctas_splits = true;  // kam2-splits: split decodes on tiles 7 / 8 in twice the splits (entry 118)
  bool cluster_combine = false;  // cluster-combine: keys-as-M split decodes combined in a cluster (entry 120)
  int keys_as_m_max_ctas = 0;  // > 0: that rule only on grids (CTAs x splits) of fewer CTAs (entry 95's lead)
  bool fp8_keys_as_m = true;  // ... for native e4m3 d128 decodes (variant 208, entries 94, 95)
  bool fp8_two_ctas = true;  // the two-CTA native e4m3 d128 decode tile (plan.cpp)
  bool d64_two_ctas = true;  // the two-CTA rule for bf16 d64 decode grids too (decode tile 3; entry 21)
  bool d64_m192 = true;  // the 192-row d64 tile for long tiles (plan.cpp)
  bool persist_m192 = true;  // ... and for the persistent kernel's short bf16 tiles (entry 42)
  // ... where: 0 every such tile (entry 42), 1 K/V that TMA streams (entry 47), 2 only where the persistent kernel
  // will run (TMA and 1.5 waves, entry 44)
  int persist_m192_rule = 1;
  int persist_half_waves = 4;  // entry 95: the persistent kernel on grids of more than this many half waves
  int lpt_l2_mb = 40;  // entry 66: lpt's L2 share a section, in MB
  int lpt_mode = 1;  // entry 66: 0 never, 1 where launch_order.h lpt_pays, 2 on every causal / windowed grid
  bool d96_persist = true;  // entry 68
  bool d96_m192 = true;  // entry 67
  int q_tma_mode = 1;  // entry 69: 0 never, 1 where tile_table.h q_boxes_pay, 2 wherever a map describes Q
  bool lean_tail = true;  // entry 71
  bool kv_coords_early = false;  // entry 76
  int combine_warp_rows = 2048;  // entry 99: > 0, the warp-per-row combine from that many rows (split_heuristic.h)
  int flat_order = -1;  // entry 98: FwdParams::flat_order forced (0, 1, 2); -1: 1 where the grid is over a wave
  bool combine_q_rows = true;  // a varlen call's combine grid over q's rows (entry 49)
  bool split_recount_all = false;  // the real-tile recount also where the bound leaves the call whole (entry 49)
  bool split_real_tiles = true;  // a varlen call's split count from its real tiles and rows (entry 48)
  int decode_tile = 0;   // 0: the tile table's decode tile; n: decode_variant_tile(n) (bf16)
  bool cp_async_kv = false;
  int l2_promotion = -1;  // the K/V maps' L2 promotion forced: 0, 64, 128 or 256 bytes (-1: l2_policy.h's rule)
  int tma_issue_warps = 0;  // producer warps issuing TMA boxes: 1, 2 or 4 (entries 26, 29); 0: 4 native e4m3, else 2
  bool tma_warps_few_ctas = true;  // ... and 4 on 16-bit grids of at most half the SMs' count (entry 70)
  bool fp8_copy16 = true;  // measured 1.2-1.4x faster e4m3 decode (docs/perf-log.md entry 11)
  bool fp8_native = true;  // native e4m3 tiles for e4m3 q/k/v at d 128 (entry 19)
  bool fp8_native_copies = false;  // native e4m3 K/V by copies everywhere (fp8-cpasync)
  bool fp8_m192 = true;  // the 192-row native d64 tile for long e4m3 tiles (entry 36)
  bool fp8_m192_short = true;  // ... and for the short ones (no persistent native kernel; entry 53)
  bool d96_tiles = false;  // 16-bit d 72-96 on the d96 tiles everywhere (entry 38)
  bool d96_auto = true;    // ... on the one-tile 128-row prefills (plan.cpp takes_d96_tiles)
  bool fp8_producer_ahead = true;  // the native decode tiles' producer-latency loop (entry 39)
  bool fp8_persist = true;  // entry 99: the 192-row native d64 tile on the persistent kernel
  bool window_origin = true;  // entry 102: windowed tiles' key blocks from their first visible key
  bool d64_window_tile = true;  // entry 103: bf16 d64 windows that fit one 176-key block on that tile
  int fp8_head_pack = 0;  // head-packed native e4m3 decode tiles: 0 off, 1 variant 203, 2 variant 204 (entry 37)
  bool fp8_native_one_p = false;  // with P as one e4m3 term (FA3's precision) instead of two (entry 19)
  bool fp8_f16_pv = true;  // d64 native tiles: P*V in fp16 on a widened V (entry 78)
  bool fp8_f16_pv_d128 = true;  // ... and d128's native tiles (entry 79)
  bool fp8_skip_convert = false;  // diagnostic
  bool fp8_skip_copy = false;     // diagnostic
  int host_stop = 0;  // diagnostic: 1 run() returns at once, 2 it returns before the launches (host time only)
  bool fp8_keyed_transpose = false;  // A/B: every V block on the transpose's last-block path (entry 24)
  // Tokens parse() does not know, comma-separated: a misspelt token would otherwise time the default against
  // itself and pass for a neutral A/B. get() names them on stderr once.
  std::string unknown_tokens;

  static const Experiment& get() {
    static const Experiment e = [] {
      Experiment parsed = parse(std::getenv("FLASHSEEK_EXPERIMENT"));
      if (!parsed.unknown_tokens.empty())
        std::fprintf(stderr, "flashseek: FLASHSEEK_EXPERIMENT tokens not known, ignored: %s\n",
                     parsed.unknown_tokens.c_str());
      return parsed;
    }();
    return e;
  }

  static Experiment parse(const char* text) {
    Experiment e;
    if (text == nullptr) return e;
    std::string s(text);
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t end = s.find(',', pos);
      if (end == std::string::npos) end = s.size();
      const std::string t = s.substr(pos, end - pos);
      if (t == "combine-warp") e.combine_warp = true;
      else if (t == "pdl") e.pdl = true;
      else if (t == "no-pdl") e.pdl = false;
      else if (t == "combine-carveout") e.combine_carveout = true;
      else if (t == "m192-turns") e.m192_turns = true;
      else if (t == "mask-range") e.mask_range = true;
      else if (t == "mask-range-d64") e.mask_range_d64 = true;
      else if (t == "no-mask-range-d64") e.mask_range_d64 = false;
      else if (t == "tma-no-fence") e.tma_no_fence = true;
      else if (t == "decode-persist") e.decode_persist = true;
      else if (t == "no-decode-persist") e.decode_persist_waves = false;
      else if (t == "pdl-trigger") e.pdl_trigger = true;
      else if (t == "no-pdl-trigger") e.pdl_trigger = false;
      else if (t == "fwd-pdl") e.fwd_pdl = true;
      else if (t == "pdl-chain") e.pdl_chain = true;
      else if (t == "no-pdl-chain") e.pdl_chain = false;
      else if (t == "warp-combine-pdl") e.warp_combine_pdl = true;
      else if (t == "combine-prefetch") e.combine_prefetch = true;
      else if (t == "no-combine-prefetch") e.combine_prefetch = false;
      else if (t == "row-prefetch") e.row_prefetch = true;
      else if (t == "no-row-prefetch") e.row_prefetch = false;
      else if (t == "split-fa") e.split_fa = true;
      else if (t.rfind("splitcap=", 0) == 0) e.split_cap = std::atoi(t.c_str() + 9);
      else if (t == "split-model-v1") e.split_model_v1 = true;
      else if (t.rfind("splits=", 0) == 0) e.split_force = std::atoi(t.c_str() + 7);
      else if (t.rfind("rate=", 0) == 0) e.cta_rate_gbps = std::atoi(t.c_str() + 5);
      else if (t.rfind("tile=", 0) == 0) e.decode_tile = std::atoi(t.c_str() + 5);
      else if (t == "cta2") e.decode_tile = 1;
      else if (t == "no-cta2") e.auto_two_ctas = false;
      else if (t == "no-keys-as-m") e.keys_as_m = false;
      else if (t == "keys-as-m") e.keys_as_m = true;
      else if (t == "kam2") e.keys_as_m_two_ctas = true;
      else if (t == "no-kam2") e.keys_as_m_two_ctas = false;
      else if (t == "fp8-kam2") e.fp8_keys_as_m_two_ctas = true;
      else if (t == "no-fp8-kam2") e.fp8_keys_as_m_two_ctas = false;
      else if (t == "kam2-split2") e.keys_as_m_two_ctas_split2 = true;
      else if (t == "kam2-splits") e.keys_as_m_two_ctas_splits = true;
      else if (t == "no-kam2-splits") e.keys_as_m_two_ctas_splits = false;
      else if (t == "cluster-combine") e.cluster_combine = true;
      else if (t == "kam4") e.keys_as_m_four_ctas = true;
      else if (t == "no-kam4") e.keys_as_m_four_ctas = false;
      else if (t.rfind("keys-as-m-ctas=", 0) == 0) e.keys_as_m_max_ctas = std::atoi(t.c_str() + 15);
      else if (t == "fp8-keys-as-m") e.fp8_keys_as_m = true;
      else if (t == "no-fp8-keys-as-m") e.fp8_keys_as_m = false;
      else if (t == "no-fp8-cta2") e.fp8_two_ctas = false;
      else if (t == "d64-cta2") e.d64_two_ctas = true;
      else if (t == "no-d64-cta2") e.d64_two_ctas = false;
      else if (t == "no-m192") e.d64_m192 = false;
      else if (t == "persist192") e.persist_m192 = true;
      else if (t == "no-persist192") e.persist_m192 = false;
      else if (t == "persist192-any") e.persist_m192_rule = 0;
      else if (t == "persist192-tma") e.persist_m192_rule = 1;
      else if (t == "persist192-strict") e.persist_m192_rule = 2;
      else if (t == "lpt") e.lpt_mode = 2;
      else if (t.rfind("lpt=", 0) == 0) e.lpt_mode = 2, e.lpt_l2_mb = std::atoi(t.c_str() + 4);
      else if (t == "no-lpt") e.lpt_mode = 0;
      else if (t == "d96-m192") e.d96_m192 = true;
      else if (t == "no-d96-m192") e.d96_m192 = false;
      else if (t == "d96-persist") e.d96_persist = true;
      else if (t == "no-d96-persist") e.d96_persist = false;
      else if (t == "q-tma") e.q_tma_mode = 2;
      else if (t == "no-q-tma") e.q_tma_mode = 0;
      else if (t == "lean-tail") e.lean_tail = true;
      else if (t == "no-lean-tail") e.lean_tail = false;
      else if (t == "kv-coords-early") e.kv_coords_early = true;
      else if (t.rfind("flat-order=", 0) == 0) e.flat_order = std::atoi(t.c_str() + 11);
      else if (t.rfind("combine-warp-rows=", 0) == 0) e.combine_warp_rows = std::atoi(t.c_str() + 18);
      else if (t == "split-rows-max") e.split_real_tiles = false;
      else if (t == "split-recount-all") e.split_recount_all = true;
      else if (t == "combine-per-sequence") e.combine_q_rows = false;
      else if (t == "split-rows-real") e.split_real_tiles = true;
      else if (t == "bn64s6") e.decode_tile = 2;
      else if (t == "cpasync") e.cp_async_kv = true;
      else if (t.rfind("l2promo=", 0) == 0) e.l2_promotion = std::atoi(t.c_str() + 8);
      else if (t == "tma-one-warp") e.tma_issue_warps = 1;
      else if (t.rfind("tma-warps=", 0) == 0) e.tma_issue_warps = std::atoi(t.c_str() + 10);
      else if (t == "tma-warps-few") e.tma_warps_few_ctas = true;
      else if (t == "no-tma-warps-few") e.tma_warps_few_ctas = false;
      else if (t == "no-persist") e.persistent = false;
      else if (t.rfind("persist-half-waves=", 0) == 0) e.persist_half_waves = std::atoi(t.c_str() + 19);
      else if (t == "tile-fastdiv") e.tile_fastdiv = true;
      else if (t == "no-tile-fastdiv") e.tile_fastdiv = false;
      else if (t == "fp8-cp16") e.fp8_copy16 = true;
      else if (t == "fp8-cp8") e.fp8_copy16 = false;
      else if (t == "fp8-native") e.fp8_native = true;
      else if (t == "fp8-native-1p") e.fp8_native = e.fp8_native_one_p = true;
      else if (t == "fp8-f16pv") e.fp8_f16_pv = true;
      else if (t == "no-fp8-f16pv") e.fp8_f16_pv = false;
      else if (t == "fp8-f16pv-d128") e.fp8_f16_pv_d128 = true;
      else if (t == "no-fp8-f16pv-d128") e.fp8_f16_pv_d128 = false;
      else if (t == "fp8-convert") e.fp8_native = false;
      else if (t == "fp8-cpasync") e.fp8_native_copies = true;
      else if (t == "fp8-m192") e.fp8_m192 = true;
      else if (t == "no-fp8-m192-short") e.fp8_m192_short = false;
      else if (t == "no-fp8-m192") e.fp8_m192 = false;
      else if (t == "no-fp8-headpack") e.fp8_head_pack = 0;
      else if (t == "fp8-headpack") e.fp8_head_pack = 1;
      else if (t == "fp8-headpack2") e.fp8_head_pack = 2;
      else if (t == "d96") e.d96_tiles = true;
      else if (t == "fp8-producer-ahead") e.fp8_producer_ahead = true;
      else if (t == "fp8-persist") e.fp8_persist = true;
      else if (t == "no-fp8-persist") e.fp8_persist = false;
      else if (t == "window-origin") e.window_origin = true;
      else if (t == "no-window-origin") e.window_origin = false;
      else if (t == "d64-window-tile") e.d64_window_tile = true;
      else if (t == "no-d64-window-tile") e.d64_window_tile = false;
      else if (t == "no-fp8-producer-ahead") e.fp8_producer_ahead = false;
      else if (t == "no-d96") e.d96_tiles = e.d96_auto = false;
      else if (t == "fp8-nocvt") e.fp8_skip_convert = true;
      else if (t == "fp8-nocopy") e.fp8_skip_copy = true;
      else if (t == "host-stop-run") e.host_stop = 1;
      else if (t == "host-stop-launch") e.host_stop = 2;
      else if (t == "fp8n-keyed-transpose") e.fp8_keyed_transpose = true;
      else if (t.rfind("loop=", 0) == 0) e.loop_flags = std::atoi(t.c_str() + 5);
      else if (!t.empty() && t.find_first_not_of("0123456789") == std::string::npos) e.loop_flags = std::atoi(t.c_str());
      else if (!t.empty()) e.unknown_tokens += (e.unknown_tokens.empty() ? "" : ",") + t;
      pos = end + 1;
    }
    return e;
  }
};

}  // namespace flashseek

// L2 policies of the K/V streams (docs/perf-log.md entry 51). Plain C++ so the CPU tests read the rules.
#pragma once

namespace flashseek {

// The K/V tensor maps' L2 promotion, in bytes: the box's own row width (128 bytes under the 128-byte swizzle, 64
// under the 64-byte one), so that no request is widened past what its box reads. The 256-byte promotion taken
// before made each 128-byte column box of a d128 row fetch the whole row: the second box then looked its sectors
// up again (a quarter of L2 lookups were such hits) and large paged decodes streamed 5.5% slower (entry 51).
// `forced` >= 0 (FLASHSEEK_EXPERIMENT l2promo=N) replaces the rule.
constexpr int kv_l2_promotion_bytes(int forced, bool swizzle64) {
  return forced >= 0 ? forced : swizzle64 ? 64 : 128;
}

// FwdParams::kv_l2_hint: 2 (evict_last on the tiles whose sequence has more than one m block, ProducerTma) where
// the call has several m blocks, none (0) where every tile reads its K/V once (decode). The per-call rule taken
// before (evict_last on every tile of such a call) also marked a mixed batch's decode tiles' read-once K/V: L8
// mixed batches +2.6..3.5% (entry 51). `forced` >= 0 (kv-evict-first 1 / -last 3, every tile / -none 0) replaces
// the rule.
constexpr int kv_l2_hint(int forced, int num_m_blocks) {
  return forced >= 0 ? forced : num_m_blocks > 1 ? 2 : 0;
}

}  // namespace flashseek

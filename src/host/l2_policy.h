// The L2 promotion of the K/V streams (docs/perf-log.md entry 51). Plain C++ so the CPU tests read the rules.
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

}  // namespace flashseek

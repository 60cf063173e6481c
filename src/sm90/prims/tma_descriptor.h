// The bytes of a TMA tensor map as a kernel parameter: layout-compatible with the driver's CUtensorMap
// (64-byte aligned, 128 bytes) without including the driver header. Plain C++, shared by host and device code.
#pragma once

#include <cstdint>

namespace flashseek::sm90 {

struct alignas(64) TmaDescriptor {
  uint64_t opaque[16];
};

}  // namespace flashseek::sm90

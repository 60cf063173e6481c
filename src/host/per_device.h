// State that CUDA keeps per device context, set up or read once per device.
//
// cudaFuncSetAttribute (a kernel's dynamic shared-memory limit, its carveout) applies to the function in the
// current device's context only: a once-per-process flag set it on the first device a process used, and the first
// launch on a second device then failed with "invalid argument". Device attributes differ per device too. So each
// call site keeps one slot per device, filled on that device's first call, from any thread.
#pragma once

#include <mutex>

namespace flashseek {

template <class T>
class PerDevice {
 public:
  static constexpr int kMaxDevices = 64;

  // make()'s value for `device`, computed on the device's first call; a device outside the table (or -1: the
  // current device could not be read) calls make() every time.
  template <class Make>
  T get(int device, Make&& make) {
    if (device < 0 || device >= kMaxDevices) return make();
    std::call_once(once_[device], [&] { value_[device] = make(); });
    return value_[device];
  }

 private:
  std::once_flag once_[kMaxDevices];
  T value_[kMaxDevices]{};
};

}  // namespace flashseek

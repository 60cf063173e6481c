// PerDevice (src/host/per_device.h): each device's slot is filled once, from any thread, and only that device's.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "per_device.h"

namespace {

using flashseek::PerDevice;

TEST(PerDevice, EachDeviceIsSetUpOnceAndKeepsItsOwnValue) {
  PerDevice<int> slots;
  int calls = 0;
  auto make_for = [&](int value) {
    return [&calls, value] {
      ++calls;
      return value;
    };
  };
  EXPECT_EQ(slots.get(0, make_for(10)), 10);
  EXPECT_EQ(slots.get(0, make_for(99)), 10);  // device 0 keeps its first value
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(slots.get(1, make_for(11)), 11);  // a second device gets its own set-up (the bug: it got device 0's)
  EXPECT_EQ(calls, 2);
  EXPECT_EQ(slots.get(1, make_for(98)), 11);
  EXPECT_EQ(slots.get(0, make_for(97)), 10);
  EXPECT_EQ(calls, 2);
}

TEST(PerDevice, DevicesOutsideTheTableRunTheSetUpEveryCall) {
  PerDevice<int> slots;
  int calls = 0;
  auto make = [&] { return ++calls; };
  EXPECT_EQ(slots.get(-1, make), 1);  // the current device could not be read
  EXPECT_EQ(slots.get(-1, make), 2);
  EXPECT_EQ(slots.get(PerDevice<int>::kMaxDevices, make), 3);
  EXPECT_EQ(slots.get(PerDevice<int>::kMaxDevices - 1, make), 4);
  EXPECT_EQ(slots.get(PerDevice<int>::kMaxDevices - 1, make), 4);
}

TEST(PerDevice, ConcurrentFirstCallsSetUpOnce) {
  PerDevice<int> slots;
  std::atomic<int> calls{0};
  std::atomic<bool> go{false};
  std::vector<int> seen(16, -1);
  std::vector<std::thread> threads;
  for (int t = 0; t < 16; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) {
      }
      seen[t] = slots.get(3, [&] {
        std::this_thread::yield();
        return 100 + calls.fetch_add(1);
      });
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(calls.load(), 1);
  for (int v : seen) EXPECT_EQ(v, 100);
}

TEST(PerDevice, AThrowingSetUpLeavesTheSlotToTheNextCall) {
  PerDevice<int> slots;
  EXPECT_THROW(slots.get(2, []() -> int { throw 1; }), int);
  EXPECT_EQ(slots.get(2, [] { return 5; }), 5);
}

}  // namespace

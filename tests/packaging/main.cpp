// A downstream C++ project: finds the installed package and calls its validation (no GPU needed). It also takes
// the address of run(), so that the link pulls in every kernel object of the static library: two kernel files that
// define the same external symbol then fail here, as they would in any consumer that launches.
#include <cstdio>

#include "flashseek/flashseek.h"

int main(int argc, char**) {
  flashseek::AttentionArgs args;
  try {
    flashseek::validate(args);
  } catch (const flashseek::Error& e) {
    std::printf("%s\n", e.what());
  }
  void (*forward)(const flashseek::AttentionArgs&, const flashseek::LaunchPlan&, void*, void*) = &flashseek::run;
  if (argc > 1) std::printf("%p\n", reinterpret_cast<void*>(forward));
  return 0;
}

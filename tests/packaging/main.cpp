// A downstream C++ project: finds the installed package and calls its validation (no GPU needed).
#include <cstdio>

#include "flashseek/flashseek.h"

int main() {
  flashseek::AttentionArgs args;
  try {
    flashseek::validate(args);
  } catch (const flashseek::Error& e) {
    std::printf("%s\n", e.what());
  }
  return 0;
}

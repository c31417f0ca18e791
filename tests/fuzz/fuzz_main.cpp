// One libFuzzer executable per entry point: LOOPCAST_FUZZ_ENTRY names it.
#include "fuzz_targets.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto entry = loopcast::fuzz::find(LOOPCAST_FUZZ_ENTRY);
  entry(data, size);
  return 0;
}

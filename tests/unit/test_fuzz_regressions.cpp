// Every input the fuzzers kept (tests/fuzz/regressions/<entry>/*) is replayed through its entry
// point in the normal build: it must be handled (a loopcast::error at most), never crash.
#include "../fuzz/fuzz_targets.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

namespace fs = std::filesystem;

TEST(FuzzRegressions, EverySavedInputIsHandled) {
  const fs::path root = LOOPCAST_FUZZ_REGRESSIONS_DIR;
  ASSERT_TRUE(fs::is_directory(root));
  std::size_t replayed = 0;
  for (const auto& dir : fs::directory_iterator(root)) {
    if (!dir.is_directory()) continue;
    const auto entry = loopcast::fuzz::find(dir.path().filename().string());
    ASSERT_NE(entry, nullptr) << "no fuzz entry point named " << dir.path().filename();
    for (const auto& f : fs::directory_iterator(dir.path())) {
      SCOPED_TRACE(f.path().string());
      std::ifstream in(f.path(), std::ios::binary);
      const std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      EXPECT_NO_THROW(entry(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
      ++replayed;
    }
  }
  RecordProperty("replayed", static_cast<int>(replayed));
}

// The entry points also take the real inputs they are seeded with.
TEST(FuzzRegressions, SeedsRunThroughTheEntryPoints) {
  const fs::path models = LOOPCAST_FUZZ_MODELS_DIR;
  std::ifstream in(models / "targets" / "cerebras-developer-qwen-3.8-27b.json", std::ios::binary);
  std::vector<char> bytes{'\0'};  // kind 0: target
  bytes.insert(bytes.end(), std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  EXPECT_NO_THROW(loopcast::fuzz::preset(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size()));
  const std::string row = R"({"role":"assistant","time":{"created":1000,"completed":3000},"tokens":{"input":5,"output":70}})";
  EXPECT_NO_THROW(loopcast::fuzz::opencode_rows(reinterpret_cast<const std::uint8_t*>(row.data()), row.size()));
}

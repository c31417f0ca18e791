// Helpers shared by the loopcast commands.
#include "cli.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <iostream>

namespace loopcast::cli {

preset_library library(const globals& g) {
  if (g.models_dir.empty()) return preset_library::standard();
  return preset_library({g.models_dir});
}

scenario scenario_ref(const preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (std::filesystem::is_regular_file(ref, ec)) return load_scenario_file(ref, lib);
  return lib.load_scenario(ref);
}

target target_ref(const preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (ref.ends_with(".json") && std::filesystem::is_regular_file(ref, ec)) return load_target_file(ref);
  return lib.load_target(ref);
}

retry_policy client_ref(const preset_library& lib, const std::string& ref) {
  std::error_code ec;
  if (ref.ends_with(".json") && std::filesystem::is_regular_file(ref, ec)) return load_client_file(ref);
  return lib.load_client(ref);
}

void write_output(const std::string& path, const std::string& text) {
  if (path == "-") {
    std::cout << text;
    return;
  }
  std::ofstream f(path);
  if (!f) throw output_error(fmt::format("{}: cannot open for writing", path));
  f << text;
  if (!f) throw output_error(fmt::format("{}: write failed", path));
}

} // namespace loopcast::cli

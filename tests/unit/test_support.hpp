// What several test files use: where the tests' inputs are, the preset library, a scratch file per
// suite, a file read whole and a CLI run's outcome. One definition each, so that the test sources
// also compile in batches (CMake's unity build), where two files' own helpers of one name clash.
#pragma once

#include "loopcast/presets.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <system_error>

namespace loopcast::test_support {

inline const std::string models = LOOPCAST_TEST_MODELS_DIR;             ///< the repository's models/
inline const std::filesystem::path traces = LOOPCAST_TEST_TRACES_DIR;   ///< tests/data/traces
inline const std::filesystem::path data_dir = LOOPCAST_TEST_DATA_DIR;   ///< tests/data
/// The bundled LiteLLM price map (models/prices/litellm), the real file as LiteLLM publishes it.
inline const std::filesystem::path litellm_prices =
    std::filesystem::path(LOOPCAST_TEST_MODELS_DIR) / "prices/litellm/model_prices_and_context_window.json";

/// The preset library of models/, loaded once.
inline const preset_library& lib() {
  static const preset_library l({LOOPCAST_TEST_MODELS_DIR});
  return l;
}

/// The scratch folders this process made, removed with what they hold when it exits.
struct scratch_folders {
  std::set<std::filesystem::path> made;
  scratch_folders() = default;
  scratch_folders(const scratch_folders&) = delete;
  scratch_folders& operator=(const scratch_folders&) = delete;
  ~scratch_folders() {
    for (const auto& dir : made) {
      std::error_code ec;  // a folder a test removed itself, or one still open, is left as it is
      std::filesystem::remove_all(dir, ec);
    }
  }
};

/// `name` in this process's scratch folder for `suite` (made if missing; removed at exit).
inline std::filesystem::path scratch(const std::string& suite, const std::string& name) {
  static scratch_folders folders;
  const auto dir = std::filesystem::temp_directory_path() / ("loopcast_" + suite + "_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  folders.made.insert(dir);
  return dir / name;
}

/// The whole file (empty when it cannot be read).
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// What a run of the loopcast command gave: its exit code, standard output and standard error.
struct run_result {
  int code;
  std::string out, err;
};

#ifdef LOOPCAST_CLI
/// The CLI run with `args` (a shell's words) and, if given, a shell redirect of its input: its exit
/// code (-1: killed), standard output and standard error.
inline run_result run_cli(const std::string& args, const std::string& input_redirect = "") {
  const auto out = scratch("cli", "out"), err = scratch("cli", "err");
  const std::string cmd = std::string(LOOPCAST_CLI) + " " + args + " >" + out.string() + " 2>" + err.string() +
                          input_redirect;
  const int status = std::system(cmd.c_str());
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(out), slurp(err)};
}
#endif

} // namespace loopcast::test_support

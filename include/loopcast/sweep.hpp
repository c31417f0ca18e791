// loopcast — sweeps: a grid over any preset parameters × seeds.
//
// A sweep file names a scenario and lists parameters by their JSON pointer into the scenario's
// resolved document (every referenced preset inlined: see resolved_preset_json and
// `loopcast sweep FILE --print-base`), each with its values. The grid is their Cartesian product,
// the first parameter varying slowest. Every grid point is a scenario loaded with the same strict
// checks as a preset (an error names the point and its values). Each point runs the seeds
// point.seed + 0, 1, …; rows come point-major, then seed, then option, whatever the thread count.
//
//   {"kind": "sweep", "name": "…", "scenario": "reference" | "file.json" | {…},
//    "parameters": [{"path": "/sessions", "values": [1, 2, 5]}, …], "seeds": 20}
#pragma once

#include "loopcast/montecarlo.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/scenario.hpp"

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace loopcast {

struct sweep_point {
  std::vector<std::string> values;  ///< each parameter's value, as compact JSON
  scenario scn;
};

struct sweep_spec {
  std::string name;
  std::string description;
  std::string file;
  std::string base_json;            ///< the resolved scenario document the paths point into
  std::vector<std::string> paths;   ///< JSON pointers, one per parameter
  std::vector<sweep_point> points;  ///< the grid
  std::int32_t seeds = 1;           ///< per point
};

/// Throws config_error naming the file and JSON pointer (of the sweep, or of the scenario at a
/// grid point) for anything invalid.
sweep_spec parse_sweep(std::string_view json_text, const std::string& file, const preset_library& lib);
sweep_spec load_sweep_file(const std::filesystem::path& file, const preset_library& lib);

/// The rows of one grid point: seeds × options, seed-major.
std::vector<run_summary> run_sweep_point(const sweep_spec& s, std::size_t point, unsigned threads = 1);

struct sweep_result {
  std::vector<run_summary> rows;                         ///< points × seeds × options
  std::vector<std::vector<option_distribution>> points;  ///< per point, per option
};

/// Every point × seed shared among `threads` threads (0: one per core). Same result whatever
/// the thread count.
sweep_result run_sweep(const sweep_spec& s, unsigned threads = 1, double confidence = 0.95, double horizon_s = 3600);

} // namespace loopcast

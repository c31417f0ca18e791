#include "loopcast/sweep.hpp"
#include "loopcast/files.hpp"

#include "loopcast/errors.hpp"

#include "json/reader.hpp"
#include "util/parallel.hpp"
#include "util/progress.hpp"
#include "study/seed_runs.hpp"

#include <fmt/format.h>

namespace loopcast {

using detail::node;

namespace {
constexpr std::size_t max_points = 100'000;
constexpr std::int64_t max_runs = 10'000'000;  // points × seeds
}

sweep_spec parse_sweep(std::string_view text, const std::string& file, const preset_library& lib) {
  const auto j = detail::parse_json(text, file);
  const node root(j, "", file);
  root.expect_keys({"kind", "name", "description", "scenario", "parameters", "seeds"});
  if (root.at("kind").string() != "sweep")
    root.at("kind").fail(fmt::format("expected \"sweep\", found \"{}\"", root.at("kind").string()));
  sweep_spec s;
  s.file = file;
  s.name = root.at("name").string();
  if (root.has("description")) s.description = root.at("description").string();
  s.seeds = static_cast<std::int32_t>(root.at("seeds").integer(1, 1'000'000));

  // The base scenario, resolved so that every parameter has a pointer.
  const auto sc = root.at("scenario");
  std::string base_text, base_file;
  if (sc.is_object()) {
    base_text = sc.raw().dump();
    base_file = file + "#/scenario";
  } else {
    const auto ref = sc.string();
    if (ref.ends_with(".json")) {
      std::filesystem::path p(ref);
      if (p.is_relative()) p = std::filesystem::path(file).parent_path() / p;
      base_file = p.string();
    } else {
      base_file = lib.find(preset_kind::scenario, ref).string();
    }
    base_text = read_text_file(base_file);
  }
  s.base_json = resolved_preset_json(base_text, base_file, lib, 2);
  const auto base = nlohmann::json::parse(s.base_json);

  // The parameters and their values.
  std::vector<std::vector<nlohmann::json>> values;
  std::size_t grid = 1;
  for (const auto& p : root.at("parameters").array(1)) {
    p.expect_keys({"path", "values"});
    const auto path = p.at("path").string();
    nlohmann::json::json_pointer ptr;
    try {
      ptr = nlohmann::json::json_pointer(path);
    } catch (const nlohmann::json::exception&) {
      p.at("path").fail(fmt::format("\"{}\" is not a JSON pointer (like /options/0/target/limits/buckets/1/limit)", path));
    }
    if (ptr.empty()) p.at("path").fail("the empty pointer would replace the whole scenario");
    const bool exists = base.contains(ptr);
    const bool parent_is_object = base.contains(ptr.parent_pointer()) && base.at(ptr.parent_pointer()).is_object();
    if (!exists && !parent_is_object)
      p.at("path").fail(fmt::format("{} is not in the scenario {} (`loopcast sweep FILE --print-base` shows its "
                                    "document)", path, base_file));
    for (const auto& prev : s.paths)
      if (prev == path) p.at("path").fail(fmt::format("{} is swept twice", path));
    std::vector<nlohmann::json> vs;
    for (const auto& v : p.at("values").array(1)) vs.push_back(v.raw());
    grid *= vs.size();
    if (grid > max_points)
      p.at("values").fail(fmt::format("the grid has more than {} points", max_points));
    s.paths.push_back(path);
    values.push_back(std::move(vs));
  }
  if (static_cast<std::int64_t>(grid) * s.seeds > max_runs)
    root.at("seeds").fail(fmt::format("{} points × {} seeds = {} runs; a sweep runs at most {}", grid, s.seeds,
                                      static_cast<std::int64_t>(grid) * s.seeds, max_runs));

  // The grid, first parameter slowest; every point loads as a scenario.
  s.points.reserve(grid);
  std::vector<std::size_t> idx(values.size(), 0);
  for (std::size_t k = 0; k < grid; ++k) {
    auto doc = base;
    sweep_point pt;
    std::string where;
    for (std::size_t i = 0; i < values.size(); ++i) {
      const auto& v = values[i][idx[i]];
      doc[nlohmann::json::json_pointer(s.paths[i])] = v;
      pt.values.push_back(v.dump());
      where += fmt::format("{}{} = {}", i ? ", " : "", s.paths[i], pt.values.back());
    }
    pt.scn = parse_scenario(doc.dump(), fmt::format("{} (point {}: {})", file, k + 1, where), lib);
    s.points.push_back(std::move(pt));
    for (std::size_t i = values.size(); i-- > 0;) {
      if (++idx[i] < values[i].size()) break;
      idx[i] = 0;
    }
  }
  return s;
}

sweep_spec load_sweep_file(const std::filesystem::path& f, const preset_library& lib) {
  return parse_sweep(read_text_file(f.string()), f.string(), lib);
}


std::vector<run_summary> run_sweep_point(const sweep_spec& s, std::size_t point, unsigned threads) {
  const auto& scn = s.points.at(point).scn;
  return run_seeds(scn, consecutive_seeds(scn.seed, static_cast<std::size_t>(s.seeds)), threads);
}

sweep_result run_sweep(const sweep_spec& s, unsigned threads, double confidence, double horizon_s) {
  // Rows of point p start at offset[p]; every (point, seed) run is one task.
  std::vector<std::size_t> offset(s.points.size() + 1, 0);
  for (std::size_t p = 0; p < s.points.size(); ++p)
    offset[p + 1] = offset[p] + static_cast<std::size_t>(s.seeds) * s.points[p].scn.options.size();
  sweep_result r;
  r.rows.resize(offset.back());
  const auto per_point = static_cast<std::size_t>(s.seeds);
  detail::progress_task progress("sweep", s.points.size() * per_point);
  // What run_seeds checks of each point's seeds: every worker may be running the point at once.
  const std::size_t workers = detail::worker_count(s.points.size() * per_point, threads);
  for (const auto& point : s.points)
    check_run_size(run_size_of(point.scn, false, false), "scenario", point.scn.name,
                   static_cast<std::int64_t>(workers));
  std::vector<detail::seed_workspace> ws(workers);
  detail::parallel_for(s.points.size() * per_point, threads, [&](std::size_t task, std::size_t worker) {
    const std::size_t p = task / per_point, k = task % per_point;
    const auto& scn = s.points[p].scn;
    detail::run_seed(scn, scn.seed + k, ws[worker],
                     std::span<run_summary>(r.rows).subspan(offset[p] + k * scn.options.size(), scn.options.size()));
    progress.advance();
  });
  montecarlo_options mo;
  mo.confidence = confidence;
  mo.horizon_s = horizon_s;
  r.points.reserve(s.points.size());
  for (std::size_t p = 0; p < s.points.size(); ++p)
    r.points.push_back(summarize_runs(s.points[p].scn,
                                      std::span<const run_summary>(r.rows).subspan(offset[p], offset[p + 1] - offset[p]),
                                      mo));
  return r;
}

} // namespace loopcast

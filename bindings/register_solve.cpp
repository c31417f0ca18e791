// Inverse questions (solve) and tasks with a contract on several options (compare).
#include "common.hpp"
#include "documents.hpp"

namespace loopcast::python {

namespace {
std::size_t option_named(const scenario& s, const py::dict& kw, const char* key, std::size_t fallback) {
  if (!kw.contains(key)) return fallback;
  const auto label = kw[key].cast<std::string>();
  for (std::size_t i = 0; i < s.options.size(); ++i)
    if (s.options[i].label == label) return i;
  throw py::value_error("scenario " + s.name + " has no option \"" + label + "\"");
}
template <class T>
T get(const py::dict& kw, const char* key, T fallback) {
  return kw.contains(key) ? kw[key].cast<T>() : fallback;
}
} // namespace

void register_solve(py::module_& m) {
  m.def(
      "solve",
      [](const std::string& question, const std::string& json_text, const std::string& file,
         const std::string& models_dir, const py::dict& kw) {
        const auto s = parse_scenario(json_text, file, *library_at(models_dir));
        solve_common c;
        c.seeds = get<std::int32_t>(kw, "seeds", 20);
        c.threads = get<unsigned>(kw, "threads", 1);
        c.option = option_named(s, kw, "option", 0);
        solve_result r;
        auto run = [&](auto f) {
          interruptible_release release;
          r = f();
        };
        if (question == "max-agents") {
          max_agents_query q;
          static_cast<solve_common&>(q) = c;
          q.max_p429 = get<double>(kw, "p429", q.max_p429);
          q.horizon_s = get<double>(kw, "horizon_s", q.horizon_s);
          q.max_agents = get<std::int32_t>(kw, "max_agents", q.max_agents);
          run([&] { return solve_max_agents(s, q); });
        } else if (question == "min-limit") {
          min_limit_query q;
          static_cast<solve_common&>(q) = c;
          q.max_stall_share = get<double>(kw, "stall_share", q.max_stall_share);
          q.bucket = get<std::string>(kw, "bucket", "");
          q.relative_tolerance = get<double>(kw, "tolerance", q.relative_tolerance);
          run([&] { return solve_min_limit(s, q); });
        } else if (question == "cheapest") {
          cheapest_query q;
          static_cast<solve_common&>(q) = c;
          q.max_stall_share = get<double>(kw, "stall_share", q.max_stall_share);
          run([&] { return solve_cheapest_option(s, q); });
        } else if (question == "break-even") {
          breakeven_query q;
          static_cast<solve_common&>(q) = c;
          q.local = option_named(s, kw, "local", first_of_kind);
          q.cloud = option_named(s, kw, "cloud", first_of_kind);
          q.hardware_usd = get<double>(kw, "hardware_usd", 0.0);
          q.lifetime_hours = get<double>(kw, "lifetime_hours", 0.0);
          run([&] { return solve_breakeven(s, q); });
        } else {
          throw py::value_error("question must be max-agents, min-limit, cheapest or break-even, not " + question);
        }
        return to_python(solve_document(s, r));
      },
      py::arg("question"), py::arg("json_text"), py::arg("file"), py::arg("models_dir"), py::arg("options"),
      "Answers an inverse question; the result as a dict (the JSON of docs/output.md).");
  m.def(
      "compare",
      [](const std::string& workload_json, const std::string& file, const std::string& models_dir,
         const std::vector<std::pair<std::string, std::string>>& targets, const std::string& client_json,
         const py::dict& kw) {
        (void)library_at(models_dir);  // a missing models directory is an error here too
        const auto wl = parse_workload(workload_json, file);
        const auto client = parse_client(client_json, file);
        std::vector<scenario_option> options;
        for (const auto& [json_text, source] : targets) {
          scenario_option o;
          o.targets = {parse_target(json_text, source)};
          o.label = o.first().name;
          o.client = client;
          options.push_back(std::move(o));
        }
        compare_options co;
        co.sessions = get<std::int32_t>(kw, "sessions", 0);
        co.stagger_s = get<double>(kw, "stagger_s", -1.0);
        co.seeds = get<std::int32_t>(kw, "seeds", 10);
        co.seed = get<std::uint64_t>(kw, "seed", 1);
        co.threads = get<unsigned>(kw, "threads", 1);
        if (kw.contains("intelligence")) co.intelligence = kw["intelligence"].cast<std::map<std::string, double>>();
        if (kw.contains("bar") && !kw["bar"].is_none()) co.bar = kw["bar"].cast<double>();
        compare_result r;
        {
          interruptible_release release;
          r = compare_on(wl, options, co);
        }
        return to_python(compare_document(r));
      },
      py::arg("workload_json"), py::arg("file"), py::arg("models_dir"), py::arg("targets"), py::arg("client_json"),
      py::arg("options"), "Runs a task on several targets against its contract; the result as a dict.");
}

} // namespace loopcast::python

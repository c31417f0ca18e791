// Recorded logs: import, stats, replay, fit.
#include "common.hpp"
#include "documents.hpp"

#include "loopcast/plan_choice.hpp"
#include "loopcast/report/plans.hpp"

#include <fnmatch.h>

#include <cmath>

namespace loopcast::python {

namespace {
trace_format format_named(const std::string& name) {
  if (auto f = parse_name<trace_format>(name)) return *f;
  throw trace_error("<python>", 0, "unknown format \"" + name + "\"");
}

// The Traces class, log import and the forecast of a running session.
void register_traces(py::module_& m) {
  py::class_<traces_holder, std::shared_ptr<traces_holder>>(m, "Traces", "Imported logs.")
      .def_property_readonly("count", [](const traces_holder& h) { return h.traces.size(); })
      .def("file", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).file; })
      .def("format", [](const traces_holder& h, std::size_t i) { return std::string(to_string(h.traces.at(i).format)); })
      .def("default_client", [](const traces_holder& h) { return default_client_for(h.traces); },
           "The client preset that replays these logs when none is given: the agent that wrote the first log of a known agent.")
      .def("models", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).models; })
      .def("session_count", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).sessions.size(); })
      .def("session_id", [](const traces_holder& h, std::size_t i, std::size_t s) { return h.traces.at(i).sessions.at(s).id; })
      .def("session_parent", [](const traces_holder& h, std::size_t i, std::size_t s) { return h.traces.at(i).sessions.at(s).parent; })
      .def("absolute_clock", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).absolute_clock; })
      .def("requests", [](py::object self, std::size_t i, std::size_t s) {
        return view(recorded_request_dtype(), self.cast<const traces_holder&>().traces.at(i).sessions.at(s).requests, self);
      }, "Recorded requests of session s of log i (structured array, a view).")
      .def("skipped", [](const traces_holder& h, std::size_t i) { return h.traces.at(i).summary.skipped; })
      .def("issues", [](const traces_holder& h, std::size_t i) {
        py::list v;
        for (const auto& x : h.traces.at(i).summary.issues) v.append(py::make_tuple(x.file, x.line, x.reason));
        return v;
      });

  m.def(
      "forecast",
      [](const std::vector<std::string>& logs, const std::string& target_json, const std::string& format, std::uint64_t seed,
         std::int32_t draws, double horizon_s, std::int32_t recent, std::int64_t work_budget,
         std::optional<std::string> models_dir, bool each_window) {
        const auto tgt = parse_target(target_json, "<target>");
        forecast_options o;
        o.each_window = each_window;
        o.seed = seed;
        o.draws = draws;
        o.horizon_s = horizon_s;
        if (recent > 0) o.recent_requests = recent;
        if (work_budget > 0) o.work_budget = work_budget;
        const auto fmt_ = format_named(format);
        const auto lib = library_at(models_dir);
        wall_forecast f;
        {
          interruptible_release release;
          if (logs.empty()) throw std::invalid_argument("forecast: no log given");
          auto traces = import_traces({logs.begin(), logs.end()}, fmt_);
          if (logs.size() == 1 && traces.size() != 1)
            throw std::invalid_argument(logs.front() + ": " + std::to_string(traces.size()) +
                                        " logs there; a forecast reads one, or a list of an account's logs");
          // Several logs are one account on one clock (watch.md), each response counted once.
          const auto account = merge_logs(traces);
          o.agent = lib->load_client(default_client_for({account}));
          f = forecast_next_wall(account, tgt, o);
        }
        return to_python(forecast_document(f));
      },
      py::arg("logs"), py::arg("target_json"), py::arg("format"), py::arg("seed"), py::arg("draws"), py::arg("horizon_s"),
      py::arg("recent") = 0, py::arg("work_budget") = 0, py::arg("models_dir") = py::none(), py::arg("each_window") = true,
      "`loopcast watch --once --json` as a dict.");
  m.def(
      "backtest",
      [](const traces_holder& h, const std::string& target_json, std::vector<double> cuts,
         std::vector<std::pair<std::string, double>> caps, std::uint64_t seed, std::int32_t draws, double horizon_s,
         std::int32_t recent, std::int64_t work_budget, std::optional<std::string> models_dir, bool each_window) {
        auto tgt = parse_target(target_json, "<target>");
        backtest_options bo;
        bo.each_window = each_window;
        bo.cuts = std::move(cuts);
        bo.caps = std::move(caps);
        bo.forecast.seed = seed;
        bo.forecast.draws = draws;
        bo.forecast.horizon_s = horizon_s;
        if (recent > 0) bo.forecast.recent_requests = recent;
        if (work_budget > 0) bo.forecast.work_budget = work_budget;
        const auto lib = library_at(models_dir);
        bo.forecast.agent = lib->load_client(default_client_for(h.traces));
        backtest_result r;
        {
          interruptible_release release;
          r = backtest_forecasts(h.traces, tgt, bo);
        }
        return to_python(backtest_document(r, bo));
      },
      py::arg("traces"), py::arg("target_json"), py::arg("cuts"), py::arg("caps"), py::arg("seed"), py::arg("draws"),
      py::arg("horizon_s"), py::arg("recent") = 0, py::arg("work_budget") = 0, py::arg("models_dir") = py::none(),
      py::arg("each_window") = false, "`loopcast watch --backtest --json` as a dict.");
  m.def(
      "import_traces",
      [](const std::vector<std::string>& paths, const std::string& format) {
        auto h = std::make_shared<traces_holder>();
        std::vector<std::filesystem::path> p(paths.begin(), paths.end());
        h->traces = import_traces(p, format_named(format));
        return h;
      },
      py::arg("paths"), py::arg("format") = "auto", "Imports log files and directories.");
  m.def(
      "import_default_logs",
      [] {
        const auto places = default_log_locations();
        if (places.empty())
          throw std::invalid_argument("no agent logs in the default places (~/.config/claude/projects, ~/.claude/projects or "
                                      "$CLAUDE_CONFIG_DIR/projects; ~/.codex/sessions or $CODEX_HOME/sessions; "
                                      "~/.local/share/opencode or $XDG_DATA_HOME/opencode)");
        auto h = std::make_shared<traces_holder>();
        h->traces = import_default_logs(places);
        if (h->traces.empty()) throw std::invalid_argument("the default places hold no log with a usable request");
        return h;
      },
      "Imports every log in the agents' default places (docs/trace-format.md).");
}

// `loopcast stats` and its local days.
void register_stats(py::module_& m) {
  m.def(
      "plans",
      [](const traces_holder& h, std::optional<std::string> models_dir, const std::string& plan, double max_blocked,
         const std::map<std::string, double>& limits, std::optional<double> since) {
        compare_plans_options o;
        o.home_plan = plan;
        if (since) o.since_unix_s = *since;
        if (!(max_blocked >= 0 && max_blocked <= 168)) throw std::invalid_argument("max_blocked_hours must be 0 to 168");
        o.max_blocked_hours_week = max_blocked;
        std::map<std::string, bool> used;
        // "BUCKET" or "TARGET:BUCKET" (TARGET a preset name or a shell pattern) → the cap.
        o.set_given = [&](plan_agent, std::span<target* const> ts) {
          for (const auto& [key, value] : limits) {
            const auto colon = key.rfind(':');
            const auto pattern = colon == std::string::npos ? std::string("*") : key.substr(0, colon);
            const auto bucket = colon == std::string::npos ? key : key.substr(colon + 1);
            if (!(value >= 1 && std::isfinite(value)))
              throw std::invalid_argument("limits[\"" + key + "\"]: a cap must be a number of at least 1");
            for (auto* t : ts)
              if (fnmatch(pattern.c_str(), t->name.c_str(), 0) == 0)
                if (auto* b = t->find_bucket(bucket)) {
                  b->limit = value;
                  b->limit_unpublished = false;
                  used[key] = true;
                }
          }
        };
        const auto r = compare_plans(h.traces, *library_at(models_dir), o);
        for (const auto& [key, value] : limits)
          if (!used[key])
            throw std::invalid_argument("limits[\"" + key + "\"]: no plan or API preset has that bucket");
        return plan_choices_to_json(r, -1);
      },
      py::arg("traces"), py::arg("models_dir") = py::none(), py::arg("plan") = "", py::arg("max_blocked_hours") = 2.0,
      py::arg("limits") = std::map<std::string, double>{}, py::arg("since") = py::none(),
      "`loopcast plans --json` as JSON text.");
  m.def(
      "stats",
      [](const traces_holder& h, std::optional<std::string> price_target_json, std::optional<std::string> price_list,
         std::optional<std::string> models_dir, double cache_ttl_s, std::int64_t block_tokens, const std::string& by,
         std::optional<double> since, std::optional<double> until, const std::string& timezone, bool breakdown) {
        std::optional<target> t;
        if (price_target_json) t = parse_target(*price_target_json, "<price>");
        if (t && !t->prices) throw config_error("<price>", "", "the target has no prices");
        stats_options so;
        model_price_book book;
        if (t) {
          so.price_all = &*t->prices;
        } else {
          book = load_price_book(price_list.value_or(""),
                                 *library_at(models_dir),
                                 models_of(h.traces));
          so.prices = &book;
        }
        if (cache_ttl_s < 0 || !std::isfinite(cache_ttl_s)) throw std::invalid_argument("cache_ttl_s must be >= 0");
        if (block_tokens < 1) throw std::invalid_argument("block_tokens must be >= 1");
        so.cache_ttl_s = cache_ttl_s;
        so.cache_block_tokens = block_tokens;
        const auto g = parse_name<stats_grouping>(by);
        if (!g) throw std::invalid_argument("by must be " + spelling_list<stats_grouping>(true) + ", not \"" + by + "\"");
        so.by = *g;
        so.timezone = time_zone_name(timezone);
        so.breakdown = breakdown;
        if (since) so.since_unix = *since;
        if (until) so.until_unix = *until;
        return to_python(stats_document(h.traces, compute_trace_stats(h.traces, so)));
      },
      py::arg("traces"), py::arg("price_target_json") = py::none(), py::arg("price_list") = py::none(),
      py::arg("models_dir") = py::none(), py::arg("cache_ttl_s") = 0.0, py::arg("block_tokens") = 1,
      py::arg("by") = "model", py::arg("since") = py::none(), py::arg("until") = py::none(), py::arg("timezone") = "",
      py::arg("breakdown") = false, "`loopcast stats --json` as a dict.");
  m.def(
      "local_day_start",
      [](const std::string& option, const std::string& date, const std::string& timezone, int days_after) {
        return local_day_start(option, date, timezone, days_after);
      },
      py::arg("option"), py::arg("date"), py::arg("timezone") = "", py::arg("days_after") = 0,
      "The first instant of a local date (days_after days on) in an IANA time zone, Unix seconds.");
}

// `loopcast replay`.
void register_replay_run(py::module_& m) {
  m.def(
      "split_model_map",
      [](const std::string& spec) {
        const auto split = split_model_map(spec);
        py::list entries;
        for (const auto& e : split.entries) entries.append(py::make_tuple(e.pattern, e.targets));
        return py::make_tuple(split.file_label, entries);
      },
      py::arg("spec"),
      "`--on` as written: (route file's stem or '', [(model pattern, [target reference, …])]); two or "
      "more references make a route.");
  m.def(
      "replay",
      [](const traces_holder& h,
         const std::vector<std::tuple<std::string, std::vector<std::tuple<std::string, std::string, bool>>, std::string>>&
             options,
         std::uint64_t seed, std::int64_t max_tokens, bool record, const std::string& speed, const std::string& context,
         double compact_at, std::optional<std::string> price_list, std::optional<std::string> models_dir,
         std::uint64_t attempt_budget) {
        auto r = std::make_shared<run_holder>();
        r->traces = h.traces;
        std::vector<model_map> targets;
        for (const auto& [label, routes, client_json] : options) {
          model_map rt;
          rt.label = label;
          const auto client = parse_client(client_json, label);
          for (const auto& [pattern, target_json, is_route] : routes) {
            scenario_option o;
            if (is_route) {  // a Route: {"targets", "spill_after_s", "cooldown"} with its targets inline
              o = parse_route(target_json, label, *library_at(models_dir));
            } else {
              o.targets = {parse_target(target_json, label)};
            }
            o.label = o.name();
            o.client = client;
            rt.entries.push_back({pattern, std::move(o)});
          }
          targets.push_back(std::move(rt));
        }
        replay_options ro;
        ro.seed = seed;
        if (max_tokens < 0) throw std::invalid_argument("max_tokens must be >= 1 (or None for the client's)");
        ro.max_tokens = max_tokens;
        ro.record_attempts = record;
        const auto pace = parse_name<replay_speed>(speed);
        if (!pace)
          throw std::invalid_argument("speed must be " + spelling_list<replay_speed>(true) + ", not \"" + speed + "\"");
        ro.speed = *pace;
        const auto policy = parse_name<context_policy>(context);
        if (!policy) throw std::invalid_argument("context must be " + spelling_list<context_policy>(true) + ", not \"" + context + "\"");
        ro.policy = *policy;
        if (compact_at != 0 && !(compact_at >= 0.05 && compact_at <= 1))
          throw std::invalid_argument("compact_at must be in [0.05, 1] (or None for the client's)");
        ro.compact_at = compact_at;
        if (attempt_budget > 0) ro.max_attempts = attempt_budget;
        const auto book = load_price_book(price_list.value_or(""),
                                          *library_at(models_dir),
                                          models_of(r->traces));
        ro.recorded_prices = &book;
        interruptible_release release;
        r->replay = std::make_unique<replay_result>(run_replay(r->traces, targets, ro));
        return r;
      },
      py::arg("traces"), py::arg("options"), py::arg("seed") = 1, py::arg("max_tokens") = 0, py::arg("record") = true,
      py::arg("speed") = "target", py::arg("context") = "compact", py::arg("compact_at") = 0.0,
      py::arg("price_list") = py::none(), py::arg("models_dir") = py::none(), py::arg("attempt_budget") = 0,
      "Replays the logs on (label, [(model pattern, target JSON)], client JSON) options.");
}

// `loopcast fit`, `fit-workload` and `validate`.
void register_fits(py::module_& m) {
  m.def(
      "fit",
      [](const traces_holder& h, const std::string& name, const std::string& model, std::int64_t window, bool noise) {
        if (window < 0) throw std::invalid_argument("context_window must be >= 1 (or None)");
        fit_preset_options fo;
        fo.context_window_tokens = window;
        fo.noise = noise;
        return to_python(fit_document(fit_speed_model(h.traces, model), name, h.traces, fo));
      },
      py::arg("traces"), py::arg("name"), py::arg("model") = "", py::arg("context_window") = 0, py::arg("noise") = true,
      "A target preset (as a dict) whose speed is fitted to the logs.");
  m.def(
      "validate_replay",
      [](const traces_holder& held_out, std::optional<std::shared_ptr<traces_holder>> fit_on,
         std::optional<std::string> target_json, std::int32_t seeds, std::uint64_t seed, bool noise) {
        if (fit_on.has_value() == target_json.has_value())
          throw std::invalid_argument("give fit_on= (logs to fit speeds on) or on= (a target), not both or neither");
        if (seeds < 1 || seeds > 1000) throw std::invalid_argument("seeds must be from 1 to 1000");
        std::vector<std::string> notes;
        model_map rt;
        if (fit_on) {
          rt = fitted_targets((*fit_on)->traces, 30, noise, &notes);
        } else {
          rt = validation_target(parse_target(*target_json, "<on>"), noise);
        }
        validation_options vo;
        vo.seeds = seeds;
        vo.seed = seed;
        validation_result r;
        {
          interruptible_release release;
          r = validate_replay(held_out.traces, rt, vo);
        }
        r.notes.insert(r.notes.begin(), notes.begin(), notes.end());
        return to_python(validation_document(r));
      },
      py::arg("held_out"), py::arg("fit_on") = py::none(), py::arg("target_json") = py::none(), py::arg("seeds") = 20,
      py::arg("seed") = 1, py::arg("noise") = true, "`loopcast validate --json` as a dict.");
  m.def(
      "fit_workload",
      [](const traces_holder& h, const std::string& name, const std::string& model, std::int64_t window,
         std::int64_t max_tokens, int points, std::vector<std::string> sources) {
        if (window < 0) throw std::invalid_argument("context_window must be >= 1 (or None)");
        if (max_tokens < 1) throw std::invalid_argument("max_tokens must be >= 1");
        if (points < 4 || points > 1000) throw std::invalid_argument("points must be from 4 to 1000");
        workload_fit_options fo;
        fo.name = name;
        fo.model_pattern = model;
        fo.context_window_tokens = window;
        fo.max_tokens = max_tokens;
        fo.quantile_points = points;
        if (sources.empty())  // imported logs: the preset's source is the files they came from
          for (const auto& t : h.traces)
            if (std::find(sources.begin(), sources.end(), t.file) == sources.end()) sources.push_back(t.file);
        return to_python(workload_fit_document(fit_workload(h.traces, fo), sources));
      },
      py::arg("traces"), py::arg("name"), py::arg("model") = "", py::arg("context_window") = 0,
      py::arg("max_tokens") = 32000, py::arg("points") = 40, py::arg("sources") = std::vector<std::string>{},
      "A workload preset (as a dict) fitted to the logs' sessions.");
  m.def(
      "validate_workload",
      [](const traces_holder& held_out, const std::string& workload_json, const std::string& price_target_json,
         std::int32_t sessions, std::uint64_t seed) {
        if (sessions < 1 || sessions > 1'000'000) throw std::invalid_argument("sessions must be from 1 to 1,000,000");
        const auto w = parse_workload(workload_json, "<workload>");
        const auto t = parse_target(price_target_json, "<price>");
        if (!t.prices) throw std::invalid_argument("price: the target has no prices (a local target is priced by its power)");
        workload_validation r;
        {
          interruptible_release release;
          r = validate_workload(held_out.traces, w, *t.prices, sessions, seed);
        }
        return to_python(workload_validation_document(r));
      },
      py::arg("held_out"), py::arg("workload_json"), py::arg("price_target_json"), py::arg("sessions") = 1000,
      py::arg("seed") = 1, "`loopcast validate --workload --json` as a dict.");
}

} // namespace

void register_replay(py::module_& m) {
  register_traces(m);
  register_stats(m);
  register_replay_run(m);
  register_fits(m);
}

} // namespace loopcast::python

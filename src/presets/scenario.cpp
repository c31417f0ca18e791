// Scenario presets: a workload (or a fleet) on several options, with presets named or inline.
#include "loopcast/presets.hpp"
#include "loopcast/files.hpp"

#include "presets/readers.hpp"
#include "util/time_zone.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <exception>
#include <chrono>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace loopcast::detail::preset {

double parse_utc(const node& n) {
  const auto s = n.string();
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, se = 0;
  char z = 0;
  if (s.size() != 20 || std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &y, &mo, &d, &h, &mi, &se, &z) != 7 ||
      z != 'Z')
    n.fail(fmt::format("expected a UTC time YYYY-MM-DDTHH:MM:SSZ, found \"{}\"", s));
  const std::chrono::year_month_day ymd{std::chrono::year{y}, std::chrono::month{static_cast<unsigned>(mo)},
                                        std::chrono::day{static_cast<unsigned>(d)}};
  if (!ymd.ok() || h > 23 || mi > 59 || se > 60) n.fail(fmt::format("not a valid date and time: \"{}\"", s));
  const auto days = std::chrono::sys_days{ymd}.time_since_epoch().count();
  return static_cast<double>(days) * 86400.0 + h * 3600.0 + mi * 60.0 + se;
}

std::filesystem::path sibling(const std::string& file, const std::string& ref) {
  std::filesystem::path p(ref);
  if (p.is_absolute()) return p;
  return std::filesystem::path(file).parent_path() / p;
}

// A preset given inline, as a .json path beside `file`, or by name in the library (`kind`); a name
// the library does not know is a problem at its place in the scenario.
template <class T, class Reader, class LoadFile>
T resolve(const node& n, const std::string& file, Reader read_inline, const preset_library& lib, preset_kind kind,
          LoadFile load_file) {
  if (n.is_object()) return read_inline(n);
  const auto ref = n.string();
  if (ref.size() > 5 && ref.ends_with(".json")) {
    const auto path = sibling(file, ref).string();
    const auto text = read_text_file(path);
    const auto j = detail::parse_json(text, path);
    return read_inline(node(j, "", path));
  }
  const std::filesystem::path* found = nullptr;
  try {
    found = &lib.find(kind, ref);
  } catch (const config_error& e) {
    n.fail(e.reason());
  }
  return load_file(*found);
}

// Each "limits" entry of an option: `find(key, where)` names the bucket it sets (or fails).
template <class Find>
void read_limits(const node& option, Find find) {
  auto lim = option.find("limits");
  if (!lim) return;
  if (!lim->is_object()) lim->fail(fmt::format("expected an object of \"BUCKET\": limit, found {}", describe(lim->raw())));
  for (auto it = lim->raw().begin(); it != lim->raw().end(); ++it) {
    bucket_config* b = find(it.key(), *lim);
    b->limit = read_limit(lim->at(it.key()));
    b->limit_unpublished = false;
  }
}

std::string bucket_names(const target& t) {
  std::vector<std::string> names;
  for (const auto& x : t.limits) names.push_back(x.name);
  return names.empty() ? "none" : fmt::format("{}", fmt::join(names, ", "));
}

void set_option_limits(target& t, const node& option) {
  read_limits(option, [&](const std::string& key, const node& lim) {
    auto* b = t.find_bucket(key);
    if (!b) lim.fail(fmt::format("target {} has no bucket \"{}\" (its buckets: {})", t.name, key, bucket_names(t)));
    return b;  // (the cap in force now: the preset's dated rules still scale it at other dates)
  });
  for (const auto& b : t.limits)
    if (b.limit_unpublished)
      option.fail(fmt::format("target {}'s bucket {} has no published limit: set it with \"limits\": {{\"{}\": N}} "
                              "(docs/plans.md)",
                              t.name, b.name, b.name));
}

// A route's limits are named "TARGET:BUCKET", as its buckets are in reports.
void set_route_limits(std::vector<target>& route, const node& option) {
  read_limits(option, [&](const std::string& key, const node& lim) {
    const auto colon = key.find(':');
    if (colon == std::string::npos)
      lim.fail(fmt::format("a route's limits are named \"TARGET:BUCKET\" (e.g. \"{}:{}\"), found \"{}\"",
                           route[0].name, route[0].limits.empty() ? "tokens_per_minute" : route[0].limits[0].name, key));
    const auto name = key.substr(0, colon);
    auto t = std::find_if(route.begin(), route.end(), [&](const target& x) { return x.name == name; });
    if (t == route.end()) {
      std::vector<std::string> names;
      for (const auto& x : route) names.push_back(x.name);
      lim.fail(fmt::format("the route has no target \"{}\" (its targets: {})", name, fmt::join(names, ", ")));
    }
    auto* b = t->find_bucket(key.substr(colon + 1));
    if (!b)
      lim.fail(fmt::format("target {} has no bucket \"{}\" (its buckets: {})", t->name, key.substr(colon + 1),
                           bucket_names(*t)));
    return b;
  });
  for (const auto& t : route)
    for (const auto& b : t.limits)
      if (b.limit_unpublished)
        option.fail(fmt::format("target {}'s bucket {} has no published limit: set it with \"limits\": "
                                "{{\"{}:{}\": N}} (docs/plans.md)",
                                t.name, b.name, t.name, b.name));
}

// A target: inline, a .json path beside the file, or a preset name.
target target_of(const node& n, const preset_library& lib) {
  return resolve<target>(n, n.file(), read_target, lib, preset_kind::target, load_target_file);
}

// "route": {"targets": [...], "spill_after_s": s | "never", "cooldown": false | {...}} (docs/routing.md).
void read_route(scenario_option& opt, const node& r, const preset_library& lib) {
  r.expect_keys({"targets", "spill_after_s", "cooldown"});
  const auto targets = r.at("targets").array(1);
  if (targets.size() > max_route_targets)
    r.at("targets").fail(fmt::format("{} targets; a route has at most {}", targets.size(), max_route_targets));
  for (const auto& t : targets) opt.targets.push_back(target_of(t, lib));
  if (auto sp = r.find("spill_after_s")) {
    if (sp->is_string()) {
      if (sp->string() != "never") sp->fail(fmt::format("expected seconds or \"never\", found \"{}\"", sp->string()));
      opt.routing.spill_after_s = std::numeric_limits<double>::infinity();
    } else {
      opt.routing.spill_after_s = sp->number_in(0, 1e7);
    }
  }
  if (auto c = r.find("cooldown")) {
    if (c->is_boolean() && !c->boolean()) {
      opt.routing.cooldown_after_fails = 0;
    } else {
      if (!c->is_object()) c->fail(fmt::format("expected false or an object, found {}", describe(c->raw())));
      c->expect_keys({"after_fails", "window_s", "for_s"});
      if (c->has("after_fails")) opt.routing.cooldown_after_fails = static_cast<std::int32_t>(c->at("after_fails").integer(1, 1'000'000));
      if (c->has("window_s")) opt.routing.cooldown_window_s = c->at("window_s").number_in(1e-3, 1e7);
      if (c->has("for_s")) opt.routing.cooldown_s = c->at("for_s").number_in(0, 1e7);
    }
  }
}

scenario_option read_route_option(const node& r, const preset_library& lib) {
  scenario_option opt;
  read_route(opt, r, lib);
  opt.label = opt.name();
  return opt;
}

// "arrivals": {"people": 50, "sessions_per_day": 6, "hours": [9, 17], "time_zone": "Europe/Berlin",
// "days": 5}; hours and time zone may be left out (9 to 17, UTC), days too (1).
arrival_rule read_arrivals(const node& n) {
  n.expect_keys({"people", "sessions_per_day", "hours", "time_zone", "days"});
  arrival_rule a;
  a.people = static_cast<std::int32_t>(n.at("people").integer(1, 100000));
  a.sessions_per_day = n.at("sessions_per_day").number_in(1e-3, 1000);
  if (auto h = n.find("hours")) {
    const auto v = h->array(2);
    if (v.size() != 2) h->fail(fmt::format("expected [start, end] in local hours, found {} numbers", v.size()));
    a.day_start_h = v[0].number_in(0, 24);
    a.day_end_h = v[1].number_in(0, 24);
    if (!(a.day_end_h > a.day_start_h))
      h->fail(fmt::format("the working day ends ({}) before it starts ({})", a.day_end_h, a.day_start_h));
  }
  if (auto z = n.find("time_zone")) {
    a.time_zone = z->string();
    if (a.time_zone.find_first_not_of(" \t") == std::string::npos)
      z->fail("an empty time zone: give an IANA name such as UTC or Europe/Berlin (or leave \"time_zone\" out for UTC)");
    try {
      (void)detail::zone(a.time_zone);
    } catch (const std::invalid_argument& e) {
      z->fail(e.what());
    }
  }
  a.days = n.has("days") ? static_cast<std::int32_t>(n.at("days").integer(1, 366)) : 1;
  const std::int32_t cap = arrival_cap(a);
  if (cap > max_sessions)
    n.fail(fmt::format("{} people × {} sessions a day × {} days may start up to {} sessions; one run simulates at most {}",
                       a.people, a.sessions_per_day, a.days, cap, max_sessions));
  return a;
}

void read_options(const node& root, const preset_library& lib, scenario& s, problems& found);

scenario read_scenario(const node& root, const preset_library& lib) {
  check_kind(root, preset_kind::scenario);
  // Every part is read even after another failed, and the error lists the problems of each part.
  problems found(root.file());
  found.gather([&] {
    root.expect_keys({LOOPCAST_HEADER_KEYS, "seed", "start_time_utc", "workload", "sessions", "stagger_s", "arrivals",
                      "fleet", "options", "calibration", "attempt_budget"});
  });
  scenario s;
  found.gather([&] { s.name = read_name(root); });
  found.gather([&] { s.description = read_description(root); });
  found.gather([&] { s.origin = read_provenance(root); });
  // A scenario typed in code (a notebook's dict) may leave out the seed (42, as loopcast.Scenario's)
  // and a group's sessions (1); a file says both.
  const bool in_code = root.provenance_optional();
  found.gather([&] {
    s.seed = in_code && !root.has("seed") ? 42 : static_cast<std::uint64_t>(root.at("seed").integer(0, (1LL << 53)));
  });
  // In code the clock may start at the Unix epoch (a Thursday midnight UTC); a file says when.
  found.gather([&] { s.start_unix_s = in_code && !root.has("start_time_utc") ? 0.0 : parse_utc(root.at("start_time_utc")); });
  found.gather([&] {
    if (root.has("attempt_budget"))
      s.attempt_budget = static_cast<std::uint64_t>(root.at("attempt_budget").integer(1, 1'000'000'000'000'000));
  });
  const std::string& file = root.file();
  // One group: "workload", "sessions", "stagger_s" at the top; several: "fleet": [{…}, …]. Each of
  // its fields is read even after another failed; the group joins the fleet when all were read.
  auto read_group = [&](const node& n) {
    const std::size_t before = found.count();
    fleet_group g;
    found.gather([&] {
      g.wl = resolve<workload>(n.at("workload"), file, read_workload, lib, preset_kind::workload, load_workload_file);
    });
    found.gather([&] { g.label = n.has("label") ? n.at("label").string() : g.wl.name; });
    if (n.has("arrivals")) {
      for (const char* k : {"sessions", "start_s", "stagger_s"})
        found.gather([&] {
          if (n.has(k)) n.at(k).fail("give either \"arrivals\" or \"sessions\"/\"start_s\"/\"stagger_s\", not both");
        });
      found.gather([&] {
        g.arrivals = read_arrivals(n.at("arrivals"));
        g.sessions = arrival_cap(*g.arrivals);
      });
    } else {
      found.gather([&] {
        g.sessions = in_code && !n.has("sessions") ? 1 : static_cast<std::int32_t>(n.at("sessions").integer(1, max_sessions));
      });
      found.gather([&] { g.start_s = n.has("start_s") ? n.at("start_s").number_in(0, 1e7) : 0.0; });
      found.gather([&] { g.stagger_s = n.has("stagger_s") ? n.at("stagger_s").number_in(0, 1e7) : 0.0; });
    }
    if (found.count() == before) s.fleet.push_back(std::move(g));
    return found.count() == before;
  };
  const std::size_t before_fleet = found.count();
  if (root.has("fleet")) {
    found.gather([&] {
      for (const char* k : {"workload", "sessions", "stagger_s", "arrivals"})
        if (root.has(k))
          root.at(k).fail("give either \"fleet\" or \"workload\"/\"sessions\"/\"stagger_s\"/\"arrivals\", not both");
    });
    std::vector<node> groups;
    found.gather([&] { groups = root.at("fleet").array(1); });
    for (const auto& g : groups) {
      found.gather([&] { g.expect_keys({"label", "workload", "sessions", "start_s", "stagger_s", "arrivals"}); });
      if (!read_group(g)) continue;
      found.gather([&] {
        for (std::size_t i = 0; i + 1 < s.fleet.size(); ++i)
          if (s.fleet[i].label == s.fleet.back().label)
            g.fail(fmt::format("fleet group label \"{}\" is used twice", s.fleet.back().label));
      });
    }
  } else if (root.has("workload")) {
    read_group(root);
  } else {
    found.gather([&] { root.fail("missing key \"workload\" (or \"fleet\")"); });
  }
  if (found.count() > before_fleet) {  // the fleet's size is not known: its checks wait
    read_options(root, lib, s, found);
    found.throw_if_any();
  }
  std::int64_t sessions = 0, requests = 0;
  for (const auto& g : s.fleet) {
    sessions += g.sessions;
    requests += static_cast<std::int64_t>(g.sessions) * turns_cap(g.wl);
  }
  found.gather([&] {
    const node where = root.has("fleet") ? root.at("fleet") : root.has("sessions") ? root.at("sessions") : root;
    if (sessions > max_sessions)
      where.fail(fmt::format("{} sessions in the fleet; one run simulates at most {}", sessions, max_sessions));
    if (requests > max_scenario_turns) {
      if (s.fleet.size() == 1)
        where.fail(fmt::format("{} sessions × {} turns = {} requests; one run simulates at most {}", sessions,
                               turns_cap(s.fleet[0].wl), requests, max_scenario_turns));
      where.fail(fmt::format("the fleet's {} sessions make {} requests; one run simulates at most {}", sessions,
                             requests, max_scenario_turns));
    }
  });
  read_options(root, lib, s, found);
  found.gather([&] {
    if (auto c = root.find("calibration")) s.calibration = read_string_list(*c);
  });
  found.throw_if_any();
  return s;
}

// The scenario's options, each read even after another failed, and each field of an option even
// after another field failed (every problem into `found`); an option joins when all were read.
void read_options(const node& root, const preset_library& lib, scenario& s, problems& found) {
  const std::string& file = root.file();
  std::vector<node> options;
  found.gather([&] { options = root.at("options").array(1); });
  for (const auto& o : options) {
    const std::size_t before = found.count();
    scenario_option opt;
    found.gather([&] { o.expect_keys({"label", "target", "route", "client", "batch", "limits"}); });
    found.gather([&] {
      opt.label = o.at("label").string();
      for (const auto& prev : s.options)
        if (prev.label == opt.label) o.at("label").fail(fmt::format("option label \"{}\" is used twice", opt.label));
    });
    bool have_targets = false;
    found.gather([&] {
      if (o.has("route")) {
        if (o.has("target")) o.at("target").fail("give either \"target\" or \"route\", not both");
        read_route(opt, o.at("route"), lib);
      } else {
        if (!o.has("target")) o.fail("missing key \"target\" (or \"route\")");
        opt.targets.push_back(target_of(o.at("target"), lib));
      }
      have_targets = true;
    });
    if (have_targets)  // the limits name the targets' buckets
      found.gather([&] { o.has("route") ? set_route_limits(opt.targets, o) : set_option_limits(opt.first(), o); });
    found.gather([&] {
      opt.client = resolve<retry_policy>(o.at("client"), file, read_client, lib, preset_kind::client, load_client_file);
    });
    found.gather([&] {
      opt.batch = o.has("batch") ? o.at("batch").boolean() : false;
      if (opt.batch && o.has("route")) o.at("batch").fail("a route runs without the batch API");
      if (opt.batch && have_targets && (!opt.first().prices || opt.first().prices->batch_discount == 0))
        o.at("batch").fail(fmt::format("target {} has no batch discount", opt.first().name));
    });
    if (found.count() == before) s.options.push_back(std::move(opt));
  }
}

// A reference (name or .json path) as the referenced document (keys in file order); an inline
// object as it is.
nlohmann::ordered_json inline_reference(const nlohmann::ordered_json& ref, preset_kind kind, const std::string& file,
                                        const preset_library& lib) {
  if (!ref.is_string()) return ref;
  const auto name = ref.get<std::string>();
  const std::string path = name.size() > 5 && name.ends_with(".json") ? sibling(file, name).string()
                                                                       : lib.find(kind, name).string();
  const auto text = read_text_file(path);
  return detail::parse_ordered_json(text, path);  // its syntax errors with line and column
}

} // namespace loopcast::detail::preset

// loopcast — a scenario: one workload run on several options (a cloud tier, a local GPU, …).
//
// A scenario's fleet is one or more groups of sessions; sessions are numbered 0, 1, … across
// the groups in order. Every option runs the *same* sessions: session i's script is generated from
// derive_seed(seed, i) whatever the option, so options differ only in how the work is timed,
// limited and billed. The client's jitter uses its own stream, derive_seed(seed, 2^32 + i).
#pragma once

#include "loopcast/budget.hpp"
#include "loopcast/fields.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/route.hpp"
#include "loopcast/simulator.hpp"
#include "loopcast/target.hpp"
#include "loopcast/workload.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <optional>
#include <utility>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

namespace loopcast {

/// One option of a scenario: a route of targets — one target is a route of one — the client that
/// sends to it, and how the route spreads requests over its targets (route.hpp).
struct scenario_option;
/// A run of an option on laws of the caller's own (simulation.hpp: simulate_with with a custom
/// bucket, speed or client law). It receives the option (its targets with the limits in force at
/// the run's start), the sessions and the run's options, and returns what simulate_with returns.
/// Monte Carlo and solve call it from several threads at once: it must not share mutable state.
using option_simulator =
    std::function<simulation_result(const scenario_option&, std::span<const session_plan>, const sim_options&)>;

struct scenario_option {
  std::string label;             ///< e.g. "cloud"
  std::vector<target> targets;   ///< at least one, tried in order (docs/routing.md)
  route_policy routing = {};     ///< with several targets (or segments): when to spill, cooldowns
  retry_policy client;
  bool batch = false;
  /// When set, every run of the option — run, Monte Carlo, sweeps, solve, replay — goes through it
  /// instead of the built-in simulate() or simulate_route() (examples/cpp/custom_models.cpp).
  option_simulator simulator = {};

  const target& first() const { return targets.front(); }
  target& first() { return targets.front(); }
  /// More than one target, or a model map's segments: the route's own buckets are named
  /// "TARGET:BUCKET" and its result says what each target did.
  bool routed() const noexcept { return targets.size() > 1 || !routing.segments.empty(); }
  /// What reports call it: its target's name; a route's targets' names joined by " → "; a
  /// replay's model map (segments), its label.
  std::string name() const { return routing.segments.empty() ? route_name(targets) : label; }
  /// Its buckets as a run of it numbers them (a route's named "TARGET:BUCKET").
  std::vector<bucket_config> buckets() const { return route_buckets(targets, routed()); }
  /// The largest context window of its targets, in tokens.
  std::int64_t window() const noexcept { return route_window(targets); }
  /// Bucket `b` of buckets(): the bucket of the target that owns it.
  bucket_config& bucket_at(std::size_t b) {
    for (auto& t : targets) {
      if (b < t.limits.size()) return t.limits[b];
      b -= t.limits.size();
    }
    throw std::out_of_range("no such bucket");
  }
};

/// What the reports show of what an option ran: its one target's identity, engine, power, plan and
/// prices; a route's name with "routed" for provider, tier and model, the kind "cloud", its
/// targets' sources joined, the oldest date read (verified when every target is), the first engine
/// and power among them, and no plan or prices of its own. The buckets are scenario_option::buckets().
struct option_view {
  std::string name, provider, tier, model;
  target_kind kind = target_kind::cloud;
  provenance origin;
  const engine_config* engine = nullptr;
  const power_config* power = nullptr;
  const plan_terms* plan = nullptr;
  const price_sheet* prices = nullptr;
};
inline option_view view_of(const scenario_option& o) {
  option_view v;
  v.name = o.name();
  if (!o.routed()) {
    const target& t = o.first();
    v.provider = t.provider;
    v.tier = t.tier;
    v.model = t.model;
    v.kind = t.kind;
    v.origin = t.origin;
    v.engine = t.engine ? &*t.engine : nullptr;
    v.power = t.power ? &*t.power : nullptr;
    v.plan = t.plan ? &*t.plan : nullptr;
    v.prices = t.prices ? &*t.prices : nullptr;
    return v;
  }
  v.provider = v.tier = v.model = "routed";
  v.origin.verified = true;
  for (const auto& t : o.targets) {
    if (!v.engine && t.engine) v.engine = &*t.engine;
    if (!v.power && t.power) v.power = &*t.power;
    v.origin.source += (v.origin.source.empty() ? "" : "; ") + t.origin.source;
    v.origin.verified = v.origin.verified && t.origin.verified;
    if (v.origin.read_on.empty() || t.origin.read_on < v.origin.read_on) v.origin.read_on = t.origin.read_on;
  }
  return v;
}

/// People who start sessions through their working day: each of `people` starts sessions at
/// random (a Poisson process) at `sessions_per_day` a day on average, between day_start_h and
/// day_end_h local time in `time_zone`, on `days` consecutive days from the scenario's start
/// (docs/model.md §7, "Arrivals").
struct arrival_rule {
  std::int32_t people = 1;
  double sessions_per_day = 1;
  double day_start_h = 9, day_end_h = 17;  ///< local hours, 0 <= start < end <= 24
  std::string time_zone = "UTC";           ///< an IANA zone
  std::int32_t days = 1;
};

/// A group of identical agents in a fleet: `sessions` sessions of one workload, the k-th of them
/// starting at start_s + k · stagger_s; or, with `arrivals`, sessions started by people through
/// their working days (how many depends on the seed; `sessions` is then the most a run holds).
/// Sessions of one group share its system prompt (one cache lineage); all groups share the
/// option's buckets and prefix cache.
struct fleet_group {
  std::string label;             ///< e.g. "coders" (defaults to the workload's name)
  workload wl;
  std::int32_t sessions = 1;
  double start_s = 0;            ///< when the group's first session starts, s
  double stagger_s = 0;          ///< between consecutive starts in the group, s
  std::optional<arrival_rule> arrivals;
};

/// The most sessions a group with arrivals holds in a run: the expected count plus ten standard
/// deviations (a Poisson count past it has a probability below 10^-20), and 20.
std::int32_t arrival_cap(const arrival_rule& a);

/// The working hours of a scenario's arrivals, in seconds from its t = 0 (each day's window,
/// clipped at 0), sorted; empty when no group has arrivals.
std::vector<std::pair<double, double>> arrival_windows(const fleet_group& g, double start_unix_s);

struct scenario {
  std::string name;
  std::string description;
  std::vector<fleet_group> fleet;  ///< at least one group; sessions are numbered group by group
  std::uint64_t seed = 1;
  double start_unix_s = 0;       ///< Unix time of t = 0
  std::vector<scenario_option> options;
  std::vector<std::string> calibration;  ///< which parameter was fitted to which fact
  provenance origin;
  /// Each run's attempt budget (sim_options::max_attempts; 0: default_attempt_budget): a run stops
  /// after this many attempts, its running sessions cut off. Bounds every run on overloaded tiers.
  std::uint64_t attempt_budget = 0;
};

struct option_result {
  std::string label;
  /// What it ran (target, client, batch): shared with the scenario it came from, or owned (a
  /// replay's merged routes), so the result stays valid when the caller's scenario is gone.
  std::shared_ptr<const scenario_option> option;
  simulation_result sim;
  request_metrics metrics;
};

struct scenario_result {
  std::shared_ptr<const scenario> scn;   ///< the scenario it ran (its options are options[i].option)
  std::uint64_t seed = 0;
  std::vector<session_script> scripts;   ///< the sessions every option ran
  std::vector<option_result> options;
};

/// Sessions in the whole fleet.
std::int32_t fleet_size(const scenario& s) noexcept;
/// Whether a group of the fleet starts its sessions by arrivals (a team through its working days).
bool has_arrivals(const scenario& s) noexcept;

struct run_options {
  std::optional<std::uint64_t> seed;  ///< overrides the scenario's seed
  bool record_attempts = true;
  bool record_charges = true;
  bool peak_demand = true;      ///< sim_options::peak_demand
  bool request_metrics = true;  ///< false: option_result::metrics is left empty (Monte Carlo rows need none)
  bool report_progress = true;  ///< each option's simulation reports its progress (progress.hpp)
};

/// The sessions of one run of a scenario: the fleet's scripts generated from `seed` and their
/// plans (start times, client seeds, families), which point into `scripts` (moving the struct
/// keeps them valid; copying it does not).
struct fleet_sessions {
  std::vector<session_script> scripts;
  std::vector<session_plan> plans;
  fleet_sessions() = default;
  fleet_sessions(fleet_sessions&&) = default;
  fleet_sessions& operator=(fleet_sessions&&) = default;
  fleet_sessions(const fleet_sessions&) = delete;
  fleet_sessions& operator=(const fleet_sessions&) = delete;
};
/// Generates the sessions every option of the scenario runs, for `seed`.
fleet_sessions generate_fleet(const scenario& s, std::uint64_t seed);
/// The same, written into `out` (its scripts' storage reused: Monte Carlo generates a fleet per seed).
void generate_fleet(const scenario& s, std::uint64_t seed, fleet_sessions& out);

/// Runs every option on the scenario's sessions. Refuses (config_error) a run over the request
/// cap or the memory budget (budget.hpp) before generating anything.
/// The result keeps a copy of the scenario; pass a shared_ptr to share it instead (many seeds).
scenario_result run_scenario(const scenario& s, const run_options& opt = {});
scenario_result run_scenario(std::shared_ptr<const scenario> s, const run_options& opt = {});
/// The size of one run of the scenario, estimated before its scripts exist (compactions at a tenth).
run_size run_size_of(const scenario& s, bool record_attempts = true, bool record_charges = true);

/// Simulates one option over the given sessions (batch from the option) and measures it (unless
/// `measure` is false), reporting its progress (progress.hpp) with `progress`. The result's
/// `option` is left to the caller to set.
/// Whether a target of the option has dated limits (target.hpp: target_at resolves them).
bool has_dated_limits(const scenario_option& o) noexcept;
option_result run_option(const scenario_option& o, std::span<const session_plan> plans, sim_options so,
                         bool measure = true, bool progress = false);

/// One run of one option, summarised (a row of a Monte Carlo over seeds).
struct run_summary {
  std::uint64_t seed = 0;
  std::uint32_t option = 0;            ///< index into scenario::options
  double first_429_s = 0;              ///< NaN when no 429 happened
  double first_refused_s = 0;          ///< the first session stopped by a request no bucket can ever admit
                                       ///< (request_too_large: a provider answers it with a 429); NaN: none
  double wall_s = 0;
  double stall_s = 0;                  ///< summed over sessions
  double stall_share = 0;              ///< stall_s / the sessions' summed durations
  double cost_usd = 0;
  double usd_per_task = 0;             ///< cost / completed sessions; NaN when none completed
  double tasks_per_hour = 0;           ///< completed sessions per hour of wall clock
  double output_tps = 0;               ///< generated tokens per second of wall clock
  double effective_tps_p50 = 0;        ///< NaN when no request was kept (null in JSON, empty in CSV)
  double ttft_p50_s = 0;               ///< NaN when no request was served
  std::int32_t sessions = 0;
  std::int32_t completed = 0;          ///< sessions that completed (tasks done)
  std::int32_t rate_limited = 0;       ///< 429s
  std::int32_t attempts = 0;
  std::int32_t sessions_died = 0;      ///< sessions that did not complete
  std::int32_t requests_served = 0;
  bool cut_off = false;                ///< the run stopped at the scenario's attempt budget
  std::int32_t operation_hours = 0;    ///< hours of operation (simulation_result::operation_hours)
  std::int32_t hours_with_429 = 0;     ///< of them, those with at least one 429 (or refused request)
  double stall_hours_per_hour = 0;     ///< hours lost to waiting per hour of operation; NaN: no such hour
};

/// The columns of a run_summary row (CSV, numpy, pandas), in order.
template <>
struct record_fields<run_summary> {
  static constexpr std::tuple list{
      field{"seed", &run_summary::seed, ""},
      field{"option", &run_summary::option, ""},
      field{"first_429_s", &run_summary::first_429_s, "s"},
      field{"first_refused_s", &run_summary::first_refused_s, "s"},
      field{"wall_s", &run_summary::wall_s, "s"},
      field{"stall_s", &run_summary::stall_s, "s"},
      field{"stall_share", &run_summary::stall_share, ""},
      field{"cost_usd", &run_summary::cost_usd, "USD"},
      field{"usd_per_task", &run_summary::usd_per_task, "USD"},
      field{"tasks_per_hour", &run_summary::tasks_per_hour, "1/h"},
      field{"output_tps", &run_summary::output_tps, "tokens/s"},
      field{"effective_tps_p50", &run_summary::effective_tps_p50, "tokens/s"},
      field{"ttft_p50_s", &run_summary::ttft_p50_s, "s"},
      field{"sessions", &run_summary::sessions, ""},
      field{"completed", &run_summary::completed, ""},
      field{"rate_limited", &run_summary::rate_limited, ""},
      field{"attempts", &run_summary::attempts, ""},
      field{"sessions_died", &run_summary::sessions_died, ""},
      field{"requests_served", &run_summary::requests_served, ""},
      field{"cut_off", &run_summary::cut_off, ""},
      field{"operation_hours", &run_summary::operation_hours, "h"},
      field{"hours_with_429", &run_summary::hours_with_429, "h"},
      field{"stall_hours_per_hour", &run_summary::stall_hours_per_hour, ""}};
};

/// The summary row of one option's run.
run_summary summarize_run(const option_result& r, std::uint64_t seed, std::uint32_t option);

/// Seeds first, first + 1, …, first + count − 1: the seeds Monte Carlo, sweeps and solve run.
std::vector<std::uint64_t> consecutive_seeds(std::uint64_t first, std::size_t count);

/// Runs the scenario once per seed (no timelines) and returns seeds × options rows, seed-major.
/// Everything happens in C++: callers from Python pay one call, not one per request. With
/// threads > 1 the seeds are shared among that many threads (0 = one per hardware thread); the
/// rows are the same whatever the thread count.
std::vector<run_summary> run_seeds(const scenario& s, std::span<const std::uint64_t> seeds,
                                   unsigned threads = 1);

} // namespace loopcast

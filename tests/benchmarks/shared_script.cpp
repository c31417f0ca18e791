// The C++ half of the side-by-side comparison with plain Python (tests/benchmarks/vs_python.py).
//
//   loopcast_shared_script --agents N --turns T --limits-x X --repeat R --script OUT.json --results OUT.json
//
// Generates N reference agents (T turns each, 2 s apart) on Cerebras' Developer tier with every
// limit × X and the opencode client, writes everything the simulation is given — the target's
// buckets, cache, speed and prices, the client's retry policy, each session's requests with their
// prefix runs in the cache's global lineage ids — as JSON (the shared script), then simulates it R
// times and writes what happened (per session and in total) and the time of one simulation.
#include <loopcast/loopcast.hpp>

#include "reference_fleet.hpp"

#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <span>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using nlohmann::json;
using namespace loopcast;

json curve_json(const speed_curve& c) {
  if (const auto* l = std::get_if<linear_curve>(&c)) return {{"a", l->a_s}, {"b", l->b_s_per_token}};
  if (const auto* k = std::get_if<constant_curve>(&c)) return {{"a", k->seconds_per_token}, {"b", 0.0}};
  throw std::runtime_error("the shared script carries constant and linear speed curves only");
}

json target_json(const target& t) {
  json limits = json::array();
  for (const auto& b : t.limits) {
    if (b.algorithm != bucket_algorithm::token_bucket || b.oversize != oversize_rule::refuse || b.count_rejected)
      throw std::runtime_error("the shared script carries token buckets that refuse oversize charges only");
    limits.push_back({{"name", b.name},
                      {"limit", b.limit},
                      {"period_s", b.period_s},
                      {"unit", std::string(to_string(b.unit))},
                      {"counts",
                       {b.classes.contains(token_class::input), b.classes.contains(token_class::cache_read),
                        b.classes.contains(token_class::cache_write), b.classes.contains(token_class::output),
                        b.classes.contains(token_class::reasoning)}},
                      {"charging", std::string(to_string(b.charging))}});
  }
  if (t.speed.noise_sigma != 0 || t.speed.session_sigma != 0 || t.speed.noise_median != 1 || t.engine)
    throw std::runtime_error("the shared script carries a noiseless cloud speed model only");
  const auto& p = t.prices->usd_per_million;
  if (!t.prices->long_context.empty() || !t.prices->time_windows.empty() || t.prices->usd_per_request != 0 ||
      t.prices->cache_storage_usd_per_million_hour != 0)
    throw std::runtime_error("the shared script carries flat per-class prices only");
  return {{"limits", limits},
          {"sends_retry_after", t.sends_retry_after},
          {"context_window_tokens", t.context_window_tokens},
          {"cache",
           {{"enabled", t.cache.enabled}, {"block_tokens", t.cache.block_tokens}, {"min_tokens", t.cache.min_tokens},
            {"ttl_s", t.cache.ttl_s}, {"write_charged", t.cache.write_charged}}},
          {"speed",
           {{"overhead_s", t.speed.overhead_s}, {"cached_token_s", t.speed.cached_token_s},
            {"prefill", curve_json(t.speed.prefill)}, {"decode", curve_json(t.speed.decode)}}},
          {"prices_per_million", {p.input, p.cache_read, t.cache.write_1h ? p.cache_write_1h : p.cache_write_5m, p.output, p.reasoning}}};
}

json client_json(const retry_policy& c) {
  if (c.jitter != jitter_kind::none) throw std::runtime_error("the shared script carries clients without jitter only");
  return {{"max_retries", c.max_retries},
          {"honour_retry_after", c.honour_retry_after},
          {"retry_after_cap_s", std::isfinite(c.retry_after_cap_s) ? json(c.retry_after_cap_s) : json(nullptr)},
          {"over_cap_give_up", c.over_cap == over_cap_action::give_up},
          {"base_s", c.base_s},
          {"multiplier", c.multiplier},
          {"max_s", c.max_s},
          {"give_up_above_s", std::isfinite(c.give_up_above_s) ? json(c.give_up_above_s) : json(nullptr)},
          {"max_attempts_per_request", detail::max_attempts_per_request}};
}

// Each session's requests with their runs in the cache's global lineage ids: a family's shared
// lineages first, then every session's private ones in plan order (as the simulation lays them out).
json sessions_json(std::span<const session_plan> plans) {
  const auto layout = detail::lay_out(plans);
  std::uint32_t private_base = layout.shared;
  json out = json::array();
  for (const auto& p : plans) {
    const auto& s = *p.script;
    const std::uint32_t shared_base = layout.family_base[p.family];
    json requests = json::array();
    for (const auto& r : s.requests) {
      json runs = json::array();
      std::vector<prefix_run> own;
      s.runs_of(r, own);
      for (const auto& run : own)
        runs.push_back({run.lineage < s.shared_lineages ? shared_base + run.lineage
                                                        : private_base + (run.lineage - s.shared_lineages),
                        run.end_tokens});
      requests.push_back({r.prompt_tokens, r.output_tokens, r.reasoning_tokens, r.max_tokens, r.delay_before_s, runs});
    }
    private_base += s.lineages - s.shared_lineages;
    out.push_back({{"start_s", p.start_s}, {"requests", requests}});
  }
  return out;
}

json results_json(const simulation_result& r) {
  json sessions = json::array();
  std::int64_t attempts = 0;
  for (const auto& s : r.sessions) {
    attempts += s.attempts;
    sessions.push_back({{"outcome", std::string(to_string(s.outcome))},
                        {"requests_served", s.requests_served},
                        {"attempts", s.attempts},
                        {"rate_limited", s.rate_limited},
                        {"start_s", s.start_s},
                        {"end_s", s.end_s},
                        {"stall_s", s.stall_s},
                        {"cost_usd", s.cost_usd}});
  }
  return {{"sessions", sessions},
          {"attempts", attempts},
          {"requests", static_cast<std::int64_t>(r.requests.size())},
          {"tokens", {r.tokens.input, r.tokens.cache_read, r.tokens.cache_write, r.tokens.output, r.tokens.reasoning}},
          {"cost_usd", r.cost_usd},
          {"wall_s", r.wall_s}};
}

int run(int argc, char** argv) {
  int agents = 5, turns = 0, repeat = 1;
  double limits_x = 1;
  std::string script_out, results_out, models = LOOPCAST_BENCH_MODELS_DIR;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::runtime_error(a + " needs a value");
      return argv[++i];
    };
    if (a == "--agents") agents = std::stoi(value());
    else if (a == "--turns") turns = std::stoi(value());
    else if (a == "--limits-x") limits_x = std::stod(value());
    else if (a == "--repeat") repeat = std::stoi(value());
    else if (a == "--script") script_out = value();
    else if (a == "--results") results_out = value();
    else if (a == "--models") models = value();
    else throw std::runtime_error("unknown argument " + a);
  }
  if (agents < 1 || repeat < 1 || script_out.empty() || results_out.empty())
    throw std::runtime_error("usage: loopcast_shared_script --agents N [--turns T] [--limits-x X] [--repeat R] --script FILE --results FILE");
  const preset_library lib({models});
  const auto fleet = bench::make_reference_fleet(lib.load_scenario("reference"), static_cast<std::size_t>(agents), limits_x, turns);
  const auto& opt = fleet.option;
  const auto& plans = fleet.plans;

  std::ofstream(script_out) << json{{"target", target_json(opt.first())}, {"client", client_json(opt.client)},
                                    {"sessions", sessions_json(plans)}}.dump();
  sim_options so;
  so.record_attempts = false;
  so.record_charges = false;
  simulation_result r;
  const auto t0 = std::chrono::steady_clock::now();
  for (int k = 0; k < repeat; ++k) r = simulate(opt.first(), opt.client, plans, so);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / repeat;
  auto out = results_json(r);
  out["seconds_per_run"] = seconds;
  std::ofstream(results_out) << out.dump();
  return 0;
}

} // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "loopcast_shared_script: " << e.what() << "\n";
    return 2;
  }
}

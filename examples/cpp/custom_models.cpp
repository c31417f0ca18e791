// A planning tool's own rate-limit law, speed model and client, plugged into loopcast's simulation.
//
// The tool's gateway enforces limits with GCRA (the generic cell rate algorithm) and lets a
// request larger than a whole bucket through once the bucket is full, in debt; it has measured
// its own deployment's speed; and its agents use an impatient client. None is a loopcast preset:
// each is a small type that satisfies one of loopcast's concepts (bucket_law, speed_law,
// client_law) and goes to simulate_with().
//
// It runs the reference scenario's cloud option (Cerebras' Developer tier, whose buckets are
// token buckets) and prints, for each variant, when the wall comes, the stall and the cost:
//   1. the tier as published, with loopcast's built-in buckets;
//   2. the same limits enforced by GCRA: the same 429s (GCRA is a token bucket in other words);
//   3. total_tpm cut to 100K: the built-in bucket refuses the largest request outright, GCRA in
//      debt admits it once full and the session completes, later;
//   4. the published limits with the tool's measured speed instead of the preset's curves;
//   5. the published limits with a client that gives up on any retry-after above 3 s.
// Then a Monte Carlo of 20 seeds with total_tpm at 100K, built-in beside GCRA with debt: an
// option's `simulator` runs it on the tool's laws in Monte Carlo (and in sweeps, solve and replay).
//
//   build/examples/custom_models [MODELS_DIR]
#include <loopcast/loopcast.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <span>
#include <iostream>
#include <vector>

namespace {

// GCRA: a bucket of `limit` units per `period` is a theoretical arrival time (TAT) that advances
// by period/limit per unit charged; a charge fits while the TAT stays within one period of now.
// A charge above the whole limit waits until the bucket is full (TAT <= now), then goes in debt.
class gcra_with_debt {
public:
  explicit gcra_with_debt(const loopcast::bucket_config& c) : unit_s_(c.period_s / c.limit), tau_s_(c.period_s) {}

  double wait_for(double q, double t) const noexcept {
    const double tat = std::max(tat_, t);
    if (q * unit_s_ > tau_s_) return tat - t;  // oversize: once full, in debt
    const double w = tat + q * unit_s_ - tau_s_ - t;
    return w > 1e-9 ? w : 0.0;  // a nanosecond's tolerance against rounding
  }
  std::uint64_t charge(double q, double t, double /*t_release*/) noexcept {
    tat_ = std::max(tat_, t) + q * unit_s_;
    return 0;
  }
  void adjust(double delta, double t, double /*t_admit*/, std::uint64_t /*ticket*/) noexcept {
    tat_ = std::max(t, tat_ + delta * unit_s_);  // a refund cannot fill the bucket beyond full
  }
  double used(double t) const noexcept { return std::max(0.0, tat_ - t) / unit_s_; }

private:
  double unit_s_;     // seconds of capacity one unit takes
  double tau_s_;      // the burst tolerance: one period
  double tat_ = 0;    // theoretical arrival time, s
};
static_assert(loopcast::bucket_law<gcra_with_debt>);

// The tool's own measurement of its deployment: a fixed 0.3 s, then 2,500 prompt tokens/s
// (cached ones free) and 90 generated tokens/s, whatever the context.
struct measured_speed {
  loopcast::request_timing time(std::int64_t /*cached*/, std::int64_t uncached, std::int64_t generated) const noexcept {
    return {0.3 + static_cast<double>(uncached) / 2500.0, static_cast<double>(generated) / 90.0};
  }
};
static_assert(loopcast::speed_law<measured_speed>);

// A client that honours retry-after up to 3 s and gives up beyond (or after 5 retries).
struct impatient_client {
  loopcast::retry_decision decide(int n, double retry_after_s, loopcast::rng& /*g*/) const noexcept {
    if (n >= 5 || retry_after_s > 3.0) return {false, 0.0};
    return {true, retry_after_s >= 0 ? retry_after_s : 1.0};
  }
  bool retries_forever() const noexcept { return false; }
};
static_assert(loopcast::client_law<impatient_client>);

std::vector<gcra_with_debt> gcra_buckets(const loopcast::target& tgt) {
  std::vector<gcra_with_debt> out;
  for (const auto& b : tgt.limits) out.emplace_back(b);
  return out;
}

void report(const char* label, const loopcast::simulation_result& sim) {
  const auto& s = sim.sessions.front();
  std::string wall = "no 429";
  if (sim.first_429)
    wall = fmt::format("first 429 on request {} at {:.1f} s ({})", sim.first_429->request, sim.first_429->time_s,
                       sim.first_429->bucket_name);
  fmt::print("{:<28} {}; {}, {} of {} requests; stalled {:.1f} s; wall clock {:.1f} s; ${:.4f}\n", label, wall,
             loopcast::to_string(s.outcome), s.requests_served, s.requests_total, s.stall_s, sim.wall_s, sim.cost_usd);
}

} // namespace

int main(int argc, char** argv) {
  try {
    const auto lib = argc > 1 ? loopcast::preset_library({argv[1]}) : loopcast::preset_library::standard();
    const auto scn = lib.load_scenario("reference");
    const auto& cloud = scn.options.front();
    const auto fleet = loopcast::generate_fleet(scn, scn.seed);
    loopcast::sim_options opt;
    opt.start_unix_s = scn.start_unix_s;

    const auto& tgt = cloud.first();
    const loopcast::curve_speed preset_speed{&tgt.speed};
    report("built-in token buckets:", loopcast::simulate(tgt, cloud.client, fleet.plans, opt));
    report("GCRA with debt:",
           loopcast::simulate_with(tgt, cloud.client, fleet.plans, opt, gcra_buckets(tgt), preset_speed));

    auto tight = tgt;
    tight.find_bucket("total_tpm")->limit = 100'000;
    report("total_tpm 100K, built-in:", loopcast::simulate(tight, cloud.client, fleet.plans, opt));
    report("total_tpm 100K, GCRA debt:",
           loopcast::simulate_with(tight, cloud.client, fleet.plans, opt, gcra_buckets(tight), preset_speed));

    std::vector<loopcast::bucket> preset_buckets;
    for (const auto& b : tgt.limits) preset_buckets.emplace_back(b, opt.start_unix_s);
    report("measured speed:", loopcast::simulate_with(tgt, cloud.client, fleet.plans, opt, preset_buckets,
                                                      measured_speed{}));
    report("impatient client:",
           loopcast::simulate_with(tgt, impatient_client{}, fleet.plans, opt, std::move(preset_buckets), preset_speed));

    auto mc = scn;
    mc.options = {cloud};
    mc.options[0].label = "built-in";
    mc.options[0].first().find_bucket("total_tpm")->limit = 100'000;
    auto gcra = mc.options[0];
    gcra.label = "GCRA with debt";
    gcra.simulator = [](const loopcast::scenario_option& o, std::span<const loopcast::session_plan> plans,
                        const loopcast::sim_options& so) {
      return loopcast::simulate_with(o.first(), o.client, plans, so, gcra_buckets(o.first()),
                                     loopcast::curve_speed{&o.first().speed});
    };
    mc.options.push_back(gcra);
    loopcast::montecarlo_options mo;
    mo.seeds = 20;
    const auto r = loopcast::run_montecarlo(mc, mo);
    for (const auto& d : r.options)
      fmt::print("Monte Carlo, total_tpm 100K, {:<15} P(session dies) {:.2f}; stall share P50 {:.3f}; wall clock P50 {:.1f} s\n",
                 d.label + ":", d.p_session_dies.value, d.stall_share.p50.value, d.wall_s.p50.value);
  } catch (const loopcast::error& e) {
    std::cerr << "custom_models: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

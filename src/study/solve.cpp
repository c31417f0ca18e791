#include "loopcast/solve.hpp"

#include "loopcast/errors.hpp"

#include "util/numbers.hpp"
#include "util/parallel.hpp"
#include "study/seed_runs.hpp"
#include "util/text.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace loopcast {

namespace {
using detail::nan;

void check_common(const scenario& s, const solve_common& q) {
  if (q.option >= s.options.size())
    throw simulation_error(fmt::format("option {} does not exist: scenario {} has {} option(s)", q.option + 1, s.name,
                                       s.options.size()));
  if (q.seeds < 1) throw simulation_error(fmt::format("at least 1 seed per evaluation is needed, found {}", q.seeds));
}

void check_fraction(double x, const char* what) {
  if (!(x >= 0 && x <= 1)) throw simulation_error(fmt::format("{} must lie in [0, 1], found {}", what, x));
}

// The scenario with only option `o`.
scenario only_option(const scenario& s, std::size_t o) {
  scenario t = s;
  t.options = {s.options[o]};
  return t;
}

// The evaluations of one question, each q.seeds seeds on q.threads threads: the threads and each
// one's storage stay from one evaluation to the next (a search's evaluations are often a few short
// seeds each, which a thread start per evaluation would slow by a tenth).
class trials {
public:
  explicit trials(const solve_common& q)
      : seeds_(static_cast<std::size_t>(q.seeds)), pool_(detail::worker_count(seeds_, q.threads)),
        ws_(pool_.workers()) {}

  // One row per seed (scenario.seed + 0, 1, …) and option. The seeds that made the most attempts
  // in the evaluation before are started first (the next one differs from it by a little, and its
  // seeds cost about what they cost there): the last seeds to start are then short ones, and the
  // threads finish together instead of one waiting for a long seed.
  std::vector<run_summary> rows(const scenario& s) {
    auto out = detail::run_seeds_on(pool_, ws_, s, consecutive_seeds(s.seed, seeds_), order_);
    if (pool_.workers() > 1 && !out.empty()) {
      const std::size_t options = out.size() / seeds_;
      std::vector<std::int64_t> attempts(seeds_, 0);
      for (std::size_t r = 0; r < out.size(); ++r) attempts[r / options] += out[r].attempts;
      order_.resize(seeds_);
      std::iota(order_.begin(), order_.end(), std::size_t{0});
      std::stable_sort(order_.begin(), order_.end(), [&](std::size_t a, std::size_t b) { return attempts[a] > attempts[b]; });
    }
    return out;
  }
  std::vector<option_distribution> evaluate(const scenario& s, const montecarlo_options& mo = {}) {
    return summarize_runs(s, rows(s), mo);
  }

private:
  std::size_t seeds_;
  detail::worker_pool pool_;
  std::vector<detail::seed_workspace> ws_;
  std::vector<std::size_t> order_;  // the order the next evaluation starts its seeds in (empty: theirs)
};

// Mean stall share <= y and no session died.
bool stall_ok(const option_distribution& d, double y) {
  return d.stall_share.mean.value <= y && d.p_session_dies.value == 0.0;
}

} // namespace

solve_result solve_max_agents(const scenario& s, const max_agents_query& q) {
  check_common(s, q);
  check_fraction(q.max_p429, "the largest P(429)");
  if (s.fleet.size() != 1)
    throw simulation_error(fmt::format("max-agents varies the sessions of a one-group fleet; scenario {} has {} groups",
                                       s.name, s.fleet.size()));
  if (q.max_agents < 1) throw simulation_error(fmt::format("max agents must be at least 1, found {}", q.max_agents));
  if (!(q.horizon_s > 0)) throw simulation_error(fmt::format("the horizon must be > 0 s, found {}", q.horizon_s));
  // A team (arrivals): how many engineers; else how many agents of the group.
  const bool team = s.fleet[0].arrivals.has_value();
  const char* noun = team ? "engineer" : "agent";
  const auto cap = static_cast<std::int32_t>(std::min<std::int64_t>(
      q.max_agents, team ? 100'000
                         : std::min<std::int64_t>(1'000'000, max_run_requests / std::max(1, turns_cap(s.fleet[0].wl)))));
  scenario t = only_option(s, q.option);
  auto set_n = [&](std::int32_t n) {
    if (!team) {
      t.fleet[0].sessions = n;
      return true;
    }
    t.fleet[0].arrivals->people = n;
    t.fleet[0].sessions = arrival_cap(*t.fleet[0].arrivals);
    return static_cast<std::int64_t>(t.fleet[0].sessions) * turns_cap(t.fleet[0].wl) <= max_run_requests;
  };
  solve_result r;
  r.question = "max-agents";
  // The memory budget bounds the fleets the search may try (each evaluation runs its seeds on
  // q.threads threads at once): stop there, and say so, rather than fail midway.
  std::int32_t cap_n = cap;
  {
    const auto parallel = static_cast<std::int64_t>(detail::worker_count(static_cast<std::size_t>(q.seeds), q.threads));
    auto fits = [&](std::int32_t n) { return set_n(n) && run_fits(run_size_of(t, false, false), parallel); };
    if (!fits(1)) throw config_error("scenario " + s.name, "", fmt::format("even one {} does not fit the memory budget", noun));
    if (!fits(cap)) {
      std::int32_t lo = 1, hi = cap;
      while (hi - lo > 1) {
        const std::int32_t mid = lo + (hi - lo) / 2;
        (fits(mid) ? lo : hi) = mid;
      }
      cap_n = lo;
      r.notes.push_back(fmt::format("the memory budget ({:.1f} GiB, {} runs at once) holds at most {} {}s: the search "
                                    "stops there (LOOPCAST_MEMORY_BUDGET_GB raises it)",
                                    static_cast<double>(memory_budget_bytes()) / (1 << 30), parallel, lo, noun));
    }
  }
  trials tr(q);
  auto eval = [&](std::int32_t n) {
    set_n(n);
    montecarlo_options mo;
    mo.horizon_s = q.horizon_s;
    const auto d = tr.evaluate(t, mo)[0];
    // A team: the share of its working hours with a 429 (p_429_per_hour), in steady state.
    const estimate& p = team ? d.p_429_per_hour : d.p_429_within;
    solve_step st{static_cast<double>(n), detail::count_of(n, noun), p, d.usd_per_task.mean.value,
                  p.value <= q.max_p429};
    r.steps.push_back(st);
    return st.meets;
  };
  if (team)
    r.notes.push_back(fmt::format("criterion: the share of working hours with a 429 (p_429_per_hour, pooled over {} "
                                  "seeds) is at most {:.3f} (option {}); the engineers vary, each starting {:g} "
                                  "sessions a day", q.seeds, q.max_p429, t.options[0].label,
                                  t.fleet[0].arrivals->sessions_per_day));
  else
    r.notes.push_back(fmt::format("criterion: the fraction of {} seeds with a 429 within {:.0f} s is at most {:.3f} "
                                  "(option {}, stagger {:.0f} s)", q.seeds, q.horizon_s, q.max_p429, t.options[0].label,
                                  t.fleet[0].stagger_s));
  // With a stagger, agents past horizon / stagger start after the horizon: adding them adds nothing
  // the criterion sees, so the search finds "more" for a reason that is not capacity.
  const auto hollow = [&](std::int32_t n) {
    if (team || !(t.fleet[0].stagger_s > 0)) return;
    const double within = std::floor(q.horizon_s / t.fleet[0].stagger_s) + 1;
    if (static_cast<double>(n) > within)
      r.notes.push_back(fmt::format(
          "with agents {:.0f} s apart, only the first {:.0f} start within the {:.0f} s horizon: more agents just start "
          "later, so {} is not a capacity; give the group \"arrivals\" (engineers starting sessions through a working "
          "day) to ask how many people the tier serves", t.fleet[0].stagger_s, within, q.horizon_s, n));
  };
  if (!eval(1)) {
    r.answer_text = fmt::format("none: even one {} gets a 429 {} too often", noun, team ? "in an hour" : "within the horizon");
    return r;
  }
  std::int32_t lo = 1, hi = 0;
  for (std::int64_t n = 2; n <= cap_n; n *= 2) {
    if (eval(static_cast<std::int32_t>(n))) lo = static_cast<std::int32_t>(n);
    else {
      hi = static_cast<std::int32_t>(n);
      break;
    }
  }
  if (hi == 0 && lo < cap_n) {
    if (eval(cap_n)) lo = cap_n;
    else hi = cap_n;
  }
  r.found = true;
  if (hi == 0) {
    r.answer = lo;
    r.bracket_lo = r.bracket_hi = lo;
    r.answer_text = fmt::format("at least {} {}s (the search stops there)", lo, noun);
    hollow(lo);
    return r;
  }
  while (hi - lo > 1) {
    const std::int32_t mid = lo + (hi - lo) / 2;
    if (eval(mid)) lo = mid;
    else hi = mid;
  }
  r.answer = lo;
  r.bracket_lo = lo;
  r.bracket_hi = hi;
  r.answer_text = fmt::format("{} ({} meet the criterion, {} do not)", detail::count_of(lo, noun), lo, hi);
  hollow(lo);
  return r;
}

solve_result solve_min_limit(const scenario& s, const min_limit_query& q) {
  check_common(s, q);
  check_fraction(q.max_stall_share, "the largest stall share");
  if (!(q.relative_tolerance > 0 && q.relative_tolerance < 1))
    throw simulation_error(fmt::format("the relative tolerance must lie in (0, 1), found {}", q.relative_tolerance));
  const auto limits = s.options[q.option].buckets();
  if (limits.empty())
    throw simulation_error(fmt::format("option {} ({}) has no rate limits to scale", s.options[q.option].label,
                                       s.options[q.option].name()));
  std::vector<std::size_t> scaled;
  for (std::size_t b = 0; b < limits.size(); ++b)
    if (q.bucket.empty() || limits[b].name == q.bucket) scaled.push_back(b);
  if (scaled.empty()) {
    std::string names;
    for (const auto& b : limits) names += fmt::format("{}{}", names.empty() ? "" : ", ", b.name);
    throw simulation_error(fmt::format("target {} has no bucket named \"{}\" (it has: {})", s.options[q.option].name(),
                                       q.bucket, names));
  }
  scenario t = only_option(s, q.option);
  solve_result r;
  r.question = "min-limit";
  auto apply = [&](double f) {
    auto& o = t.options[0];
    for (auto b : scaled) o.bucket_at(b).limit = limits[b].limit * f;
  };
  trials tr(q);
  auto eval = [&](double f) {
    apply(f);
    const auto d = tr.evaluate(t)[0];
    solve_step st{f, fmt::format("×{:.4g}", f), d.stall_share.mean, d.usd_per_task.mean.value, stall_ok(d, q.max_stall_share)};
    r.steps.push_back(st);
    return st.meets;
  };
  r.notes.push_back(fmt::format("criterion: mean stall share over {} seeds at most {:.3f}, and no session dies "
                                "(option {}, scaling {})", q.seeds, q.max_stall_share, t.options[0].label,
                                q.bucket.empty() ? std::string("every bucket") : q.bucket));
  double lo = 0, hi = 0;  // lo fails, hi meets
  if (eval(1.0)) {
    hi = 1.0;
    for (double f = 0.5;; f /= 2) {
      if (f < 1e-6) {
        r.found = true;
        r.answer = hi;
        r.bracket_lo = 0;
        r.bracket_hi = hi;
        r.answer_text = fmt::format("×{:.4g} or less still meets it (the search stops there)", hi);
        return r;
      }
      if (eval(f)) hi = f;
      else {
        lo = f;
        break;
      }
    }
  } else {
    lo = 1.0;
    for (double f = 2.0;; f *= 2) {
      if (f > q.max_factor) {
        r.answer_text = fmt::format("none up to ×{:.4g} of the limits", lo);
        return r;
      }
      if (eval(f)) {
        hi = f;
        break;
      }
      lo = f;
    }
  }
  while (hi / lo > 1 + q.relative_tolerance) {
    const double mid = std::sqrt(lo * hi);
    if (eval(mid)) hi = mid;
    else lo = mid;
  }
  r.found = true;
  r.answer = hi;
  r.bracket_lo = lo;
  r.bracket_hi = hi;
  std::string what;
  for (auto b : scaled)
    what += fmt::format("{}{} {} per {:g} s", what.empty() ? "" : ", ", limits[b].name, detail::grouped(limits[b].limit * hi),
                        limits[b].period_s);
  r.answer_text = fmt::format("×{:.3f} of today's limits: {}", hi, what);
  return r;
}

solve_result solve_cheapest_option(const scenario& s, const cheapest_query& q) {
  check_common(s, q);
  check_fraction(q.max_stall_share, "the largest stall share");
  const auto d = trials(q).evaluate(s);
  solve_result r;
  r.question = "cheapest-option";
  r.notes.push_back(fmt::format("criterion: mean stall share over {} seeds at most {:.3f}, and no session dies; then "
                                "the lowest mean $ per task", q.seeds, q.max_stall_share));
  double best = std::numeric_limits<double>::infinity();
  for (std::size_t o = 0; o < d.size(); ++o) {
    const bool meets = stall_ok(d[o], q.max_stall_share);
    r.steps.push_back({static_cast<double>(o), d[o].label, d[o].stall_share.mean, d[o].usd_per_task.mean.value, meets});
    const double c = d[o].usd_per_task.mean.value;
    if (meets && !std::isnan(c) && c < best) {
      best = c;
      r.found = true;
      r.answer = static_cast<double>(o);
      r.bracket_lo = r.bracket_hi = static_cast<double>(o);
    }
  }
  r.answer_text = r.found ? fmt::format("{} at ${:.4f} per task", d[static_cast<std::size_t>(r.answer)].label, best)
                          : std::string("none of the options keeps the stall share low enough");
  return r;
}

solve_result solve_breakeven(const scenario& s, const breakeven_query& q) {
  check_common(s, q);
  auto pick = [&](std::size_t o, target_kind k, const char* what) {
    if (o == first_of_kind) {
      for (std::size_t i = 0; i < s.options.size(); ++i)
        if (view_of(s.options[i]).kind == k) return i;
      throw simulation_error(fmt::format("scenario {} has no {} option", s.name, what));
    }
    if (o >= s.options.size())
      throw simulation_error(fmt::format("option {} does not exist: scenario {} has {} option(s)", o + 1, s.name,
                                         s.options.size()));
    return o;
  };
  auto local = s.options[pick(q.local, target_kind::local, "local")];
  const auto& cloud = s.options[pick(q.cloud, target_kind::cloud, "cloud")];
  if (view_of(local).kind != target_kind::local || !local.first().power)
    throw simulation_error(fmt::format("option {} ({}) is not a local target", local.label, local.name()));
  if (view_of(cloud).kind != target_kind::cloud)
    throw simulation_error(fmt::format("option {} ({}) is not a cloud target", cloud.label, cloud.name()));
  auto& p = *local.first().power;
  if (!(q.hardware_usd >= 0 && q.lifetime_hours >= 0 && std::isfinite(q.hardware_usd) && std::isfinite(q.lifetime_hours)))
    throw simulation_error("hardware_usd and lifetime_hours must be finite and >= 0");
  if (q.hardware_usd > 0) p.hardware_usd = q.hardware_usd;
  if (q.lifetime_hours > 0) p.lifetime_hours = q.lifetime_hours;
  if (!(p.hardware_usd > 0 && p.lifetime_hours > 0))
    throw simulation_error(fmt::format("target {} has no hardware cost to amortise: set power.hardware_usd and "
                                       "power.lifetime_hours (or give them to the question)", local.name()));
  scenario t = s;
  t.options = {cloud, local};
  const auto rows = trials(q).rows(t);
  const double amort_per_h = p.hardware_usd / p.lifetime_hours;        // A
  const double idle_per_h = p.idle_power_w / 1000.0 * p.usd_per_kwh;   // I
  double electricity = 0, wall_h = 0, cloud_cost = 0;
  std::int64_t local_done = 0, cloud_done = 0;
  for (const auto& x : rows) {
    if (x.option == 0) {
      cloud_cost += x.cost_usd;
      cloud_done += x.completed;
    } else {
      electricity += x.cost_usd - amort_per_h * x.wall_s / 3600.0;
      wall_h += x.wall_s / 3600.0;
      local_done += x.completed;
    }
  }
  solve_result r;
  r.question = "break-even";
  if (cloud_done == 0 || local_done == 0 || wall_h <= 0) {
    r.answer_text = "none: an option completed no task";
    return r;
  }
  const double c = cloud_cost / static_cast<double>(cloud_done);  // $ per cloud task
  const double e = electricity / static_cast<double>(local_done);  // electricity per local task
  const double tph = static_cast<double>(local_done) / wall_h;    // local tasks per busy hour
  auto local_cost = [&](double u) { return e + (amort_per_h + (1 - u) * idle_per_h) / (u * tph); };
  for (double u : {0.05, 0.1, 0.25, 0.5, 0.75, 1.0})
    r.steps.push_back({u, fmt::format("{:.0f}% use", 100 * u), {local_cost(u), nan, nan}, local_cost(u), local_cost(u) <= c});
  r.notes.push_back(fmt::format("cloud option {}: ${:.4f} per task over {} seeds ({} tasks)", cloud.label, c, q.seeds, cloud_done));
  r.notes.push_back(fmt::format("local option {}: electricity ${:.5f} per task, {:.2f} tasks per busy hour; hardware ${:.4f} "
                                "per hour owned, idle power ${:.4f} per hour", local.label, e, tph, amort_per_h, idle_per_h));
  r.notes.push_back("local cost per task at utilisation u = e + (A + (1 − u)·I) / (u·T), solved exactly for u");
  if (c <= e) {
    r.answer_text = fmt::format("never: the local electricity alone (${:.5f} per task) costs more than the cloud "
                                "(${:.5f})", e, c);
    return r;
  }
  const double u = (amort_per_h + idle_per_h) / (tph * (c - e) + idle_per_h);
  r.answer = u;
  r.bracket_lo = r.bracket_hi = u;
  if (u > 1) {
    r.answer_text = fmt::format("never: even in use all the time the local target costs ${:.4f} per task against the "
                                "cloud's ${:.4f} (it would need {:.0f}% use)", local_cost(1), c, 100 * u);
    return r;
  }
  r.found = true;
  r.answer_text = fmt::format("{:.1f}% utilisation ({:.1f} hours a day, {:.0f} tasks a day): above it the local "
                              "target is cheaper per task than {}", 100 * u, 24 * u, 24 * u * tph, cloud.label);
  return r;
}

} // namespace loopcast

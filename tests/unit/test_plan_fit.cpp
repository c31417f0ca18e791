// A plan's caps fitted robustly (plan_fit.hpp) on Claude Code logs written in the exact format
// real ones use, with every answer derived by hand; and on the real Codex corpus.
#include "loopcast/plan_fit.hpp"
#include "loopcast/trace.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

using namespace loopcast;
namespace fs = std::filesystem;

namespace {

// 2026-03-01 00:00:00 UTC.
constexpr double march_1 = 1772323200;

std::string iso(double t) {
  const auto s = static_cast<long long>(t);
  const long long day = (s - static_cast<long long>(march_1)) / 86400, rest = s % 86400;
  return fmt::format("2026-03-{:02}T{:02}:{:02}:{:02}.000Z", 1 + day, rest / 3600, rest % 3600 / 60, rest % 60);
}

// Writes Claude Code JSONL: user prompts, assistant responses, /status outputs and walls.
class claude_log {
public:
  void status(double t, const std::string& email) {
    lines_.push_back(fmt::format(
        R"({{"type":"user","sessionId":"s","uuid":"st{}","timestamp":"{}","message":{{"role":"user","content":"<local-command-stdout>Login method: Claude Max account\nEmail: {}</local-command-stdout>"}}}})",
        n_++, iso(t), email));
  }
  // A prompt at t, answered 20 s later.
  void request(double t, long input, long cache_read, long cache_write, long output, const std::string& text = "ok",
               const std::string& id_prefix = "msg_") {
    const int k = n_++;
    lines_.push_back(fmt::format(
        R"({{"type":"user","sessionId":"s","uuid":"u{}","timestamp":"{}","message":{{"role":"user","content":"go"}}}})", k,
        iso(t)));
    lines_.push_back(fmt::format(
        R"({{"type":"assistant","sessionId":"s","uuid":"a{}","timestamp":"{}","requestId":"req_{}","message":{{"id":"{}{}","model":"claude-sonnet-4-5-20250929","role":"assistant","content":[{{"type":"text","text":"{}"}}],"usage":{{"input_tokens":{},"cache_read_input_tokens":{},"cache_creation_input_tokens":{},"output_tokens":{}}}}}}})",
        k, iso(t + 20), k, id_prefix, k, text, input, cache_read, cache_write, output));
  }
  void wall(double t, const std::string& text, bool sidechain = false) {
    lines_.push_back(fmt::format(
        R"({{"type":"assistant","sessionId":"s","uuid":"w{}","isSidechain":{},"timestamp":"{}","error":"rate_limit","isApiErrorMessage":true,"apiErrorStatus":429,"message":{{"id":"w{}","model":"<synthetic>","role":"assistant","content":[{{"type":"text","text":"{}"}}],"usage":{{"input_tokens":0,"output_tokens":0}}}}}})",
        n_, sidechain ? "true" : "false", iso(t), n_, text));
    ++n_;
  }
  void write(const fs::path& p) const {
    fs::create_directories(p.parent_path());
    std::ofstream f(p);
    for (const auto& l : lines_) f << l << "\n";
  }

private:
  std::vector<std::string> lines_;
  int n_ = 0;
};

// Account a@x.com, one Sonnet window a day from 10:00 UTC (reset 3pm UTC): n requests 10 minutes
// apart, each 2,000 input + 8,000 cache writes + 1,000 output = 11,000 counted with cache reads at
// 0 (the reads differ by day, so any other weight spreads the caps), and the wall 5 minutes after
// the last. Day n: 1: 10 (110K), 2: 11 (121K), 3: 9 (99K; one response logs a partial output),
// 4: 10 (110K), 5: 3 (33K: usage elsewhere). Day 2 also sends one request through Vertex.
// Account b@y.com from day 6: 20, 22, 18 requests (220K, 242K, 198K).
fs::path write_account_tree(const fs::path& root) {
  fs::remove_all(root);
  claude_log main, side;
  main.status(march_1 + 9 * 3600, "a@x.com");
  const int counts[] = {10, 11, 9, 10, 3};
  const long reads[] = {0, 500000, 0, 500000, 0};
  for (int d = 0; d < 5; ++d) {
    const double open = march_1 + d * 86400 + 10 * 3600;
    for (int k = 0; k < counts[d]; ++k) {
      if (d == 2 && k == 8)  // a partial streaming count: 5 logged, 2,000 characters written (0.47 each: 940)
        main.request(open + k * 600, 2000, reads[d], 8000, 5, std::string(2000, 'x'));
      else
        main.request(open + k * 600, 2000, reads[d], 8000, 1000);
    }
    if (d == 1) main.request(open + 90, 1000000, 0, 0, 1000, "ok", "msg_vrtx_");
    const double wall = open + (counts[d] - 1) * 600 + 300;
    main.wall(wall, "You've hit your limit · resets 3pm (UTC)");
    if (d == 0) side.wall(wall + 2, "You've hit your limit · resets 3pm (UTC)", true);  // a sidechain's copy
  }
  main.status(march_1 + 5 * 86400 + 9 * 3600, "b@y.com");
  const int counts_b[] = {20, 22, 18};
  for (int d = 0; d < 3; ++d) {
    const double open = march_1 + (5 + d) * 86400 + 10 * 3600;
    for (int k = 0; k < counts_b[d]; ++k) main.request(open + k * 600, 2000, 40000, 8000, 1000);
    main.wall(open + (counts_b[d] - 1) * 600 + 300, "You've hit your session limit · resets 3pm (UTC)");
  }
  main.write(root / "proj/s.jsonl");
  side.write(root / "proj/s/subagents/agent-1.jsonl");
  return root;
}

const window_fit* find(const plan_fit& f, const std::string& account, const std::string& window) {
  for (const auto& w : f.windows)
    if (w.account == account && w.window == window) return &w;
  return nullptr;
}

} // namespace

TEST(PlanFit, TwoAccountsRobustCapsOutliersOffPlanAndPartialOutputs) {
  const auto root = write_account_tree(fs::temp_directory_path() / "loopcast_plan_fit");
  const auto logs = import_traces({root}, trace_format::automatic);
  const auto f = fit_plan(logs);
  ASSERT_EQ(f.accounts.size(), 2u);
  const auto& a = f.accounts[0];
  EXPECT_EQ(a.name, "a@x.com");
  EXPECT_EQ(a.plan, "Claude Max account");
  EXPECT_EQ(a.requests, 10 + 11 + 9 + 10 + 3);
  EXPECT_EQ(a.off_plan, 1);  // the Vertex request
  // Off-plan share of uncached input (input + cache writes): 1,000,000 of 43 × 10,000 + 1,000,000.
  EXPECT_NEAR(a.off_plan_share, 1e6 / (43 * 1e4 + 1e6), 1e-12);
  EXPECT_EQ(a.walls, 5);
  EXPECT_EQ(a.wall_copies, 6);  // day 1's wall written twice
  EXPECT_EQ(a.partial_outputs, 1);
  EXPECT_EQ(a.logged_output, 5);
  EXPECT_NEAR(a.estimated_output, 940, 1e-9);

  const auto* w = find(f, "a@x.com", "5-hour");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->evidence, "walls");
  ASSERT_EQ(w->samples.size(), 5u);
  const auto& best = w->rules.front();
  EXPECT_EQ(best.rule.name(), "cache reads at 0");
  EXPECT_EQ(best.samples, 5);
  EXPECT_EQ(best.inliers, 4);
  EXPECT_DOUBLE_EQ(best.explained, 0.8);
  // Inliers 98,940 (day 3: 8 × 11,000 + 10,940), 110,000, 110,000, 121,000: median 110,000.
  EXPECT_NEAR(best.cap, 110000, 1e-6);
  // |log deviations| 0.1060, 0, 0, 0.0953: their median (0 + 0.0953) / 2, × 1.4826.
  EXPECT_NEAR(best.sigma, 1.4826 * std::log(121.0 / 110) / 2, 1e-9);
  EXPECT_TRUE(w->samples[4].outlier);
  EXPECT_NEAR(w->samples[4].cap, 33000, 1e-6);
  EXPECT_EQ(w->samples[4].why, "0.30 of the cap logged: usage elsewhere (another machine, claude.ai)?");
  // Counting the logged partial output instead: day 3 holds 98,005; the median stays.
  EXPECT_NEAR(w->cap_logged_output, 110000, 1e-6);
  EXPECT_NEAR(w->samples[2].cap, 98940, 1e-6);
  // Every other rule spreads more: the reads differ by day.
  for (std::size_t i = 1; i < w->rules.size(); ++i)
    EXPECT_TRUE(std::isnan(w->rules[i].sigma) || w->rules[i].sigma > best.sigma) << w->rules[i].rule.name();

  const auto* wb = find(f, "b@y.com", "5-hour");
  ASSERT_NE(wb, nullptr);
  EXPECT_NEAR(wb->rules.front().cap, 220000, 1e-6);  // with cache reads at 0 or at any weight: 40K reads each
  EXPECT_EQ(f.accounts[1].walls, 3);

  // --account picks one; a name that matches none says which there are.
  plan_fit_options only;
  only.account = "b@y";
  EXPECT_EQ(fit_plan(logs, {}, only).accounts.size(), 1u);
  only.account = "nobody";
  try {
    (void)fit_plan(logs, {}, only);
    ADD_FAILURE() << "no error";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()), "--account nobody: no account of that name in the logs (they hold: a@x.com, b@y.com)");
  }
}

TEST(PlanBacktest, BurnRateBaselineAndForecastByHand) {
  const auto root = write_account_tree(fs::temp_directory_path() / "loopcast_plan_backtest");
  const auto logs = import_traces({root}, trace_format::automatic);
  plan_backtest_options o;
  o.account = "a@x";
  o.leads_s = {1800};
  const auto b = backtest_plan(logs, {}, o);
  EXPECT_EQ(b.walls, 5);
  ASSERT_EQ(b.leads.size(), 1u);
  const auto& l = b.leads[0];
  // Day 1 has no earlier wall; day 5's window is younger than the lead; days 2–4 are forecast.
  EXPECT_EQ(l.walls.forecasts, 3);
  // By hand, per forecast day: the fitted cap (the median of the earlier walls' logs), its spread
  // (σ 0.25 under 3 walls, else 1.4826 × the MAD; with the centre's error 1.2533 σ / √n), the
  // usage admitted by the cut (30 min before the wall), and the cap's median given that it is above
  // it. The baseline burns at the window's rate so far until that cap; the forecast draws 10-minute
  // blocks of 11,000 each, so its median wall is the cut + 600 s × (cap − used) / 11,000.
  //   day 2: walls 110K;              wall 11:45, cut 11:15, 8 requests (88,000) in 75 min
  //   day 3: walls 110K, 121K;        wall 11:25, cut 10:55, 6 requests (66,000; the partial one later) in 55 min
  //   day 4: walls 110K, 121K, 98.94K; wall 11:35, cut 11:05, 7 requests (77,000) in 65 min
  //   day 5: the wall at 10:25, cut 09:55 before the window opened: not forecast at this lead.
  auto phi = [](double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); };
  auto phi_inv = [&](double p) {  // bisection: the test's own normal quantile
    double lo = -10, hi = 10;
    for (int k = 0; k < 200; ++k) (phi(0.5 * (lo + hi)) < p ? lo : hi) = 0.5 * (lo + hi);
    return 0.5 * (lo + hi);
  };
  struct day {
    double log_cap, sigma, n, used, minutes_so_far;
  };
  const double mad3 = 1.4826 * std::log(121.0 / 110);  // |log devs| 0, 0.0953, 0.1060: the median
  const day days[] = {{std::log(110000.0), 0.25, 1, 88000, 75},
                      {0.5 * (std::log(110000.0) + std::log(121000.0)), 0.25, 2, 66000, 55},
                      {std::log(110000.0), mad3, 3, 77000, 65}};
  std::vector<double> base_err, model_err;
  for (const auto& d : days) {
    const double se = 1.2533 * d.sigma / std::sqrt(d.n), tot = std::sqrt(d.sigma * d.sigma + se * se);
    const double open = 1 - phi((std::log(d.used) - d.log_cap) / tot);
    const double cap = std::exp(d.log_cap + tot * phi_inv(1 - open + 0.5 * open));
    base_err.push_back(std::abs((cap - d.used) / (d.used / (60 * d.minutes_so_far)) - 1800));
    model_err.push_back(std::abs(600 * (cap - d.used) / 11000 - 1800));
  }
  std::sort(base_err.begin(), base_err.end());
  std::sort(model_err.begin(), model_err.end());
  EXPECT_EQ(l.walls_baseline.forecasts, 3);
  EXPECT_NEAR(l.walls_baseline.median_abs_error_s, base_err[1], 0.01);
  EXPECT_NEAR(l.walls.median_abs_error_s, model_err[1], 30);  // 400 stratified draws of the cap
  EXPECT_EQ(l.walls.missed_walls, 0);
  EXPECT_EQ(l.walls.false_walls, 0);
}

TEST(PlanFit, RealCodexAccountsTokensPerPoint) {
  // Real rollouts of three accounts (tests/data/traces/codex-rate-limits): one sessions folder is one
  // account; only EdouardZemb's windows rose 5 points or more.
  const auto logs = import_traces({fs::path(LOOPCAST_TEST_TRACES_DIR) / "codex-rate-limits"}, trace_format::automatic);
  const auto f = fit_plan(logs);
  ASSERT_EQ(f.accounts.size(), 3u);
  const auto* w = find(f, "codex: EdouardZemb-test-framework", "5-hour");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->samples.size(), 8u);
  const auto& best = w->rules.front();
  EXPECT_EQ(best.rule.name(), "cache reads at 0");
  EXPECT_EQ(best.inliers, 6);
  // The two windows of February 2 and 4 cost 2–4× as many tokens per point: a change, dated.
  ASSERT_EQ(w->levels.size(), 2u);
  EXPECT_FALSE(std::isnan(w->change_at));
  EXPECT_GT(best.cap, 1.0e6);
  EXPECT_LT(best.cap, 1.5e6);
  EXPECT_LT(best.cap_low, best.cap);
  EXPECT_GT(best.cap_high, best.cap);
}

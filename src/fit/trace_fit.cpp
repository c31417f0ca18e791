// Least-squares speed models from recorded requests (Eigen).
#include "loopcast/errors.hpp"
#include "loopcast/random.hpp"
#include "loopcast/speed_fit.hpp"

#include <Eigen/Dense>
#include <fmt/format.h>
#include <fmt/ranges.h>


#include <array>
#include <cmath>
#include <map>
#include <set>

namespace loopcast {

namespace {

struct row {
  double u, k, m, c;          // uncached, cached, generated, prompt (tokens)
  double duration, ttft;      // s; ttft NaN when unknown
};

// Columns: 0 overhead, 1 u, 2 u·(k+u/2), 3 k, 4 m, 5 m·(c+m/2).
std::array<double, 6> features(const row& r) {
  return {1.0, r.u, r.u * (r.k + r.u / 2), r.k, r.m, r.m * (r.c + r.m / 2)};
}

// Non-negative least squares by elimination: solve, drop the most negative coefficient, repeat.
Eigen::VectorXd nonneg_lsq(const std::vector<std::array<double, 6>>& x, const std::vector<double>& y,
                           std::vector<int> cols, std::vector<std::string>& notes) {
  static const char* names[] = {"overhead", "prefill per token", "prefill growth with position", "per cached token",
                                "decode per token", "decode growth with position"};
  Eigen::VectorXd full = Eigen::VectorXd::Zero(6);
  while (!cols.empty()) {
    Eigen::MatrixXd A(static_cast<Eigen::Index>(x.size()), static_cast<Eigen::Index>(cols.size()));
    Eigen::VectorXd b(static_cast<Eigen::Index>(y.size()));
    for (std::size_t i = 0; i < x.size(); ++i) {
      for (std::size_t c = 0; c < cols.size(); ++c)
        A(static_cast<Eigen::Index>(i), static_cast<Eigen::Index>(c)) = x[i][static_cast<std::size_t>(cols[c])];
      b(static_cast<Eigen::Index>(i)) = y[i];
    }
    // Scale columns so that the solver sees comparable magnitudes.
    Eigen::VectorXd scale = A.colwise().norm().transpose();
    for (Eigen::Index c = 0; c < scale.size(); ++c)
      if (scale(c) == 0) scale(c) = 1;
    const Eigen::VectorXd z = (A * scale.cwiseInverse().asDiagonal()).colPivHouseholderQr().solve(b);
    const Eigen::VectorXd coef = z.cwiseQuotient(scale);
    Eigen::Index worst = -1;
    for (Eigen::Index c = 0; c < coef.size(); ++c)
      if (coef(c) < 0 && (worst < 0 || coef(c) < coef(worst))) worst = c;
    if (worst < 0) {
      for (std::size_t c = 0; c < cols.size(); ++c) full(cols[c]) = coef(static_cast<Eigen::Index>(c));
      return full;
    }
    notes.push_back(fmt::format("{} came out negative and was dropped", names[cols[static_cast<std::size_t>(worst)]]));
    cols.erase(cols.begin() + worst);
  }
  return full;
}

bool usable(const recorded_request& r) {
  const double d = r.t_end - r.t_send;
  return d > 0 && d <= max_duration_s && r.tokens.generated() > 0;
}

} // namespace

std::vector<std::pair<std::string, std::size_t>> fittable_models(const std::vector<recorded_trace>& traces) {
  std::map<std::string, std::size_t> n;
  for (const auto& t : traces)
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests)
        if (usable(r)) ++n[t.models.at(static_cast<std::size_t>(r.model))];
  return {n.begin(), n.end()};
}

speed_fit fit_speed_model(const std::vector<recorded_trace>& traces) { return fit_speed_model(traces, ""); }

speed_fit fit_speed_model(const std::vector<recorded_trace>& traces, const std::string& model_pattern) {
  std::vector<row> rows;
  std::string first_file;
  std::set<std::string> models;
  for (const auto& t : traces) {
    if (t.totals)
      throw trace_error(t.file, 0, fmt::format("{} logs record per-task totals only: no request times to fit", to_string(t.format)));
    if (first_file.empty()) first_file = t.file;
    for (const auto& s : t.sessions)
      for (const auto& r : s.requests) {
        const double d = r.t_end - r.t_send;
        if (!usable(r)) continue;
        const auto& model = t.models.at(static_cast<std::size_t>(r.model));
        if (!model_matches(model_pattern, model)) continue;
        models.insert(model);
        rows.push_back({static_cast<double>(r.tokens.input + r.tokens.cache_write), static_cast<double>(r.tokens.cache_read),
                        static_cast<double>(r.tokens.generated()), static_cast<double>(r.tokens.prompt()), d,
                        std::isnan(r.t_first_token) ? unknown_time : r.t_first_token - r.t_send});
      }
  }
  if (rows.size() < 5)
    throw error(fmt::format("{}: {} usable requests (duration > 0, output > 0){}; fitting needs at least 5", first_file,
                            rows.size(), model_pattern.empty() || model_pattern == "*"
                                             ? std::string()
                                             : fmt::format(" of models matching \"{}\"", model_pattern)));
  speed_fit fit;
  fit.samples = rows.size();
  fit.models.assign(models.begin(), models.end());
  if (models.size() > 1)
    fit.notes.push_back(fmt::format("{} models pooled into one curve ({}): fit each with --model for per-model speeds",
                                    models.size(), fmt::join(fit.models, ", ")));
  std::size_t with_ttft = 0;
  for (const auto& r : rows) with_ttft += !std::isnan(r.ttft);
  Eigen::VectorXd coef;
  if (with_ttft >= 10 && with_ttft * 2 >= rows.size()) {
    fit.used_ttft = true;
    std::vector<std::array<double, 6>> xt, xd;
    std::vector<double> yt, yd;
    for (const auto& r : rows) {
      if (std::isnan(r.ttft)) continue;
      xt.push_back(features(r));
      yt.push_back(r.ttft);
      xd.push_back(features(r));
      yd.push_back(r.duration - r.ttft);
    }
    const auto a = nonneg_lsq(xt, yt, {0, 1, 2, 3}, fit.notes);
    const auto b = nonneg_lsq(xd, yd, {4, 5}, fit.notes);
    coef = a + b;
  } else {
    std::vector<std::array<double, 6>> x;
    std::vector<double> y;
    for (const auto& r : rows) {
      x.push_back(features(r));
      y.push_back(r.duration);
    }
    coef = nonneg_lsq(x, y, {0, 1, 2, 3, 4, 5}, fit.notes);
    fit.notes.push_back("the logs have no TTFT: prefill and decode are told apart only by how they scale");
    if (coef(1) <= 0 && coef(2) <= 0)
      fit.notes.push_back("prefill cannot be measured from these logs (no first-token times, and its term came out "
                          "negative): the preset's prefill is a placeholder of 10^9 tokens/s, i.e. prompt time is "
                          "folded into the overhead and decode terms; do not read prefill speed from it");
  }
  // A speed curve needs a positive per-token time: keep at least 1 ns.
  const double floor_s = 1e-9;
  fit.model.overhead_s = coef(0);
  fit.model.prefill = linear_curve{std::max(coef(1), floor_s), coef(2)};
  fit.model.cached_token_s = coef(3);
  fit.model.decode = linear_curve{std::max(coef(4), floor_s), coef(5)};

  // Quality: R² of durations and relative errors of the fitted model itself.
  double mean = 0;
  for (const auto& r : rows) mean += r.duration;
  mean /= static_cast<double>(rows.size());
  double ss_tot = 0, ss_res = 0;
  std::vector<double> rel;
  for (const auto& r : rows) {
    const auto tm = time_request(fit.model, static_cast<std::int64_t>(r.k), static_cast<std::int64_t>(r.u),
                                 static_cast<std::int64_t>(r.m));
    const double pred = tm.ttft_s + tm.decode_s;
    ss_tot += (r.duration - mean) * (r.duration - mean);
    ss_res += (r.duration - pred) * (r.duration - pred);
    rel.push_back(std::abs(pred - r.duration) / r.duration);
  }
  fit.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  fit.abs_rel_error = summarize(std::move(rel));
  // The residuals as a log-normal factor: median and spread of log(recorded / predicted), robust
  // to outliers (from the P10–P90 range rather than the standard deviation).
  std::vector<double> logs;
  for (const auto& r : rows) {
    const auto tm = time_request(fit.model, static_cast<std::int64_t>(r.k), static_cast<std::int64_t>(r.u),
                                 static_cast<std::int64_t>(r.m));
    const double pred = tm.ttft_s + tm.decode_s;
    if (pred > 0) logs.push_back(std::log(r.duration / pred));
  }
  if (logs.size() >= 5) {
    const auto q = summarize(std::move(logs));
    fit.noise_median = std::exp(q.p50);
    fit.noise_sigma = std::max(0.0, (q.p90 - q.p10) / (2 * z90));
  }
  return fit;
}

} // namespace loopcast

// Speed models from recorded requests: least squares of relative errors (Eigen), median-unbiased,
// with the residual noise split into a session factor and per-request noise.
#include "loopcast/errors.hpp"
#include "loopcast/random.hpp"
#include "loopcast/speed_fit.hpp"

#include <Eigen/Dense>
#include <boost/math/distributions/fisher_f.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>


#include <array>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

namespace loopcast {

namespace {

struct row {
  double u, k, m, c;          // uncached, cached, generated, prompt (tokens)
  double duration, ttft;      // s; ttft NaN when unknown
  std::size_t group;          // the recorded session (log and session) it belongs to
  std::size_t log;            // the log it belongs to
  double unix_send;           // Unix time of its send; NaN when the log's clock is relative
  std::uint8_t kinds;         // what the response held (output_kind bits; 0 unknown)
};

// The output-kind indicators a request's log factor sums: thinking, text, tool use, unknown.
constexpr std::size_t kind_terms = 4;
std::array<double, kind_terms> kind_indicators(const row& r) {
  if (r.kinds == 0) return {0, 0, 0, 1};
  return {(r.kinds & output_thinking) ? 1.0 : 0.0, (r.kinds & output_text) ? 1.0 : 0.0,
          (r.kinds & output_tool_use) ? 1.0 : 0.0, 0.0};
}

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


// Least squares of relative errors (close to a fit in log space, where hosted-API times are
// noisy): rows weighted by 1/recorded first, then twice by 1/predicted.
Eigen::VectorXd relative_lsq(const std::vector<std::array<double, 6>>& x, const std::vector<double>& y,
                             const std::vector<int>& cols, std::vector<std::string>& notes) {
  std::vector<double> w(y.size());
  for (std::size_t i = 0; i < y.size(); ++i) w[i] = y[i] > 0 ? 1 / y[i] : 0;
  Eigen::VectorXd coef;
  std::vector<std::string> dropped;
  for (int pass = 0; pass < 3; ++pass) {
    std::vector<std::array<double, 6>> xw(x.size());
    std::vector<double> yw(y.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      for (std::size_t c = 0; c < 6; ++c) xw[i][c] = x[i][c] * w[i];
      yw[i] = y[i] * w[i];
    }
    dropped.clear();
    coef = nonneg_lsq(xw, yw, cols, dropped);
    for (std::size_t i = 0; i < x.size(); ++i) {
      double pred = 0;
      for (std::size_t c = 0; c < 6; ++c) pred += coef(static_cast<Eigen::Index>(c)) * x[i][c];
      if (pred > 0) w[i] = 1 / pred;
    }
  }
  notes.insert(notes.end(), dropped.begin(), dropped.end());
  return coef;
}

// The model's terms (seconds per feature) and the log factors of the output kinds.
struct coefficients {
  Eigen::VectorXd terms = Eigen::VectorXd::Zero(6);
  std::array<double, kind_terms> kind_log{};
};

double kind_log_factor(const coefficients& c, const row& r) {
  const auto z = kind_indicators(r);
  double g = 0;
  for (std::size_t k = 0; k < kind_terms; ++k) g += c.kind_log[k] * z[k];
  return g;
}

// The sum of the terms from `first` to `last` (exclusive): 0–6 the duration, 0–4 the first-token time.
double term_sum(const Eigen::VectorXd& terms, const row& r, int first = 0, int last = 6) {
  const auto x = features(r);
  double p = 0;
  for (int c = first; c < last; ++c) p += terms(c) * x[static_cast<std::size_t>(c)];
  return p;
}

double predict(const coefficients& c, const row& r) { return term_sum(c.terms, r) * std::exp(kind_log_factor(c, r)); }

// The model's terms from the rows: relative least squares (prefill on first-token times when
// at least 10 requests record one) as a start, refined in log space with the output kinds'
// factors (log_refine), then scaled to a median residual of 1.
struct coef_fit {
  coefficients coef;
  bool used_ttft = false;
};

// A term the log-space fit drove towards 0 (its log has no floor) is 0 when it adds less than
// 1e-6 of any row's time: a preset then says 0, not 1e-35.
coefficients negligible_terms_dropped(const std::vector<row>& rows, coefficients c) {
  for (int t = 0; t < 6; ++t) {
    if (c.terms(t) == 0) continue;
    bool matters = false;
    for (const auto& r : rows) {
      const double whole = term_sum(c.terms, r);
      if (c.terms(t) * features(r)[static_cast<std::size_t>(t)] >= 1e-6 * whole) {
        matters = true;
        break;
      }
    }
    if (!matters) c.terms(t) = 0;
  }
  return c;
}

// Robust least squares in log space (hosted-API times are log-normal; a fit of plain or relative
// errors comes out slow): minimises the soft-L1 loss (scale 0.3, about a 35% miss) of
//   log(duration) − log(Σ terms) − Σ kind factors
// over every row, and of log(TTFT) − log(Σ prefill terms) − Σ kind factors over the rows that
// record a first-token time, by Levenberg–Marquardt on the log of each term kept by the start
// (so terms stay positive) and on the kind factors that vary among at least 10 rows each way.
coefficients log_refine(const std::vector<row>& rows, coefficients start) {
  std::vector<int> term_cols;
  for (int c = 0; c < 6; ++c)
    if (start.terms(c) > 0) term_cols.push_back(c);
  std::array<std::size_t, kind_terms> with{};
  for (const auto& r : rows) {
    const auto z = kind_indicators(r);
    for (std::size_t k = 0; k < kind_terms; ++k) with[k] += z[k] > 0;
  }
  std::vector<std::size_t> kind_cols;
  for (std::size_t k = 0; k < kind_terms; ++k)
    if (with[k] >= 10 && rows.size() - with[k] >= 10) kind_cols.push_back(k);
  const bool prefill_terms = start.terms.head(4).maxCoeff() > 0;
  const auto nt = term_cols.size(), np = nt + kind_cols.size();
  if (nt == 0) return start;
  Eigen::VectorXd p(static_cast<Eigen::Index>(np));
  for (std::size_t i = 0; i < nt; ++i) p(static_cast<Eigen::Index>(i)) = std::log(start.terms(term_cols[i]));
  for (std::size_t i = 0; i < kind_cols.size(); ++i) p(static_cast<Eigen::Index>(nt + i)) = start.kind_log[kind_cols[i]];
  auto unpack = [&](const Eigen::VectorXd& v) {
    coefficients c = start;
    for (std::size_t i = 0; i < nt; ++i) c.terms(term_cols[i]) = std::exp(std::clamp(v(static_cast<Eigen::Index>(i)), -80.0, 20.0));
    for (std::size_t i = 0; i < kind_cols.size(); ++i) c.kind_log[kind_cols[i]] = v(static_cast<Eigen::Index>(nt + i));
    return c;
  };
  constexpr double scale = 0.3;
  auto loss_of = [](double r) { return 2 * scale * scale * (std::sqrt(1 + (r / scale) * (r / scale)) - 1); };
  // Each residual log(y) − log(Σ terms [0, last)) − kind factors, with its gradient row when
  // `with_grad` (one buffer for all rows; the loss alone needs none).
  Eigen::VectorXd grad(static_cast<Eigen::Index>(np));
  auto visit = [&](const coefficients& c, bool with_grad, auto&& each) {
    for (const auto& r : rows) {
      const auto x = features(r);
      const auto z = kind_indicators(r);
      const double g = kind_log_factor(c, r);
      auto one = [&](double y, int last) {
        const double sum = term_sum(c.terms, r, 0, last);
        if (!(sum > 0) || !(y > 0)) return;
        if (with_grad) {
          grad.setZero();
          for (std::size_t i = 0; i < nt; ++i)
            if (term_cols[i] < last)
              grad(static_cast<Eigen::Index>(i)) = -c.terms(term_cols[i]) * x[static_cast<std::size_t>(term_cols[i])] / sum;
          for (std::size_t i = 0; i < kind_cols.size(); ++i) grad(static_cast<Eigen::Index>(nt + i)) = -z[kind_cols[i]];
        }
        each(std::log(y) - std::log(sum) - g);
      };
      one(r.duration, 6);
      if (prefill_terms && r.ttft > 0) one(r.ttft, 4);
    }
  };
  auto total_loss = [&](const Eigen::VectorXd& v) {
    double l = 0;
    visit(unpack(v), false, [&](double res) { l += loss_of(res); });
    return l;
  };
  double loss = total_loss(p), lambda = 1e-3;
  for (int iter = 0; iter < 200; ++iter) {
    Eigen::MatrixXd H = Eigen::MatrixXd::Zero(static_cast<Eigen::Index>(np), static_cast<Eigen::Index>(np));
    Eigen::VectorXd b = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(np));
    visit(unpack(p), true, [&](double res) {
      const double w = 1 / std::sqrt(1 + (res / scale) * (res / scale));  // IRLS weight of the soft-L1 loss
      H.noalias() += w * grad * grad.transpose();
      b.noalias() -= w * res * grad;
    });
    bool improved = false;
    for (int tries = 0; tries < 20 && !improved; ++tries) {
      Eigen::MatrixXd A = H;
      for (Eigen::Index d = 0; d < A.rows(); ++d) A(d, d) += lambda * std::max(H(d, d), 1e-9);
      const Eigen::VectorXd step = A.ldlt().solve(b);
      const double next = total_loss(p + step);
      if (std::isfinite(next) && next < loss) {
        improved = true;
        p += step;
        const double gain = loss - next;
        loss = next;
        lambda = std::max(lambda / 3, 1e-9);
        if (gain < 1e-10 * loss) return negligible_terms_dropped(rows, unpack(p));
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  return negligible_terms_dropped(rows, unpack(p));
}

coef_fit fit_coefficients(const std::vector<row>& rows, std::vector<std::string>& notes) {
  std::size_t with_ttft = 0;
  for (const auto& r : rows) with_ttft += r.ttft > 0;
  coef_fit out;
  Eigen::VectorXd& coef = out.coef.terms;
  if (with_ttft >= 10) {
    // Every request with a first-token time separates prefill from decode: prefill on those,
    // decode on every request (its decode time: the duration less the recorded first-token time,
    // or the fitted one where none was recorded).
    out.used_ttft = true;
    std::vector<std::array<double, 6>> xt;
    std::vector<double> yt;
    for (const auto& r : rows)
      if (r.ttft > 0) {
        xt.push_back(features(r));
        yt.push_back(r.ttft);
      }
    const auto a = relative_lsq(xt, yt, {0, 1, 2, 3}, notes);
    std::vector<std::array<double, 6>> xd;
    std::vector<double> yd;
    for (const auto& r : rows) {
      const auto x = features(r);
      double ttft = r.ttft;
      if (!(ttft > 0)) {
        ttft = 0;
        for (int c = 0; c < 4; ++c) ttft += a(c) * x[static_cast<std::size_t>(c)];
      }
      if (r.duration - ttft <= 0) continue;
      xd.push_back(x);
      yd.push_back(r.duration - ttft);
    }
    const auto b = relative_lsq(xd, yd, {4, 5}, notes);
    coef = a + b;
    if (with_ttft < rows.size())
      notes.push_back(fmt::format("prefill fitted on the {} of {} requests that record a first-token time", with_ttft,
                                      rows.size()));
  } else {
    std::vector<std::array<double, 6>> x;
    std::vector<double> y;
    for (const auto& r : rows) {
      x.push_back(features(r));
      y.push_back(r.duration);
    }
    coef = relative_lsq(x, y, {0, 1, 2, 3, 4, 5}, notes);
    notes.push_back(with_ttft == 0 ? std::string("the logs have no TTFT: prefill and decode are told apart only by how they scale")
                                       : fmt::format("only {} requests record a first-token time (10 are needed to fit prefill "
                                                     "on them): prefill and decode are told apart only by how they scale",
                                                     with_ttft));
    if (coef(1) <= 0 && coef(2) <= 0)
      notes.push_back("prefill cannot be measured from these logs (no first-token times, and its term came out "
                          "negative): the preset's prefill is a placeholder of 10^9 tokens/s, i.e. prompt time is "
                          "folded into the overhead and decode terms; do not read prefill speed from it");
  }
  out.coef = log_refine(rows, out.coef);
  // Median-unbiased: the fitted times scaled so that half the requests ran slower than predicted.
  {
    std::vector<double> logs;
    for (const auto& r : rows) {
      const double pred = predict(out.coef, r);
      if (pred > 0) logs.push_back(std::log(r.duration / pred));
    }
    if (!logs.empty()) coef *= std::exp(summarize(std::move(logs)).p50);
  }
  return out;
}

// The residuals log(recorded / predicted) that the noise is estimated from, with their sessions:
// out of sample when the rows come from at least 5 logs (each log's requests predicted by the
// terms fitted on the other logs, in 5 folds), since in-sample residuals understate the spread a
// replay of another log meets; else in sample.
std::pair<std::vector<double>, std::vector<std::size_t>> residuals(const std::vector<row>& rows, const coefficients& coef,
                                                                   std::vector<std::string>& notes) {  // (residual, row)
  std::set<std::size_t> logs;
  for (const auto& r : rows) logs.insert(r.log);
  std::vector<coefficients> fold_coef;
  // Five folds, or one per log when there are fewer (a model seen in 3 logs: each predicted by
  // the other two); a single log can only be measured in sample.
  std::size_t k = logs.size() >= 2 ? std::min<std::size_t>(5, logs.size()) : 0;
  std::map<std::size_t, std::size_t> fold_of;
  for (const auto l : logs) fold_of.emplace(l, fold_of.size() % 5);
  for (std::size_t f = 0; f < k; ++f) {
    std::vector<row> train;
    for (const auto& r : rows)
      if (fold_of[r.log] != f) train.push_back(r);
    if (train.size() < 5) {  // a fold holds nearly every request: in sample after all
      k = 0;
      break;
    }
    std::vector<std::string> scratch;
    fold_coef.push_back(fit_coefficients(train, scratch).coef);
  }
  std::pair<std::vector<double>, std::vector<std::size_t>> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& r = rows[i];
    const double pred = predict(k ? fold_coef[fold_of[r.log]] : coef, r);
    if (!(pred > 0)) continue;
    out.first.push_back(std::log(r.duration / pred));
    out.second.push_back(i);
  }
  notes.push_back(k ? fmt::format("noise estimated out of sample: each of the {} logs predicted by the terms fitted on the "
                                  "others ({} folds)", logs.size(), k)
                    : std::string("noise estimated in sample (one log): a replay of another log may meet more"));
  return out;
}

// The log residuals' spread split into a per-session factor and per-request noise: the
// per-request part from deviations within sessions (corrected for the session mean they are
// measured from), the session part the rest of the total spread. Spreads are robust
// ((P90 − P10) / 2·z0.9).
void split_noise(const std::vector<double>& logs, const std::vector<std::size_t>& group, speed_fit& fit) {
  const auto q = summarize(logs);
  const double total = std::max(0.0, (q.p90 - q.p10) / (2 * z90));
  std::map<std::size_t, std::pair<double, std::size_t>> sums;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    auto& g = sums[group[i]];
    g.first += logs[i];
    ++g.second;
  }
  std::vector<double> within;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& g = sums[group[i]];
    if (g.second < 2) continue;
    const double n = static_cast<double>(g.second);
    within.push_back((logs[i] - g.first / n) * std::sqrt(n / (n - 1)));
  }
  fit.noise_sigma = total;
  if (within.size() < 5) return;
  const auto w = summarize(std::move(within));
  const double request = std::min(total, std::max(0.0, (w.p90 - w.p10) / (2 * z90)));
  fit.noise_sigma = request;
  fit.session_sigma = std::sqrt(std::max(0.0, total * total - request * request));
}

// Time of day. Sessions are the unit (their requests share a session factor): each session's mean
// residual, at the UTC hour of its first request. A one-way analysis of variance over the hours
// with at least 3 sessions says whether hours differ more than sessions do among themselves; when
// they do (p < 0.01), each such hour's factor is exp(its mean − the mean of all), the others 1, and
// the residuals lose their hour's share before the noise is split.
void fit_hour_factors(const std::vector<row>& rows, std::vector<double>& logs, const std::vector<std::size_t>& at,
                      speed_fit& fit) {
  constexpr std::size_t min_sessions = 3;
  std::map<std::size_t, std::tuple<double, std::size_t, double>> session;  // group → (sum, n, first send)
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto& r = rows[at[i]];
    if (std::isnan(r.unix_send)) continue;
    auto [it, fresh] = session.try_emplace(r.group, 0.0, 0, r.unix_send);
    auto& [sum, n, first] = it->second;
    sum += logs[i];
    ++n;
    first = std::min(first, r.unix_send);
  }
  if (session.empty()) {
    fit.notes.push_back("time of day: the logs carry no clock times (relative times, as kv-cache-tester's): no hour factor");
    return;
  }
  std::array<std::vector<double>, 24> by_hour;
  for (const auto& [g, v] : session) by_hour[utc_hour(std::get<2>(v))].push_back(std::get<0>(v) / static_cast<double>(std::get<1>(v)));
  // Each hour's mean over its sessions (hours with at least min_sessions), and the mean of all.
  std::array<double, 24> mean{};
  std::size_t hours = 0, n = 0, seen = 0;
  double all = 0;
  for (std::size_t h = 0; h < 24; ++h) {
    seen += !by_hour[h].empty();
    if (by_hour[h].size() < min_sessions) continue;
    ++hours;
    n += by_hour[h].size();
    for (const double y : by_hour[h]) mean[h] += y;
    all += mean[h];
    mean[h] /= static_cast<double>(by_hour[h].size());
  }
  if (hours < 2) {
    fit.notes.push_back(fmt::format("time of day: {} sessions in {} UTC hours, {} of them with at least {} sessions: too "
                                    "few to tell hours apart (no hour factor)",
                                    session.size(), seen, hours, min_sessions));
    return;
  }
  all /= static_cast<double>(n);
  double between = 0, within = 0;
  for (std::size_t h = 0; h < 24; ++h) {
    if (by_hour[h].size() < min_sessions) continue;
    between += static_cast<double>(by_hour[h].size()) * (mean[h] - all) * (mean[h] - all);
    for (const double y : by_hour[h]) within += (y - mean[h]) * (y - mean[h]);
  }
  const double df1 = static_cast<double>(hours - 1), df2 = static_cast<double>(n - hours);
  const double f = df2 > 0 && within > 0 ? (between / df1) / (within / df2) : 0.0;
  fit.hour_p_value = df2 > 0 && within > 0 ? boost::math::cdf(boost::math::complement(boost::math::fisher_f(df1, df2), f)) : 1.0;
  if (!(fit.hour_p_value < 0.01)) {
    fit.notes.push_back(fmt::format("time of day: the UTC hours of {} sessions ({} hours with at least {}) differ no more "
                                    "than sessions do among themselves (F = {:.2f}, p = {:.2g}): no hour factor",
                                    n, hours, min_sessions, f, fit.hour_p_value));
    return;
  }
  fit.model.hour_factors.assign(24, 1.0);
  double lo = 1e9, hi = 0;
  for (std::size_t h = 0; h < 24; ++h)
    if (by_hour[h].size() >= min_sessions) {
      fit.model.hour_factors[h] = std::round(std::exp(mean[h] - all) * 1e4) / 1e4;
      lo = std::min(lo, fit.model.hour_factors[h]);
      hi = std::max(hi, fit.model.hour_factors[h]);
    }
  for (std::size_t i = 0; i < logs.size(); ++i)
    if (const auto& r = rows[at[i]]; !std::isnan(r.unix_send)) logs[i] -= std::log(fit.model.hour_factors[utc_hour(r.unix_send)]);
  fit.notes.push_back(fmt::format("time of day: the UTC hour explains part of the spread between sessions (F = {:.2f}, "
                                  "p = {:.2g}, {} sessions in {} hours with at least {}): factors {:.3f} to {:.3f} "
                                  "(speed.hour_factors; other hours 1)",
                                  f, fit.hour_p_value, n, hours, min_sessions, lo, hi));
}

// The output kinds' factors into the model. A kind no row varies on keeps 1; `unknown` is the
// fitted one when some rows had unknown kinds, else the known rows' geometric mean factor (a
// synthetic session of unknown kinds is then as fast as the fitted mix).
void set_output_factors(const std::vector<row>& rows, const coefficients& c, speed_fit& fit) {
  auto& f = fit.model.output;
  f.thinking = std::exp(c.kind_log[0]);
  f.text = std::exp(c.kind_log[1]);
  f.tool_use = std::exp(c.kind_log[2]);
  f.unknown = std::exp(c.kind_log[3]);
  std::size_t known = 0, unknown = 0;
  double mean = 0;
  for (const auto& r : rows)
    if (r.kinds != 0) {
      ++known;
      mean += kind_log_factor(c, r);
    } else {
      ++unknown;
    }
  if (known == 0) return;
  if (unknown < 10) f.unknown = std::exp(mean / static_cast<double>(known));
  fit.notes.push_back(fmt::format("output kinds ({} of {} requests record them): a response with thinking takes {:.3f}× as "
                                  "long, with text {:.3f}×, with a tool call {:.3f}× (the factors multiply); one of unknown "
                                  "kinds {:.3f}× (speed.output_factors)",
                                  known, rows.size(), f.thinking, f.text, f.tool_use, f.unknown));
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
  std::size_t group = 0;
  for (const auto& t : traces) {
    if (t.totals)
      throw trace_error(t.file, 0, fmt::format("{} logs record per-task totals only: no request times to fit", to_string(t.format)));
    if (first_file.empty()) first_file = t.file;
    for (const auto& s : t.sessions) {
      ++group;
      for (const auto& r : s.requests) {
        const double d = r.t_end - r.t_send;
        if (!usable(r)) continue;
        const auto& model = t.models.at(static_cast<std::size_t>(r.model));
        if (!model_matches(model_pattern, model)) continue;
        models.insert(model);
        rows.push_back({static_cast<double>(r.tokens.input + r.tokens.cache_writes()), static_cast<double>(r.tokens.cache_read),
                        static_cast<double>(r.tokens.generated()), static_cast<double>(r.tokens.prompt()), d,
                        std::isnan(r.t_first_token) ? unknown_time : r.t_first_token - r.t_send, group,
                        static_cast<std::size_t>(&t - traces.data()), t.absolute_clock ? r.t_send : unknown_time,
                        r.output_kinds});
      }
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
  const auto cf = fit_coefficients(rows, fit.notes);
  const Eigen::VectorXd& coef = cf.coef.terms;
  fit.used_ttft = cf.used_ttft;
  set_output_factors(rows, cf.coef, fit);
  // A speed curve needs a positive per-token time: keep at least 1 ns.
  const double floor_s = 1e-9;
  fit.model.overhead_s = coef(0);
  fit.model.prefill = linear_curve{std::max(coef(1), floor_s), coef(2)};
  fit.model.cached_token_s = coef(3);
  fit.model.decode = linear_curve{std::max(coef(4), floor_s), coef(5)};
  for (const auto& r : rows) fit.context_tokens_max = std::max(fit.context_tokens_max, r.c + r.m);
  fit.model.context_max_tokens = fit.context_tokens_max;
  fit.notes.push_back(fmt::format("fitted on contexts up to {:.0f} tokens: past them the per-token times stay at their "
                                  "value there (speed.context_max_tokens), not extrapolated",
                                  fit.context_tokens_max));

  // Quality: R² of durations and relative errors of the fitted model itself.
  double mean = 0;
  for (const auto& r : rows) mean += r.duration;
  mean /= static_cast<double>(rows.size());
  double ss_tot = 0, ss_res = 0;
  std::vector<double> rel;
  for (const auto& r : rows) {
    const auto tm = time_request(fit.model, static_cast<std::int64_t>(r.k), static_cast<std::int64_t>(r.u),
                                 static_cast<std::int64_t>(r.m));
    const double pred = (tm.ttft_s + tm.decode_s) * output_factor(fit.model.output, r.kinds);
    ss_tot += (r.duration - mean) * (r.duration - mean);
    ss_res += (r.duration - pred) * (r.duration - pred);
    rel.push_back(std::abs(pred - r.duration) / r.duration);
  }
  fit.r_squared = ss_tot > 0 ? 1.0 - ss_res / ss_tot : 1.0;
  fit.abs_rel_error = summarize(std::move(rel));
  auto [logs, at] = residuals(rows, cf.coef, fit.notes);
  fit_hour_factors(rows, logs, at, fit);
  std::vector<std::size_t> groups(at.size());
  for (std::size_t i = 0; i < at.size(); ++i) groups[i] = rows[at[i]].group;
  if (logs.size() >= 5) split_noise(logs, groups, fit);
  return fit;
}

} // namespace loopcast

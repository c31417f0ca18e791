// Names of the enumerations, as used in presets and reports.
#include "loopcast/presets.hpp"
#include "loopcast/rate_limits.hpp"
#include "loopcast/results.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/tokens.hpp"

namespace loopcast {

std::string_view to_string(token_class c) noexcept {
  switch (c) {
  case token_class::input: return "input";
  case token_class::cache_read: return "cache_read";
  case token_class::cache_write: return "cache_write";
  case token_class::output: return "output";
  case token_class::reasoning: return "reasoning";
  }
  return "?";
}

std::optional<token_class> parse_token_class(std::string_view name) noexcept {
  for (auto c : all_token_classes)
    if (to_string(c) == name) return c;
  return std::nullopt;
}

std::string_view to_string(bucket_algorithm a) noexcept {
  switch (a) {
  case bucket_algorithm::token_bucket: return "token_bucket";
  case bucket_algorithm::fixed_window: return "fixed_window";
  case bucket_algorithm::sliding_window: return "sliding_window";
  case bucket_algorithm::concurrency: return "concurrency";
  }
  return "?";
}

std::string_view to_string(charging_rule c) noexcept {
  switch (c) {
  case charging_rule::actual: return "actual";
  case charging_rule::reserve_then_refund: return "reserve_then_refund";
  case charging_rule::reserve: return "reserve";
  case charging_rule::on_completion: return "on_completion";
  }
  return "?";
}

std::string_view to_string(bucket_unit u) noexcept {
  switch (u) {
  case bucket_unit::requests: return "requests";
  case bucket_unit::tokens: return "tokens";
  case bucket_unit::concurrent_requests: return "concurrent_requests";
  }
  return "?";
}

std::string_view to_string(window_anchor a) noexcept {
  switch (a) {
  case window_anchor::session_start: return "session_start";
  case window_anchor::epoch: return "epoch";
  }
  return "?";
}

std::string_view to_string(oversize_rule r) noexcept {
  switch (r) {
  case oversize_rule::refuse: return "refuse";
  case oversize_rule::rate_limited: return "rate_limited";
  case oversize_rule::debt: return "debt";
  }
  return "?";
}

std::string_view to_string(over_cap_action a) noexcept {
  switch (a) {
  case over_cap_action::give_up: return "give_up";
  case over_cap_action::backoff: return "backoff";
  }
  return "?";
}

std::string_view to_string(jitter_kind j) noexcept {
  switch (j) {
  case jitter_kind::none: return "none";
  case jitter_kind::full: return "full";
  case jitter_kind::equal: return "equal";
  case jitter_kind::scaled_75: return "scaled_75";
  }
  return "?";
}

std::string_view to_string(attempt_status s) noexcept {
  switch (s) {
  case attempt_status::ok: return "ok";
  case attempt_status::rate_limited: return "rate_limited";
  case attempt_status::too_large: return "too_large";
  case attempt_status::context_overflow: return "context_overflow";
  }
  return "?";
}

std::string_view to_string(session_outcome o) noexcept {
  switch (o) {
  case session_outcome::completed: return "completed";
  case session_outcome::died_after_retries: return "died_after_retries";
  case session_outcome::request_too_large: return "request_too_large";
  case session_outcome::context_overflow: return "context_overflow";
  }
  return "?";
}

std::string_view to_string(preset_kind k) noexcept {
  switch (k) {
  case preset_kind::target: return "target";
  case preset_kind::client: return "client";
  case preset_kind::workload: return "workload";
  case preset_kind::scenario: return "scenario";
  }
  return "?";
}

} // namespace loopcast

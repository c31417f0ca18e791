// A session of two requests, a client that retries forever honouring retry-after, and the message
// of an error a call throws: shared by the hand-computed simulator, limits and plan tests.
#pragma once

#include "loopcast/errors.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/session.hpp"

#include <functional>
#include <string>

namespace loopcast::test_support {

/// The message of the loopcast::error that f throws, or "no error".
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const error& e) {
    return e.what();
  }
  return "no error";
}

// r1: prompt 1,000, output 100. r2, 2 s after r1 ends: prompt 1,500 (1,000 + 100 output + 400 tool), output 100.
inline session_script two_requests() {
  session_script s;
  s.lineages = 1;
  s.runs = {{0, 1000}, {0, 1500}};
  request_spec r1;
  r1.prompt_tokens = 1000;
  r1.output_tokens = 100;
  r1.max_tokens = 1000;
  r1.runs_begin = 0;
  r1.runs_count = 1;
  r1.turn = 1;
  request_spec r2 = r1;
  r2.prompt_tokens = 1500;
  r2.delay_before_s = 2.0;
  r2.runs_begin = 1;
  r2.turn = 2;
  s.requests = {r1, r2};
  return s;
}

inline retry_policy honour_forever() {
  retry_policy p;
  p.name = "honour";
  p.max_retries = -1;
  return p;
}

} // namespace loopcast::test_support

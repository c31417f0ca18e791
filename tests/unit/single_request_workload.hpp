// A workload of one request per session: prompt 1,000 tokens, output 100; no tools, no cache
// reads between sessions (no system prompt). Shared by the hand-computed solve and compare tests.
#pragma once

#include "loopcast/workload.hpp"

#include <string>

namespace loopcast::test_support {

inline workload single_request_workload(const std::string& name) {
  workload w;
  w.name = name;
  w.system_prompt_tokens = 0;
  w.task_tokens = fixed_dist{1000};
  w.turns = fixed_dist{1};
  w.output_tokens = fixed_dist{100};
  w.reasoning_tokens = fixed_dist{0};
  w.tool_result_tokens = fixed_dist{0};
  w.tool_time_s = fixed_dist{0};
  w.max_tokens = 100;
  w.context_window_tokens = 8192;
  return w;
}

} // namespace loopcast::test_support

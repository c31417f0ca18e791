// loopcast — progress of long work: Monte Carlo seeds, sweep runs, compare and solve evaluations.
//
// The library reports how far a task has come to one process-wide handler, which the command
// line draws on a terminal (count, rate, ETA) and the Python package hands to tqdm. Nothing is
// reported unless a handler is installed; reports are throttled to about ten a second per task,
// plus one when the task ends, and serialised (a handler sees one call at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

namespace loopcast {

struct progress_update {
  std::string_view task;   ///< "Monte Carlo", "sweep", "compare"
  std::uint64_t done = 0;  ///< units finished (seeds, runs)
  std::uint64_t total = 0;
  double elapsed_s = 0;    ///< since the task started
  bool finished = false;   ///< the last report of this task (done may be < total if it failed)
};

using progress_handler = std::function<void(const progress_update&)>;

/// Installs the handler for this process (an empty one: none, the default). Not to be called
/// while work is running.
void set_progress_handler(progress_handler handler);

} // namespace loopcast

// Claude Code's statusline: the command it runs constantly (`loopcast-statusline`, or `loopcast
// statusline`), and what plan inference reads of its log. Internal to loopcast.
//
// The command must never block the status bar nor blank it: it reads the first JSON object on
// its input within a deadline (stdin may never be closed), prints what it can of it (a window
// of the wrong type is left out, not the line), then appends the snapshot to its log with one
// write of the whole line (O_APPEND: concurrent calls never tear a line), opening the log without
// blocking (a FIFO) and saying on stderr, once, why a snapshot was not recorded. A whole-call
// alarm ends it if anything still blocks. It exits 0 except for bad arguments.
#pragma once

#include "loopcast/limits_inference.hpp"

#include <span>
#include <string>
#include <vector>

namespace loopcast::detail {

/// Each snapshot in Codex's form: {"primary": {"used_percent", "window_minutes": 300, "resets_at"},
/// "secondary": {… 10080 …}}, so that one reader bounds the caps from both.
std::vector<rate_limit_snapshot> statusline_as_rate_limits(std::span<const statusline_snapshot> snapshots);

/// The longest statusline log line written, newline included: what one write appends atomically
/// on Linux's local file systems (a page). A longer snapshot has its session id cut to fit.
inline constexpr std::size_t statusline_line_max = 4096;
/// The longest line the log reader takes; a longer one is skipped and counted, never held whole.
inline constexpr std::size_t statusline_read_max = 64 * 1024;

struct statusline_call {
  std::string log;               ///< where to append ("": $LOOPCAST_STATUSLINE_LOG, else ~/.claude/loopcast-statusline.jsonl)
  bool no_log = false;           ///< print only
  double input_deadline_s = 1.0; ///< the input's first JSON object must arrive within this, s
  double call_deadline_s = 3.0;  ///< the whole call ends by then (SIGALRM), s
};

/// The line shown: "5h 23% ↻ 14:00 · 7d 41% ↻ Thu 09:00" (local time; a reset more than a week
/// away with its date, one passed as such; 99.6% as "99.6%", never rounded up to 100%).
std::string statusline_text(const statusline_snapshot& s, double now_unix);

/// Runs the statusline command on these descriptors; returns the exit code (0 but for arguments).
int run_statusline(const statusline_call& call, int in_fd, int out_fd, int err_fd) noexcept;

} // namespace loopcast::detail

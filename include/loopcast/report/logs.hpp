// loopcast — what every report of recorded logs says about the logs themselves: how many files
// were read, what they held, and what was passed over and why (docs/output.md, "Logs read").
#pragma once

#include "loopcast/trace.hpp"

#include <iosfwd>
#include <vector>

namespace loopcast {

/// What a report says of the logs beyond their requests.
struct logs_listing {
  import_notes notes;      ///< files passed over, machines' clocks (import_traces)
  bool each_file = false;  ///< list each file's import too (`--verbose`), not only the summary
};

/// The logs read, in a few lines: files, requests and sessions; files with no request and why;
/// files that are no log; responses logged twice; lines skipped by reason; then, with
/// `listing.each_file`, each file's own import (else one line saying how to ask for it).
void write_logs_summary(std::ostream& os, const std::vector<recorded_trace>& traces, const logs_listing& listing = {});

} // namespace loopcast

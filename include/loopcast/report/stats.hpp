// loopcast — the reports of `loopcast stats` (docs/output.md): text, JSON and CSV.
#pragma once

#include "loopcast/report/document.hpp"
#include "loopcast/report/logs.hpp"
#include "loopcast/stats.hpp"
#include "loopcast/trace.hpp"

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace loopcast {

/// The answer first: one table line per group (and per model within it, with a breakdown), then
/// the whole in detail (throughput, context bins, tokens, cost), then what priced it and what the
/// logs held (write_logs_summary). `width` > 0: the table's names are cut from the left so that a
/// line fits in that many columns.
void write_stats_text(std::ostream& os, const std::vector<recorded_trace>& traces, const trace_stats& st,
                      std::size_t width = 0, const logs_listing& listing = {});
/// One row per group (and "all"); with a breakdown, a `model` column ("*" for the group's total,
/// then a row per model); empty fields where there are no samples.
void write_stats_csv(std::ostream& os, const trace_stats& st);
document stats_document(const std::vector<recorded_trace>& traces, const trace_stats& st, const logs_listing& listing = {});
std::string stats_to_json(const std::vector<recorded_trace>& traces, const trace_stats& st, int indent = 2,
                          const logs_listing& listing = {});

} // namespace loopcast

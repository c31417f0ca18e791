// loopcast — the reports of `loopcast fit` and `loopcast fit-workload`: presets (docs/presets.md)
// fitted to logs, with what they were fitted on.
#pragma once

#include "loopcast/report/document.hpp"
#include "loopcast/speed_fit.hpp"
#include "loopcast/trace.hpp"
#include "loopcast/workload_fit.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace loopcast {

/// `loopcast fit`: a local target preset whose speed is the fitted model (loadable with --on).
struct fit_preset_options {
  std::int64_t context_window_tokens = 0;  ///< the model's window (0: derived from the logs, with a note)
  bool noise = true;                       ///< write the fitted residual noise (speed.noise)
};
document fit_document(const speed_fit& f, const std::string& name, const std::vector<recorded_trace>& traces,
                      const fit_preset_options& opt = {});
std::string fit_to_target_json(const speed_fit& f, const std::string& name, const std::vector<recorded_trace>& traces,
                               const fit_preset_options& opt = {});

/// `loopcast fit-workload`: a workload preset with what it was fitted on. `sources` are the logs as
/// the user named them (files or folders).
document workload_fit_document(const workload_fit& f, const std::vector<std::string>& sources);
std::string workload_fit_to_json(const workload_fit& f, const std::vector<std::string>& sources);

} // namespace loopcast

// loopcast — umbrella header: the header-only model (core.hpp) and the compiled library (presets,
// workloads, log import, replay, Monte Carlo, sweeps, solve, validation, reports).
#pragma once

#include "loopcast/core.hpp"

#include "loopcast/compare.hpp"
#include "loopcast/context.hpp"
#include "loopcast/distributions.hpp"
#include "loopcast/forecast.hpp"
#include "loopcast/limits_inference.hpp"
#include "loopcast/metrics.hpp"
#include "loopcast/montecarlo.hpp"
#include "loopcast/presets.hpp"
#include "loopcast/replay.hpp"
#include "loopcast/report.hpp"
#include "loopcast/scenario.hpp"
#include "loopcast/solve.hpp"
#include "loopcast/speed_fit.hpp"
#include "loopcast/stats.hpp"
#include "loopcast/sweep.hpp"
#include "loopcast/validate.hpp"
#include "loopcast/version.hpp"
#include "loopcast/workload.hpp"
#include "loopcast/workload_fit.hpp"

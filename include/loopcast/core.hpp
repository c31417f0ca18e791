// loopcast — the model, header-only (CMake: loopcast::core).
//
// Everything a simulation needs and nothing that needs a compiled dependency: token classes,
// rate-limit buckets, the prefix cache, speed curves, prices, power, retry policies, random
// numbers, the local engine and the simulation loop. A planning tool that builds its targets
// and session scripts in code includes this header and links nothing but the standard library.
// Presets, log importers, workload generation, fits and reports are the compiled library
// (loopcast::loopcast, <loopcast/loopcast.hpp>), which includes this core.
#pragma once

#include "loopcast/budget.hpp"
#include "loopcast/engine.hpp"
#include "loopcast/errors.hpp"
#include "loopcast/fields.hpp"
#include "loopcast/interrupt.hpp"
#include "loopcast/limits/level_curve.hpp"
#include "loopcast/names.hpp"
#include "loopcast/plan.hpp"
#include "loopcast/power.hpp"
#include "loopcast/prefix_cache.hpp"
#include "loopcast/prices.hpp"
#include "loopcast/random.hpp"
#include "loopcast/rate_limits.hpp"
#include "loopcast/results.hpp"
#include "loopcast/retry.hpp"
#include "loopcast/session.hpp"
#include "loopcast/simulation.hpp"
#include "loopcast/simulator.hpp"
#include "loopcast/speed.hpp"
#include "loopcast/target.hpp"
#include "loopcast/tokens.hpp"

// loopcast — every report: each command's writers (text, JSON, CSV) and documents are declared in
// their own header under report/; this header includes them all. The JSON schema and the CSV
// columns are documented in docs/output.md.
#pragma once

#include "loopcast/report/catalogue.hpp"
#include "loopcast/report/compare.hpp"
#include "loopcast/report/document.hpp"
#include "loopcast/report/fit.hpp"
#include "loopcast/report/forecast.hpp"
#include "loopcast/report/logs.hpp"
#include "loopcast/report/montecarlo.hpp"
#include "loopcast/report/replay.hpp"
#include "loopcast/report/run.hpp"
#include "loopcast/report/solve.hpp"
#include "loopcast/report/stats.hpp"
#include "loopcast/report/sweep.hpp"
#include "loopcast/report/validate.hpp"

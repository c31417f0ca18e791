"""loopcast: simulate agentic LLM sessions against providers' rate limits, prices and speed.

The Python package is a thin layer over the C++ library (``loopcast._core``): presets are the
JSON documents of ``models/`` (validated by the same strict loader as the command line), runs
happen entirely in C++, and results come back as numpy structured arrays that view the C++
records without copying.

>>> import loopcast
>>> run = loopcast.run("reference")                 # docs/model.md §9: Cerebras vs a local GPU
>>> run["cloud"].summary["first_429"]["bucket"]
'total_tpm'
>>> run["cloud"].timeline.to_pandas()               # one row per request attempt

Everything the command line does is here: :func:`run`, :func:`monte_carlo`, :func:`sweep` (also on
a Dask cluster), :func:`solve`, :func:`compare`, :func:`import_logs`, :func:`stats`, :func:`plans`, :func:`replay`, :func:`fit`,
:func:`import_prices`, :func:`infer_limits`, :func:`infer_plan_caps` and :mod:`loopcast.plot`.
"""

from loopcast import _core
from loopcast._core import ConfigError, Error, SimulationError, TraceError
from loopcast._presets import Client, Option, Preset, Route, Scenario, Target, Workload, load_preset, models_dir, presets
from loopcast._results import OptionResult, Run, Table
from loopcast._run import compare, monte_carlo, run, solve
from loopcast._logs import Logs, backtest, fit, fit_workload, forecast, import_logs, plans, replay, stats, validate
from loopcast._sweep import Sweep, sweep
from loopcast._tables import Report
from loopcast._catalogue import backtest_plan, fit_plan, import_prices, infer_limits, infer_plan_caps
from loopcast._progress import show_progress

__version__ = _core.__version__

__all__ = [
    "Client", "ConfigError", "compare", "Error", "Logs", "Option", "OptionResult", "Preset", "Report", "Route", "Run",
    "Scenario",
    "SimulationError", "Sweep", "Table", "Target", "TraceError", "Workload", "backtest", "backtest_plan", "fit", "fit_plan", "fit_workload", "forecast", "import_logs", "import_prices", "infer_limits", "infer_plan_caps", "load_preset",
    "models_dir", "monte_carlo", "plans", "presets", "replay", "run", "show_progress", "solve", "stats", "sweep", "validate",
    "__version__",
]

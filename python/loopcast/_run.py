"""Running scenarios from Python: once, or over many seeds in one call."""

from __future__ import annotations

import math
import os
from typing import Any, Iterable

import numpy as np

from loopcast import _core, _progress
from loopcast._presets import Client, Preset, Scenario, Target, Workload, models_dir
from loopcast._results import Run, Table
from loopcast._tables import Report

__all__ = ["run", "monte_carlo", "solve", "compare"]


def _preset(kind: type, value: "Preset | str | dict", models: str | os.PathLike | None) -> Preset:
    """A preset of `kind` given as itself, a dict, or a preset name / .json path."""
    if isinstance(value, kind):
        return value
    if isinstance(value, Preset):
        raise TypeError(f"expected a loopcast.{kind.__name__}, found a loopcast.{type(value).__name__}")
    if isinstance(value, dict):
        return kind(value, models=None if models is None else os.fspath(models))
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"expected a loopcast.{kind.__name__}, a dict, or a preset name or .json path, "
                        f"found {type(value).__name__}")
    return kind.load(value, models=models)


def _whole(name: str, value: Any, lo: int, hi: int) -> int:
    """A whole number in [lo, hi]: bools, floats and out-of-range values are refused, never wrapped or floored."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be a whole number, found {value!r}")
    if not lo <= int(value) <= hi:
        raise ValueError(f"{name} must be from {lo} to {hi}, found {value}")
    return int(value)


def _real(name: str, value: Any, lo: float, hi: float) -> float:
    """A finite number in [lo, hi]."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name} must be a number, found {value!r}")
    v = float(value)
    if not math.isfinite(v) or not lo <= v <= hi:
        raise ValueError(f"{name} must be a finite number from {lo} to {hi}, found {value}")
    return v


def _scenario(scenario: "Scenario | str | dict", models: str | os.PathLike | None) -> Scenario:
    return _preset(Scenario, scenario, models)


def run(scenario: "Scenario | str | dict" = "reference", *, seed: int | None = None, timeline: bool = True,
        models: str | os.PathLike | None = None) -> Run:
    """Simulates a scenario (a :class:`Scenario`, a preset name, a ``.json`` path or a dict).

    ``seed`` replaces the scenario's seed; ``timeline=False`` skips the per-attempt records (faster).
    """
    s = _scenario(scenario, models)
    if seed is not None:
        seed = _whole("seed", seed, 0, 2**64 - 1)
    return Run(_core.run_scenario(s._text, s._file, models_dir(models), seed, timeline))


def monte_carlo(scenario: "Scenario | str | dict", seeds: "Iterable[int] | int | None" = None, *,
                precision: float | None = None, metric: str = "usd_per_task", max_seeds: int = 10000,
                confidence: float = 0.95, horizon_s: float = 3600.0, threads: int = 1,
                models: str | os.PathLike | None = None) -> "MonteCarlo":
    """Runs the scenario once per seed, entirely in C++, and returns one row per seed and option.

    ``seeds`` is an iterable of seeds or a count ``n``: the scenario's seed and the n − 1 after it,
    as ``loopcast montecarlo --seeds n`` runs them (``summary["first_seed"]`` is the first seed run;
    ``summary["seed_list"]`` lists them when they are not consecutive). Or give ``precision``
    instead: seeds scenario.seed, +1, … are added in doubling batches until the mean of ``metric``
    (``usd_per_task``, ``stall_share``, ``tasks_per_hour`` or ``wall_s``) is known within
    ±precision (relative) for every option, or ``max_seeds`` is reached. ``threads`` shares the
    seeds among threads (0: one per core); the rows do not depend on it.

    Columns: ``seed``, ``option`` (its index; ``label`` in pandas), ``first_429_s`` (NaN: none),
    ``first_refused_s`` (a request no bucket can ever admit; NaN: none), ``wall_s``, ``stall_s``, ``stall_share``, ``cost_usd``, ``usd_per_task`` (NaN: no task done),
    ``tasks_per_hour``, ``output_tps``, ``effective_tps_p50`` (NaN: no request kept), ``ttft_p50_s``
    (NaN: none served), ``sessions``,
    ``completed``, ``rate_limited``, ``attempts``, ``sessions_died``, ``requests_served``,
    ``cut_off`` (the scenario's ``attempt_budget`` stopped the run).
    ``.summary`` holds, per option, P10/P50/P90 with confidence intervals (docs/output.md);
    ``.options_table()`` the probabilities, ``.quantiles()`` the metrics, as DataFrames.
    """
    s = _scenario(scenario, models)
    text, mdir = s._text, models_dir(models)
    confidence = _real("confidence", confidence, 0.5, 0.9999)
    horizon_s = _real("horizon_s", horizon_s, 1e-3, 1e9)
    threads = _whole("threads", threads, 0, 1024)
    max_seeds = _whole("max_seeds", max_seeds, 2, 10_000_000)
    if precision is not None:
        precision = _real("precision", precision, 1e-6, 10.0)
        if seeds is not None:
            raise TypeError("give seeds= or precision=, not both")
        with _progress.bars():
            rows, summary = _core.run_montecarlo(text, s._file, mdir, 100, float(precision), metric, max_seeds,
                                                 confidence, horizon_s, threads)
    else:
        if seeds is None:
            raise TypeError("monte_carlo() needs seeds= (a count or an iterable) or precision=")
        if isinstance(seeds, (int, np.integer)) and not isinstance(seeds, bool):
            first = int(s._data.get("seed", 42))
            seeds_arr = first + np.arange(_whole("seeds", seeds, 1, 10_000_000), dtype=np.uint64)
        else:
            seeds_arr = np.asarray([_whole("a seed", x, 0, 2**64 - 1) for x in seeds], dtype=np.uint64)
            if len(seeds_arr) == 0:
                raise ValueError("seeds: an empty list: give at least one seed")
        with _progress.bars():
            rows, summary = _core.run_seeds(text, s._file, mdir, seeds_arr, threads, confidence, horizon_s)
        summary["first_seed"] = int(seeds_arr[0])  # what ran, not the scenario's own seed
        if not np.array_equal(seeds_arr, seeds_arr[0] + np.arange(len(seeds_arr), dtype=np.uint64)):
            summary["seed_list"] = [int(x) for x in seeds_arr]
    return MonteCarlo(rows, [o.label for o in s.options], summary)


class MonteCarlo(Table):
    """Rows of a Monte Carlo (one per seed and option) and its per-option ``summary``."""

    def __init__(self, rows: np.ndarray, labels: list[str], summary: dict) -> None:
        super().__init__(rows, "monte carlo")
        self.labels = labels
        self.summary = summary

    def to_pandas(self):
        df = super().to_pandas()
        df.insert(2, "label", np.array(self.labels, dtype=object)[df["option"].to_numpy().astype(np.int64)])
        return df

    def _repr_html_(self) -> str:
        return self.quantiles()._repr_html_()

    def options_table(self):
        """One row per option: P(429 within the horizon) (a request refused outright counts: the provider
        answers it with a 429), P(refused), P(session dies) and ``p_429_per_hour`` (the share of hours of
        operation with at least one 429: a team's working hours with arrivals, else every hour of the
        run), each with its interval (``_lo``, ``_hi``); ``stall_hours_per_hour`` (hours lost to waiting
        per hour of operation), the runs and the runs cut off."""
        import pandas as pd
        out = []
        for o in self.summary["options"]:
            row = {"label": o["label"], "runs": o["runs"], "runs_cut_off": o["runs_cut_off"]}
            for key, name in (("p_429_within_horizon", "p_429"), ("p_refused_within_horizon", "p_refused"),
                              ("p_session_dies", "p_session_dies"), ("p_429_per_hour", "p_429_per_hour")):
                for part in ("value", "lo", "hi"):
                    v = o[key][part]
                    row[name if part == "value" else f"{name}_{part}"] = np.nan if v is None else v
            v = o["stall_hours_per_hour"]
            row["stall_hours_per_hour"] = np.nan if v is None else v
            out.append(row)
        return pd.DataFrame(out)

    def quantiles(self):
        """The summary as a pandas DataFrame: one row per option and metric, P10/P50/P90 with bounds."""
        import pandas as pd
        out = []
        for o in self.summary["options"]:
            for m in ("first_429_s", "stall_share", "usd_per_task", "tasks_per_hour", "wall_s"):
                d = o[m]
                row = {"label": o["label"], "metric": m, "count": d["count"]}
                for q in ("p10", "p50", "p90", "mean"):
                    for part in ("value", "lo", "hi"):
                        v = d[q][part]
                        v = np.nan if v is None else (np.inf if v == "never" else v)
                        row[f"{q}" if part == "value" else f"{q}_{part}"] = v
                out.append(row)
        return pd.DataFrame(out)


def solve(question: str, scenario: "Scenario | str | dict", *, models: str | os.PathLike | None = None,
          **options) -> dict:
    """Answers an inverse question by searching over the simulator (docs/output.md, ``loopcast solve``).

    ``question`` is ``"max-agents"`` (options ``p429``, ``horizon_s``, ``max_agents``),
    ``"min-limit"`` (``stall_share``, ``bucket``, ``tolerance``), ``"cheapest"`` (``stall_share``)
    or ``"break-even"`` (``local``, ``cloud``, ``hardware_usd``, ``lifetime_hours``); all take
    ``seeds`` (per evaluation), ``threads`` and, except the last two, ``option`` (a label).
    Returns ``{"answer", "answer_text", "found", "bracket", "steps", "notes", …}``; ``.to_pandas()`` gives one row per step.
    """
    s = _scenario(scenario, models)
    with _progress.bars():
        return Report("solve", _core.solve(question, s._text, s._file, models_dir(models), options))


def compare(workload: "Workload | str | dict", on: "Iterable[Target | str | dict]", *, client: "Client | str | dict" = "opencode",
            intelligence: dict[str, float] | None = None, bar: float | None = None,
            models: str | os.PathLike | None = None, **options) -> dict:
    """Runs a task (a workload with a ``contract``) on each target: which meet the contract, and why the others fail.

    ``intelligence`` maps a target's model to a score and ``bar`` is the gate; ``options`` are
    ``sessions``, ``stagger_s``, ``seeds``, ``seed``, ``threads``. Returns the JSON of
    ``loopcast compare --json`` (docs/output.md) as a dict; ``.to_pandas()`` gives one row per option.
    """
    w = _preset(Workload, workload, models)
    c = _preset(Client, client, models)
    targets = [_preset(Target, t, models) for t in on]
    opts = dict(options, intelligence=intelligence or {}, bar=bar)
    with _progress.bars():
        document = _core.compare(w._text, w._file, models_dir(models),
                                 [(t._text, t._file) for t in targets],
                                 c._text, opts)
    return Report("compare", document)

"""Running scenarios from Python: once, or over many seeds in one call."""

from __future__ import annotations

import json
import os
from typing import Iterable

import numpy as np

from loopcast import _core
from loopcast._presets import Scenario, models_dir
from loopcast._results import Run, Table

__all__ = ["run", "monte_carlo"]


def _scenario(scenario: "Scenario | str | dict", models: str | os.PathLike | None) -> Scenario:
    if isinstance(scenario, Scenario):
        return scenario
    if isinstance(scenario, dict):
        return Scenario(scenario, models=None if models is None else os.fspath(models))
    return Scenario.load(scenario, models=models)


def run(scenario: "Scenario | str | dict" = "reference", *, seed: int | None = None, timeline: bool = True,
        models: str | os.PathLike | None = None) -> Run:
    """Simulates a scenario (a :class:`Scenario`, a preset name, a ``.json`` path or a dict).

    ``seed`` replaces the scenario's seed; ``timeline=False`` skips the per-attempt records (faster).
    """
    s = _scenario(scenario, models)
    return Run(_core.run_scenario(json.dumps(s.to_dict()), s._file, models_dir(models), seed, timeline))


def monte_carlo(scenario: "Scenario | str | dict", seeds: "Iterable[int] | int", *,
                models: str | os.PathLike | None = None) -> Table:
    """Runs the scenario once per seed, entirely in C++, and returns one row per seed and option.

    ``seeds`` is an iterable of seeds or a count (seeds 0 … n−1). Columns: ``seed``, ``option``
    (its index; ``label`` in pandas), ``first_429_s`` (NaN: none), ``wall_s``, ``stall_s``,
    ``stall_share``, ``cost_usd``, ``effective_tps_p50``, ``rate_limited``, ``sessions_died``,
    ``requests_served``.
    """
    s = _scenario(scenario, models)
    seeds_arr = np.arange(seeds, dtype=np.uint64) if isinstance(seeds, int) else np.asarray(list(seeds), dtype=np.uint64)
    rows = _core.run_seeds(json.dumps(s.to_dict()), s._file, models_dir(models), seeds_arr)
    return _MonteCarlo(rows, [o.label for o in s.options])


class _MonteCarlo(Table):
    def __init__(self, rows: np.ndarray, labels: list[str]) -> None:
        super().__init__(rows, "monte carlo")
        self.labels = labels

    def to_pandas(self):
        df = super().to_pandas()
        df.insert(2, "label", np.array(self.labels, dtype=object)[df["option"].to_numpy().astype(np.int64)])
        return df

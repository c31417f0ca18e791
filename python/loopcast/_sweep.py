"""Sweeps: a grid over preset parameters × seeds, on local threads or on a Dask cluster."""

from __future__ import annotations

import json
import os
from typing import Any

import numpy as np

from loopcast import _core, _progress
from loopcast._presets import _dumps, models_dir
from loopcast._results import Table

__all__ = ["sweep", "Sweep"]


def _spec(spec: "str | os.PathLike | dict") -> tuple[str, str]:
    if isinstance(spec, dict):
        return _dumps(spec), "<python>"
    path = os.fspath(spec)
    with open(path, encoding="utf-8") as f:
        return f.read(), path


def _point_rows(text: str, file: str, mdir: str, point: int) -> np.ndarray:
    """One grid point's rows, computed where this runs (a Dask worker). Returns an owning copy."""
    return np.array(_core.run_sweep_point(text, file, mdir, point, 1))


def sweep(spec: "str | os.PathLike | dict", *, threads: int = 0, client: Any = None,
          models: str | os.PathLike | None = None) -> "Sweep":
    """Runs a sweep (a file path or a dict in the format of docs/sweeps.md).

    Without ``client`` the grid runs in C++ on ``threads`` threads (0: one per core). With a Dask
    ``distributed.Client`` each grid point is one task on the cluster's workers (which must see
    the same presets directory); the rows are the same either way, in the same order.
    """
    text, file = _spec(spec)
    mdir = models_dir(models)
    name, paths, points, seeds, base = _core.sweep_grid(text, file, mdir)
    if client is None:
        with _progress.bars():
            rows, summary = _core.run_sweep(text, file, mdir, threads)
    else:
        futures = client.map(_point_rows, [text] * len(points), [file] * len(points), [mdir] * len(points),
                             range(len(points)), pure=False)
        parts = client.gather(futures)
        # Pickling and np.concatenate drop the C++ struct's padding from the dtype: copy the parts
        # into an array with the C++ layout (structured assignment goes field by field).
        rows = np.empty(sum(len(p) for p in parts), dtype=_core.run_summary_dtype())
        at = 0
        for p in parts:
            rows[at:at + len(p)] = p
            at += len(p)
        summary = _core.sweep_summary(text, file, mdir, rows)
    return Sweep(rows, name, paths, points, seeds, summary, base)


class Sweep(Table):
    """Rows of a sweep (point-major, then seed, then option) and its per-point ``summary``.

    ``to_pandas()`` adds ``point`` (1-based), one column per swept parameter (named by its JSON
    pointer) and ``label``.
    """

    def __init__(self, rows: np.ndarray, name: str, paths: list[str], points: list, seeds: int, summary: dict,
                 base_json: str) -> None:
        super().__init__(rows, "sweep " + name)
        self.name = name
        self.paths = list(paths)
        self.points = [[json.loads(v) for v in values] for values, _ in points]
        self._labels = [list(labels) for _, labels in points]
        self.seeds = seeds
        self.summary = summary
        self.base = json.loads(base_json)

    def to_pandas(self):
        df = super().to_pandas()
        point, label, values = [], [], [[] for _ in self.paths]
        for p, labels in enumerate(self._labels):
            for _ in range(self.seeds):
                for o, lab in enumerate(labels):
                    point.append(p + 1)
                    label.append(lab)
                    for i, v in enumerate(self.points[p]):
                        values[i].append(v)
        df.insert(0, "point", np.asarray(point, dtype=np.int64))
        for i, path in enumerate(self.paths):
            df.insert(1 + i, path, values[i])
        df.insert(1 + len(self.paths) + 2, "label", np.asarray(label, dtype=object))
        return df

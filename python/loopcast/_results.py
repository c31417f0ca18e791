"""Results: numpy structured arrays viewing the C++ records, and pandas on request."""

from __future__ import annotations

from functools import cached_property
from typing import Any, Iterator

import numpy as np

from loopcast import _core

__all__ = ["Table", "OptionResult", "Run"]

_CATEGORIES = {"status": _core.ATTEMPT_STATUS, "outcome": _core.SESSION_OUTCOME}


class Table:
    """A numpy structured array (``.array``, a view of the C++ records) with ``.to_pandas()``.

    Coded columns (``status``, ``outcome``) hold small integers in the array and become strings
    in pandas; ``refused_by`` (a bucket index) becomes the bucket's name.
    """

    def __init__(self, array: np.ndarray, name: str, bucket_names: list[str] | None = None) -> None:
        self.array = array
        self.name = name
        self._buckets = bucket_names or []

    def __len__(self) -> int:
        return len(self.array)

    def __getitem__(self, field: str) -> np.ndarray:
        return self.array[field]

    @property
    def columns(self) -> tuple[str, ...]:
        """The field names."""
        return self.array.dtype.names

    def to_pandas(self):
        """A pandas DataFrame (pandas is imported only now)."""
        import pandas as pd

        df = pd.DataFrame({name: self.array[name] for name in self.array.dtype.names})
        for col, labels in _CATEGORIES.items():
            if col in df:
                df[col] = pd.Categorical.from_codes(df[col].astype("int64"), categories=list(labels))
        if "refused_by" in df:  # a category ("" when not refused): no Python object per row
            df["refused_by"] = pd.Categorical.from_codes(df["refused_by"].to_numpy().astype(np.int64) + 1,
                                                         categories=[""] + list(self._buckets))
        return df

    def __repr__(self) -> str:
        return f"<loopcast.Table {self.name}: {len(self)} rows, columns {', '.join(self.columns)}>"

    def _repr_html_(self) -> str:
        return self.to_pandas()._repr_html_()


class OptionResult:
    """What one option (a target with a client) did: summary, timeline, sessions, bucket levels.

    Every key of :attr:`summary` is also an attribute (``cost_usd``, ``first_429``,
    ``effective_tps`` …), except ``requests`` and ``sessions``, which are the tables of served
    requests and sessions (their counts: ``len(result.requests)``, ``result.summary["requests"]``).
    """

    def __init__(self, run: "Run", index: int) -> None:
        self._run = run
        self.index = index
        self.label: str = run._handle.option_label(index)

    @property
    def summary(self) -> dict[str, Any]:
        """This option's part of the JSON result (docs/output.md)."""
        return self._run.summary["options"][self.index]

    @property
    def bucket_names(self) -> list[str]:
        """The names of the target's rate-limit buckets."""
        return self._run._handle.bucket_names(self.index)

    @property
    def context_window(self) -> int:
        """The target's context window in tokens: a request's prompt and output must fit in it."""
        return self._run._handle.context_window(self.index)

    @property
    def bucket_limit(self) -> dict[str, float]:
        """Each bucket's limit, by name."""
        return dict(zip(self.bucket_names, self._run._handle.bucket_limits(self.index)))

    def route_shares(self):
        """A route's targets as a pandas DataFrame, one row each: requests served and their share,
        tokens, 429s, attempts spilled to it, stalls, cooldowns, cost and lost cache (docs/routing.md);
        ``None`` for an option on one target."""
        route = self.summary["route"]
        if route is None:
            return None
        import pandas as pd

        rows = []
        for t in route["targets"]:
            row = {k: v for k, v in t.items() if k != "tokens"}
            row.update({f"tokens_{k}": v for k, v in t["tokens"].items()})
            rows.append(row)
        return pd.DataFrame(rows).set_index("target")

    @property
    def timeline(self) -> Table:
        """One row per request attempt (empty unless the run kept its timeline)."""
        return Table(self._run._handle.attempts(self.index), f"{self.label} timeline", self.bucket_names)

    @property
    def requests(self) -> Table:
        """One row per served request (send, first token, end, prompt, cache reads, generated)."""
        return Table(self._run._handle.requests(self.index), f"{self.label} requests")

    @property
    def sessions(self) -> Table:
        """One row per session."""
        return Table(self._run._handle.sessions(self.index), f"{self.label} sessions")

    @property
    def bucket_levels(self) -> np.ndarray:
        """Units in use of each bucket when each attempt arrived: shape (attempts, buckets), a view."""
        return self._run._handle.bucket_levels(self.index)

    def bucket_curve(self, bucket: "int | str", grid: int = 2000) -> "tuple[np.ndarray, np.ndarray]":
        """A bucket's units in use over the whole run, ``(t, used)``: just before and just after each charge and
        refund, and at ``grid`` even times between, so that lines through the points show how it drains between
        arrivals (a token bucket refills, a window resets, a sliding window forgets). Empty without a timeline."""
        names = self.bucket_names
        if isinstance(bucket, str):
            if bucket not in names:
                raise KeyError(f"{self.label} has no bucket {bucket!r}; its buckets: {', '.join(names) or 'none'}")
            bucket = names.index(bucket)
        return self._run._handle.bucket_curve(self.index, int(bucket), grid)

    def __getattr__(self, key: str) -> Any:
        # Summary fields as attributes: result.cost_usd, result.first_429, result.effective_tps …
        summary = self.summary
        if key in summary:
            return summary[key]
        raise AttributeError(f"OptionResult has no attribute {key!r}")

    def __repr__(self) -> str:
        s = self.summary
        return (f"<loopcast.OptionResult {self.label!r}: {s['requests']} requests, {s['wall_s']:.1f} s, "
                f"${s['cost_usd']:.4f}, outcome {s['outcome']}>")


class Run:
    """The result of :func:`loopcast.run` or :func:`loopcast.replay`; index it by option label."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle
        self.options = [OptionResult(self, i) for i in range(handle.option_count)]

    @cached_property
    def summary(self) -> dict[str, Any]:
        """The whole result as a dict (the JSON of ``loopcast run --json``, docs/output.md)."""
        return self._handle.summary()

    def report(self) -> str:
        """The text report of the command line."""
        return self._handle.report()

    def timeline_csv(self) -> str:
        """The per-attempt CSV of ``--timeline``."""
        return self._handle.timeline_csv()

    def script(self, session: int = 0) -> Table:
        """The requests a simulated session sent (scenario runs only)."""
        return Table(self._handle.script(session), f"session {session} script")

    def options_table(self):
        """One row per option: target, outcome, requests, 429s, the first 429, stall, wall clock and cost
        (what Jupyter shows for a run). Missing values (no 429, no price) are NaN or None, never 0."""
        import pandas as pd

        rows = []
        for o in self.options:
            s = o.summary
            f = s.get("first_429")
            rows.append({"option": o.label, "target": (s.get("target") or {}).get("name"), "outcome": s["outcome"],
                         "requests": s["requests"], "attempts": s["attempts"], "rate_limited": s["rate_limited"],
                         "first_429_request": f["request"] if f else None, "first_429_s": f["time_s"] if f else None,
                         "first_429_bucket": f["bucket"] if f else None, "stall_s": s["stall_s"], "wall_s": s["wall_s"],
                         "cost_usd": s["cost_usd"], "usd_per_hour": s.get("usd_per_hour")})
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        return self.options_table()._repr_html_()

    def to_pandas(self):
        """Every option's timeline in one DataFrame, with an ``option`` column."""
        import pandas as pd

        frames = []
        for o in self.options:
            df = o.timeline.to_pandas()
            df.insert(0, "option", o.label)
            frames.append(df)
        return pd.concat(frames, ignore_index=True)

    def __getitem__(self, key: int | str) -> OptionResult:
        if isinstance(key, int):
            return self.options[key]
        for o in self.options:
            if o.label == key:
                return o
        raise KeyError(f"no option {key!r} (options: {', '.join(o.label for o in self.options)})")

    def __iter__(self) -> Iterator[OptionResult]:
        return iter(self.options)

    def __len__(self) -> int:
        return len(self.options)

    def __repr__(self) -> str:
        return f"<loopcast.Run: {', '.join(repr(o.label) for o in self.options)}>"

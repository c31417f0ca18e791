"""Plots of a :class:`loopcast.Run` (matplotlib, imported when first used). Each returns its Axes.

* :func:`context` — the context snowball per request, split into uncached input and cache reads
* :func:`buckets` — each rate-limit bucket's level over time against its limit, 429s marked
* :func:`cost` — cumulative cost over time, one line per option (cloud vs local)
* :func:`throughput_by_context` — effective throughput P50 by context bin, per option
* :func:`dashboard` — the four on one figure
"""

from __future__ import annotations

from typing import Any

import numpy as np

from loopcast._results import OptionResult, Run

__all__ = ["context", "buckets", "cost", "throughput_by_context", "dashboard", "CONTEXT_BINS"]

#: Context bins (prompt tokens) of :func:`throughput_by_context`, as in ``loopcast stats``.
CONTEXT_BINS = ((0, 20_000, "<20K"), (20_000, 50_000, "20-50K"), (50_000, 100_000, "50-100K"), (100_000, np.inf, ">100K"))


def _axes(ax: Any):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7, 4))[1]


def _option(run: Run, option: "int | str | OptionResult") -> OptionResult:
    return option if isinstance(option, OptionResult) else run[option]


def context(run: Run, option: "int | str" = 0, session: int = 0, ax: Any = None):
    """Prompt size of each served request of one session, split into uncached input and cache reads."""
    ax = _axes(ax)
    o = _option(run, option)
    r = o.requests.array
    r = r[r["session"] == session]
    n = np.arange(1, len(r) + 1)
    cached = r["cache_read"] / 1e3
    uncached = (r["prompt"] - r["cache_read"]) / 1e3
    ax.bar(n, cached, color="#9ecae1", label="cache reads")
    ax.bar(n, uncached, bottom=cached, color="#de2d26", label="uncached input")
    ax.set_xlabel("request")
    ax.set_ylabel("prompt (thousand tokens)")
    ax.set_title(f"Context snowball — {o.label}, session {session + 1}")
    ax.legend(loc="upper left")
    return ax


def buckets(run: Run, option: "int | str" = 0, ax: Any = None):
    """Each bucket's units in use (as % of its limit) when each attempt arrived; 429s marked."""
    ax = _axes(ax)
    o = _option(run, option)
    t = o.timeline.array
    levels = o.bucket_levels
    if len(t) == 0 or levels.shape[1] == 0:
        ax.text(0.5, 0.5, "no rate limits" if levels.shape[1] == 0 else "no timeline recorded",
                ha="center", va="center", transform=ax.transAxes)
        ax.set_title(f"Rate-limit buckets — {o.label}")
        return ax
    limits = np.array([o.bucket_limit[name] for name in o.bucket_names])
    for b, name in enumerate(o.bucket_names):
        ax.step(t["t_send"], 100 * levels[:, b] / limits[b], where="post", label=name)
    refused = t["status"] == 1
    if refused.any():
        rows = np.nonzero(refused)[0]
        by = t["refused_by"][rows].astype(np.int64)
        ax.scatter(t["t_send"][rows], 100 * levels[rows, by] / limits[by], marker="x", color="black", zorder=5,
                   label="429")
    ax.axhline(100, color="grey", linestyle="--", linewidth=1)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("in use (% of limit)")
    ax.set_title(f"Rate-limit buckets — {o.label}")
    ax.legend(loc="upper left", fontsize="small")
    return ax


def cost(run: Run, ax: Any = None):
    """Cumulative cost over time for every option. Token costs accrue when a request ends; a local
    option's energy accrues evenly over its wall clock (its power draw is constant or nearly)."""
    ax = _axes(ax)
    for o in run:
        s = o.summary
        if s.get("energy_kwh") is not None and s["token_cost_usd"] == 0:
            ax.plot([0, s["wall_s"]], [0, s["cost_usd"]], label=f"{o.label} (energy)")
            continue
        t = o.timeline.array
        ok = t[t["status"] == 0]
        order = np.argsort(ok["t_end"], kind="stable")
        ax.step(np.concatenate([[0.0], ok["t_end"][order]]), np.concatenate([[0.0], np.cumsum(ok["cost_usd"][order])]),
                where="post", label=o.label)
    ax.set_xlabel("time (s)")
    ax.set_ylabel("cumulative cost (USD)")
    ax.set_title("Cost")
    ax.legend(loc="upper left")
    return ax


def _effective_by_bin(o: OptionResult) -> list[float]:
    r = o.requests.array
    d = r["t_end"] - r["t_send"]
    keep = (r["generated"] >= 50) & (d >= 0.2) & (d <= 3600)
    eff = np.where(keep, r["generated"] / np.where(d > 0, d, 1), np.nan)
    out = []
    for lo, hi, _ in CONTEXT_BINS:
        sel = keep & (r["prompt"] >= lo) & (r["prompt"] < hi)
        out.append(float(np.median(eff[sel])) if sel.any() else np.nan)
    return out


def throughput_by_context(run: Run, ax: Any = None):
    """Effective throughput P50 (DESIGN.md §8 filters) in each context bin, one bar per option."""
    ax = _axes(ax)
    width = 0.8 / max(len(run), 1)
    x = np.arange(len(CONTEXT_BINS))
    for i, o in enumerate(run):
        ax.bar(x + i * width, _effective_by_bin(o), width, label=o.label)
    ax.set_xticks(x + width * (len(run) - 1) / 2, [b[2] for b in CONTEXT_BINS])
    ax.set_xlabel("context (prompt tokens)")
    ax.set_ylabel("effective throughput P50 (tok/s)")
    ax.set_title("Speed by context")
    ax.legend()
    return ax


def dashboard(run: Run, option: "int | str" = 0):
    """The four plots for a run on one figure; returns the Figure."""
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 2, figsize=(13, 8))
    context(run, option, ax=axes[0, 0])
    buckets(run, option, ax=axes[0, 1])
    cost(run, ax=axes[1, 0])
    throughput_by_context(run, ax=axes[1, 1])
    fig.tight_layout()
    return fig

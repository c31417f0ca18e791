"""Plots of a :class:`loopcast.Run` (matplotlib, imported when first used). Each returns its Axes.

* :func:`context` — the context snowball per request, split into uncached input and cache reads
* :func:`buckets` — each rate-limit bucket's level over time against its limit, 429s marked
* :func:`cost` — cumulative cost over time, one line per option (cloud vs local)
* :func:`throughput_by_context` — effective throughput P50 by context bin, per option
* :func:`dashboard` — the four on one figure
* :func:`monte_carlo` — a metric's distribution over the seeds (an ECDF per option), the P50 with its interval
* :func:`sweep` — a metric's median per grid point against one swept parameter, one line per option
* :func:`validation` — what :func:`loopcast.validate` measured (per-log errors, or KS per workload measure) against the targets
* :func:`plans` — what :func:`loopcast.plans` found: $ a month per option, coloured by its waits for resets
* :func:`plan_waits` — one option's waits for resets on a calendar: a bar per day for the hours it waited
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from loopcast import _core
from loopcast._results import OptionResult, Run

__all__ = ["context", "buckets", "cost", "throughput_by_context", "dashboard", "monte_carlo", "sweep", "validation",
           "plans", "plan_waits", "CONTEXT_BINS"]

_METRIC_LABELS = {"usd_per_task": "$ per task", "stall_share": "stall share", "tasks_per_hour": "tasks per hour",
                  "wall_s": "wall clock (s)", "first_429_s": "time to first 429 (s)"}


def _value(x: Any) -> float:
    return np.nan if x is None else (np.inf if x == "never" else float(x))

#: Context bins (prompt tokens) of :func:`throughput_by_context`, as in ``loopcast stats``.
CONTEXT_BINS = ((0, 20_000, "<20K"), (20_000, 50_000, "20-50K"), (50_000, 100_000, "50-100K"), (100_000, np.inf, ">100K"))


def _axes(ax: Any):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=(7, 4))[1]


def _start(run: Run) -> "float | None":
    """The Unix time of t = 0 for a replay of logs with clock times (its plots use clock time);
    None for a scenario (seconds from its start) or logs with relative times."""
    if not isinstance(run.summary, dict) or "recorded" not in run.summary:
        return None
    starts = [o.summary.get("start_unix_s") for o in run]
    return starts[0] if starts and starts[0] is not None else None


def _clock(start: "float | None", t: Any) -> Any:
    """Seconds as UTC clock times (numpy datetime64, ms) from `start`, or as they are without one."""
    t = np.asarray(t, dtype=float)
    return t if start is None else np.round((start + t) * 1e3).astype("int64").astype("datetime64[ms]")


def _time_axis(ax: Any, start: "float | None") -> None:
    ax.set_xlabel("time (s)" if start is None else "time (UTC)")
    if start is not None:
        for label in ax.get_xticklabels():
            label.set_rotation(30)
            label.set_horizontalalignment("right")


def _legend_outside(ax: Any) -> None:
    """The legend to the right of the plotting area: a legend must never hide data."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize="small", borderaxespad=0)


def _option(run: Run, option: "int | str | OptionResult") -> OptionResult:
    return option if isinstance(option, OptionResult) else run[option]


def context(run: Run, option: "int | str" = 0, session: int = 0, ax: Any = None):
    """Prompt size of each served request of one session, split into uncached input and cache reads, under
    the target's context window; a session that did not complete is marked where it stopped."""
    ax = _axes(ax)
    o = _option(run, option)
    r = o.requests.array
    r = r[r["session"] == session]
    n = np.arange(1, len(r) + 1)
    cached = r["cache_read"] / 1e3
    uncached = (r["prompt"] - r["cache_read"]) / 1e3
    ax.bar(n, cached, color="#9ecae1", label="cache reads")
    ax.bar(n, uncached, bottom=cached, color="#de2d26", label="uncached input")
    window = o.context_window
    ax.axhline(window / 1e3, color="grey", linestyle=":", linewidth=1, label=f"context window ({window:,} tokens)")
    s = o.sessions.array[session]
    outcome = _core.SESSION_OUTCOME[int(s["outcome"])]
    if outcome != "completed":
        stop = int(s["requests_served"]) + 1
        ax.axvline(stop, color="black", linestyle="--", linewidth=1.2,
                   label=f"stopped at request {stop}: {outcome.replace('_', ' ')}")
    ax.set_xlabel("request")
    ax.set_ylabel("prompt (thousand tokens)")
    ax.set_title(f"Context snowball — {o.label}, session {session + 1}")
    _legend_outside(ax)
    return ax


def _bucket_notes(run: Run, o: OptionResult, limits: Any, refused: Any, levels: Any) -> list[str]:
    """Why a bucket's level goes above 100% (its charging or oversize rule) and why a 429 is drawn below 100%."""
    notes = []
    rules = run._handle.bucket_rules(o.index)
    for b, name in enumerate(o.bucket_names):
        _, used = o.bucket_curve(b)
        if len(used) == 0 or not (np.max(used) > limits[b] * (1 + 1e-9)):
            continue
        charging, oversize = rules[b]
        why = []
        if charging in ("reserve", "reserve_then_refund"):
            why.append("max_tokens is reserved at admission (refunded at completion)" if charging == "reserve_then_refund"
                       else "max_tokens is reserved at admission")
        if charging == "on_completion":
            why.append("output is charged when the request ends, however full the bucket")
        if oversize == "debt":
            why.append("a request larger than the bucket is admitted into debt once it is full")
        notes.append(f"{name} above 100%: " + ("; ".join(why) if why else "a charge at completion"))
    if refused.any():
        rows = np.nonzero(refused)[0]
        by = o.timeline.array["refused_by"][rows].astype(np.int64)
        if np.any(levels[rows, by] < limits[by]):
            notes.append("429s below 100%: the request's own charge would have passed the limit")
    return notes


def buckets(run: Run, option: "int | str" = 0, ax: Any = None):
    """Each bucket's units in use (as % of its limit) over the run — draining between arrivals, jumping at each
    charge and refund (:meth:`OptionResult.bucket_curve`) — with each 429 marked at the level it found."""
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
    start = _start(run)
    for b, name in enumerate(o.bucket_names):
        ct, used = o.bucket_curve(b)
        ax.plot(_clock(start, ct), 100 * used / limits[b], label=name, linewidth=1)
    refused = t["status"] == 1
    if refused.any():
        rows = np.nonzero(refused)[0]
        by = t["refused_by"][rows].astype(np.int64)
        ax.scatter(_clock(start, t["t_send"][rows]), 100 * levels[rows, by] / limits[by], marker="x", color="black",
                   zorder=5, label="429")
    ax.axhline(100, color="grey", linestyle="--", linewidth=1)
    notes = _bucket_notes(run, o, limits, refused, levels)
    if notes:  # under the axes: why a level passes 100% and why a 429 can come below it
        ax.text(0, -0.16, "\n".join(notes), transform=ax.transAxes, va="top", ha="left", fontsize="small")
    _time_axis(ax, start)
    ax.set_ylabel("in use (% of limit)")
    ax.set_title(f"Rate-limit buckets — {o.label}")
    # Outside the plotting area: a legend must never hide the 429 markers.
    _legend_outside(ax)
    return ax


def cost(run: Run, ax: Any = None):
    """Cumulative cost over time for every option. Token costs accrue when a request ends; a local
    option's energy accrues evenly over its wall clock (its power draw is constant or nearly), and
    so does a plan's share of its monthly fee (the share the run's usage takes of what the month
    allows; docs/plans.md). A replay marks what the recorded sessions cost, at the end of their
    recorded wall clock. On a route, the requests a later target served are marked on its line.
    A replay of logs with clock times is drawn in UTC clock time, a scenario in seconds."""
    ax = _axes(ax)
    start = _start(run)
    for o in run:
        s = o.summary
        if s.get("plan"):
            ax.plot(_clock(start, [0, s["wall_s"]]), [0, s["cost_usd"]], linestyle="--",
                    label=f"{o.label} (share of the ${s['plan']['monthly_fee_usd']:g} monthly fee)")
            continue
        if s.get("energy_kwh") is not None and s["token_cost_usd"] == 0:
            ax.plot(_clock(start, [0, s["wall_s"]]), [0, s["cost_usd"]], label=f"{o.label} (energy)")
            continue
        t = o.timeline.array
        ok = t[t["status"] == 0]
        order = np.argsort(ok["t_end"], kind="stable")
        line, = ax.step(_clock(start, np.concatenate([[0.0], ok["t_end"][order]])),
                        np.concatenate([[0.0], np.cumsum(ok["cost_usd"][order])]), where="post", label=o.label)
        route = s.get("route")
        if route:  # which target served each request: a marker per target after the first
            served_by = ok["target"][order]
            cum = np.cumsum(ok["cost_usd"][order])
            for k, entry in enumerate(route["targets"][1:], start=1):
                sel = served_by == k
                if sel.any():
                    ax.scatter(_clock(start, ok["t_end"][order][sel]), cum[sel], marker="^", s=18, color=line.get_color(),
                               zorder=3, label=f"{o.label}: served by {entry['target']}")
    # A replay: what the recorded sessions cost, at the end of their recorded wall clock.
    rec = run.summary.get("recorded") if isinstance(run.summary, dict) else None
    if rec and rec.get("cost_usd") is not None and rec.get("wall_s") is not None:
        partial = " (partial)" if rec.get("cost_partial") else ""
        ax.scatter(_clock(start, [rec["wall_s"]]), [rec["cost_usd"]], marker="*", s=150, color="black", zorder=3,
                   label=f"recorded: ${rec['cost_usd']:.2f}{partial} in {rec['wall_s']:.0f} s")
    _time_axis(ax, start)
    ax.set_ylabel("cumulative cost (USD)")
    ax.set_title("Cost")
    _legend_outside(ax)
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
    """Effective throughput P50 (docs/model.md §8 filters) in each context bin, one bar per option."""
    ax = _axes(ax)
    width = 0.8 / max(len(run), 1)
    x = np.arange(len(CONTEXT_BINS))
    for i, o in enumerate(run):
        ax.bar(x + i * width, _effective_by_bin(o), width, label=o.label)
    ax.set_xticks(x + width * (len(run) - 1) / 2, [b[2] for b in CONTEXT_BINS])
    ax.set_xlabel("context (prompt tokens)")
    ax.set_ylabel("effective throughput P50 (tok/s)")
    ax.set_title("Speed by context")
    _legend_outside(ax)
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


def monte_carlo(mc: Any, metric: str = "usd_per_task", ax: Any = None):
    """The distribution of ``metric`` over the seeds, one empirical CDF per option, its P50 marked
    with the P50's confidence interval.

    ``mc`` is what :func:`loopcast.monte_carlo` returns; ``metric`` one of usd_per_task,
    stall_share, tasks_per_hour, wall_s, first_429_s. Runs without a value (no 429, no completed
    task) are left out of the curve, so it ends below 1 by their share.
    """
    ax = _axes(ax)
    rows = mc.array
    for i, o in enumerate(mc.summary["options"]):
        values = rows[metric][rows["option"] == i].astype(float)
        n = len(values)
        finite = np.sort(values[np.isfinite(values)])
        if n == 0 or len(finite) == 0:
            continue
        line, = ax.step(np.concatenate([[finite[0]], finite]), np.arange(len(finite) + 1) / n, where="post",
                        label=o["label"])
        p50 = o[metric]["p50"]
        mid, lo, hi = _value(p50["value"]), _value(p50["lo"]), _value(p50["hi"])
        if np.isfinite(mid):
            ax.errorbar([mid], [0.5], xerr=[[max(0.0, mid - lo) if np.isfinite(lo) else 0],
                                            [max(0.0, hi - mid) if np.isfinite(hi) else 0]],
                        fmt="o", color=line.get_color(), capsize=5)
    ax.axhline(0.5, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel(_METRIC_LABELS.get(metric, metric))
    ax.set_ylabel("share of seeds")
    ax.set_ylim(0, 1.02)
    ax.set_title(f"{_METRIC_LABELS.get(metric, metric)} over {mc.summary['seeds']} seeds "
                 f"(P50 with its {100 * mc.summary['confidence']:.0f}% interval)")
    _legend_outside(ax)
    return ax


def sweep(sw: Any, x: str | None = None, metric: str = "tasks_per_hour", ax: Any = None):
    """Median of ``metric`` (with its interval as a band) against the swept parameter ``x`` (a JSON
    pointer; default the first), one line per option and per combination of the other swept
    parameters' values (labelled ``option, name=value``), never one line across them."""
    ax = _axes(ax)
    x = x or sw.paths[0]
    if x not in sw.paths:
        raise ValueError(f"{x!r} is not a swept parameter; the sweep's are: {', '.join(sw.paths)}")
    i = sw.paths.index(x)
    points = sw.summary["points"]
    labels = [o["label"] for o in points[0]["options"]]
    others = [j for j in range(len(sw.paths)) if j != i]
    groups: "dict[tuple, list[int]]" = {}
    for n, p in enumerate(sw.points):
        groups.setdefault(tuple(p[j] for j in others), []).append(n)
    for key, members in groups.items():
        xs = np.array([float(sw.points[n][i]) for n in members])
        order = np.argsort(xs, kind="stable")
        rows = [points[members[o]] for o in order]
        suffix = "".join(f", {sw.paths[j].rsplit('/', 1)[-1]}={v}" for j, v in zip(others, key)) if len(groups) > 1 else ""
        for k, label in enumerate(labels):
            y = np.array([_value(p["options"][k][metric]["p50"]["value"]) for p in rows])
            lo = np.array([_value(p["options"][k][metric]["p50"]["lo"]) for p in rows])
            hi = np.array([_value(p["options"][k][metric]["p50"]["hi"]) for p in rows])
            ax.plot(xs[order], y, marker="o", label=label + suffix)
            ax.fill_between(xs[order], lo, hi, alpha=0.2)
    ax.set_xlabel(x.rsplit("/", 1)[-1])
    ax.set_ylabel(_METRIC_LABELS.get(metric, metric) + " (median)")
    ax.set_title(f"{sw.name}: {_METRIC_LABELS.get(metric, metric)} by {x.rsplit('/', 1)[-1]}")
    _legend_outside(ax)
    return ax


def validation(result: "dict[str, Any]", ax: Any = None, show: str = "error"):
    """What :func:`loopcast.validate` returned, against its targets.

    For a speed validation, ``show="error"``: each held-out log's per-request error (median
    |simulated − recorded| / recorded) as a bar, its P90 as a tick, and the 14% target;
    ``show="calibration"``: how often the recorded durations fell inside the simulated P10–P90,
    per model (with its request count), for all requests and for each log's total API time,
    against the 80% an honest interval holds (78–82% shaded) and the 70% floor per model.
    For a workload validation: the Kolmogorov–Smirnov distance of each measure (session length,
    context growth, prompt size, cost per session) between real and synthetic sessions, and the
    0.15 target.
    """
    if show not in ("error", "calibration"):
        raise ValueError(f"show must be 'error' or 'calibration', not {show!r}")
    ax = _axes(ax)
    if show == "calibration":
        if "measures" in result:
            raise ValueError("a workload validation has no intervals to calibrate: use show='error'")
        s = result["summary"]
        names = [f"{m['model']}\n({m['requests']} req.)" for m in result.get("models", [])]
        values = [_value(m["coverage_p10_p90"]) for m in result.get("models", [])]
        names += [f"all requests\n({s['requests']})", f"log totals\n({s['traces']} logs)"]
        values += [_value(s["coverage_p10_p90"]), _value(s["total_coverage_p10_p90"])]
        x = np.arange(len(names))
        ax.bar(x, 100 * np.nan_to_num(np.array(values, dtype=float)), color="#9ecae1",
               label="recorded inside the simulated P10–P90")
        ax.axhspan(78, 82, color="#a1d99b", alpha=0.4, label="calibrated (78–82%)")
        ax.axhline(80, color="#31a354", linestyle="--", label="target 80%")
        ax.axhline(70, color="#de2d26", linestyle=":", label="floor per model 70%")
        ax.set_xticks(x, names, rotation=30, fontsize="small")
        ax.set_ylim(0, 100)
        ax.set_ylabel("inside the P10–P90, %")
        ax.set_title(f"Interval calibration: {s['traces']} held-out logs, {s['requests']} requests")
        _legend_outside(ax)
        return ax
    if "measures" in result:
        names = [m["measure"] for m in result["measures"]]
        ks = np.array([_value(m["ks"]) for m in result["measures"]])
        x = np.arange(len(names))
        ax.bar(x, np.nan_to_num(ks), color="#9ecae1", label="KS distance")
        ax.axhline(0.15, color="#de2d26", linestyle="--", label="target 0.15")
        ax.set_xticks(x, names, rotation=15)
        ax.set_ylabel("KS distance, real vs synthetic")
        ax.set_title(f"{result['real_sessions']} real sessions vs {result['synthetic_sessions']} synthetic")
        ax.set_ylim(0, max(ax.get_ylim()[1], 0.15 * 1.1))  # the target line stays inside the axes
    else:
        traces = result["traces"]
        x = np.arange(len(traces))
        p50 = np.array([_value(t["ape_p50"]) for t in traces]) * 100
        p90 = np.array([_value(t["ape_p90"]) for t in traces]) * 100
        ax.bar(x, np.nan_to_num(p50), color="#9ecae1", label="per-request error, median")
        ax.scatter(x, p90, marker="_", s=200, color="black", label="P90")
        ax.axhline(14, color="#de2d26", linestyle="--", label="target 14%")
        ax.set_xticks(x, [os.path.basename(t["file"]) for t in traces], rotation=30)
        ax.set_ylabel("|simulated − recorded| / recorded, %")
        ax.set_title(f"{result['summary']['traces']} held-out logs, {result['summary']['requests']} requests")
        ax.set_ylim(0, max(ax.get_ylim()[1], 14 * 1.1))  # the target line stays inside the axes
    _legend_outside(ax)
    return ax


def _plan_agent(result: "dict[str, Any]", agent: "int | str") -> "dict[str, Any]":
    """One agent's comparison in a :func:`loopcast.plans` result: by index, or by its name."""
    agents = result["agents"]
    a = next((x for x in agents if x["agent"] == agent), None) if isinstance(agent, str) else agents[agent]
    if a is None:
        raise ValueError(f"no agent {agent!r} in the result (agents: {', '.join(x['agent'] for x in agents)})")
    return a


def plans(result: "dict[str, Any]", agent: "int | str" = 0, ax: Any = None, max_blocked_hours: float = 2.0):
    """What :func:`loopcast.plans` found for one agent (an index or "Claude Code", "Codex"): a bar
    per option, in the table's order, as long as its $ a month (whiskers: the least and the most
    at the caps' low and high ends), coloured by its wait for resets — within
    ``max_blocked_hours`` a week, above it, or falling behind the recorded pace — and labelled with
    its hours a week waiting (and the share of the pace it keeps, where it falls behind). Drawn on
    axes of its own, the figure is laid out to hold the option names; on yours, call
    ``fig.tight_layout()``.
    """
    a = _plan_agent(result, agent)
    own = ax is None
    ax = _axes(ax)
    rows = a["rows"]
    y = np.arange(len(rows))[::-1]
    usd = np.array([r["usd_month"] for r in rows], dtype=float)
    xerr = np.array([[r["usd_month"] - r["usd_month_low"] for r in rows], [r["usd_month_high"] - r["usd_month"] for r in rows]])
    kinds = [("falls behind" if r["pace"] < 0.995 else "within" if r["blocked_hours_week"] <= max_blocked_hours
              else "above") for r in rows]
    colors = {"within": "#31a354", "above": "#fd8d3c", "falls behind": "#de2d26"}
    names = {"within": f"waits ≤ {max_blocked_hours:g} h a week", "above": f"waits > {max_blocked_hours:g} h a week",
             "falls behind": "falls behind the recorded pace"}
    for kind in ("within", "above", "falls behind"):
        keep = np.array([k == kind for k in kinds])
        if keep.any():
            ax.barh(y[keep], usd[keep], xerr=xerr[:, keep], color=colors[kind], alpha=0.8, capsize=3,
                    error_kw={"elinewidth": 1}, label=names[kind])
    for r, yy, x, hi in zip(rows, y, usd, usd + xerr[1]):
        h = r["blocked_hours_week"]
        text = f"${x:,.0f}: {h:.1f} h a week" if h < 10 else f"${x:,.0f}: {h:.0f} h a week"
        low, high = f"{r['blocked_hours_week_low']:.0f}", f"{r['blocked_hours_week_high']:.0f}"
        if low != high:
            text += f" ({low}–{high})"
        if r["pace"] < 0.995:
            text += f", {100 * r['pace']:.2g}% of the pace"
        ax.text(max(x, hi), yy, "  " + text, va="center", fontsize="small")
    ax.set_yticks(y, [r["label"] for r in rows], fontsize="small")
    ax.set_xlim(0, float(np.max(usd + xerr[1])) * 1.9 if len(rows) else 1)
    ax.set_ylim(-0.8, len(rows) - 0.2 + 1.2)  # room above the bars for the legend
    ax.set_xlabel("$ a month (a plan's fee + extra usage, or the API's tokens)")
    ax.set_title(f"{a['agent']}: {a['requests']:,} requests over {a['span_days']:.1f} days, per option", fontsize="medium")
    ax.legend(loc="upper right", fontsize="small", ncol=3)
    if own:  # the option names at the left stay inside the figure (with your own axes: fig.tight_layout())
        ax.figure.tight_layout()
    return ax


def plan_waits(result: "dict[str, Any]", agent: "int | str" = 0, option: "str | None" = None, ax: Any = None,
               timezone: str = "UTC", max_days: int = 120):
    """One option's waits for resets (from :func:`loopcast.plans`) on a calendar: a day per column,
    the hours of the day (in ``timezone``, an IANA name) down the side, and a bar for each stretch
    of the day some session waited, coloured by the window that refused. ``option`` is a row's
    label; None takes the first row (in the table's order) that waits. Waits are drawn for
    ``max_days`` days from the first; the title says when more were left out.
    """
    import datetime
    import zoneinfo

    a = _plan_agent(result, agent)
    rows = a["rows"]
    row = next((r for r in rows if r["label"] == option), None) if option is not None else \
        next((r for r in rows if r["waits_at"]), None)
    if row is None:
        raise ValueError(f"no option {option!r} for {a['agent']} (options: {', '.join(r['label'] for r in rows)})"
                         if option is not None else f"no option of {a['agent']} waits for a reset")
    tz = zoneinfo.ZoneInfo(timezone)
    own = ax is None
    ax = _axes(ax)
    colors = {"five_hour": "#fd8d3c", "weekly": "#de2d26", "daily": "#9e9ac8"}
    first_day, cut, drawn = None, False, set()
    for w in row["waits_at"]:
        t = datetime.datetime.fromtimestamp(w["start_unix_s"], tz)
        end = t + datetime.timedelta(hours=w["hours"])
        first_day = first_day or t.date()
        while t < end:  # one bar per local day the wait covers
            if (t.date() - first_day).days >= max_days:
                cut = True
                break
            midnight = datetime.datetime.combine(t.date() + datetime.timedelta(days=1), datetime.time(), tz)
            stop = min(end, midnight)
            h0 = t.hour + t.minute / 60 + (t.second + t.microsecond / 1e6) / 3600
            bucket = w["bucket"] or "?"
            ax.bar(datetime.datetime.combine(t.date(), datetime.time(12)), (stop - t).total_seconds() / 3600, bottom=h0,
                   width=0.8, color=colors.get(bucket, "#6baed6"),
                   label=None if bucket in drawn else f"waiting for the {bucket.replace('_', '-')} window")
            drawn.add(bucket)
            t = stop
    import matplotlib.dates as mdates

    # A tick under each day's bars (at its noon), at most about eight of them.
    centres = sorted({p.get_x() + p.get_width() / 2 for p in ax.patches})
    if centres:
        first, last = int(np.floor(centres[0])), int(np.floor(centres[-1]))
        step = max(1, (last - first + 1) // 8)
        ax.set_xticks([d + 0.5 for d in range(first, last + 1, step)])
    ax.xaxis.set_major_formatter(mdates.DateFormatter("%Y-%m-%d"))
    ax.set_ylim(24, 0)
    ax.set_yticks([0, 6, 12, 18, 24])
    ax.set_ylabel(f"hour of the day ({timezone})")
    for label in ax.get_xticklabels():
        label.set_rotation(30)
        label.set_horizontalalignment("right")
    n = row["waits"]
    title = f"{a['agent']} on {row['label']}\n{n} wait{'' if n == 1 else 's'}, {row['blocked_hours_week']:.1f} h a week"
    ax.set_title(title + (f" (the first {max_days} days drawn)" if cut else ""), fontsize="medium")
    _legend_outside(ax)
    if own:
        ax.figure.autofmt_xdate()
        ax.figure.tight_layout()
    return ax

"""Plots render real, non-blank images with the Agg backend."""

import os
import json
import pathlib

import matplotlib

matplotlib.use("Agg")

import matplotlib.dates
import matplotlib.image
import matplotlib.pyplot as plt
import numpy as np
import pytest

import loopcast
import loopcast.plot as lp


def _png(fig, path):
    fig.savefig(path, dpi=60)
    img = matplotlib.image.imread(path)
    plt.close(fig)
    return img


@pytest.mark.parametrize("plot", [lp.context, lp.buckets, lp.cost, lp.throughput_by_context])
def test_each_plot_draws_something(reference, plot, tmp_path):
    ax = plot(reference)
    assert ax.has_data()
    img = _png(ax.figure, tmp_path / "p.png")
    assert img.ndim == 3 and img.shape[0] > 100 and img.shape[1] > 100
    assert float(np.std(img[..., :3])) > 0.05  # not a blank canvas


def test_buckets_mark_the_429s(reference):
    ax = lp.buckets(reference, "cloud")
    labels = ax.get_legend_handles_labels()[1]
    assert "429" in labels and "total_tpm" in labels
    plt.close(ax.figure)


def test_dashboard(reference, tmp_path):
    fig = lp.dashboard(reference)
    assert len(fig.axes) == 4
    img = _png(fig, tmp_path / "d.png")
    assert float(np.std(img[..., :3])) > 0.05


def test_monte_carlo_and_sweep_plots(models, tmp_path):
    mc = loopcast.monte_carlo("reference", 20, models=models)
    ax = lp.monte_carlo(mc, "usd_per_task")
    assert ax.has_data() and [t.get_text() for t in ax.get_legend().get_texts()] == ["cloud", "local"]
    assert float(np.std(_png(ax.figure, tmp_path / "mc.png")[..., :3])) > 0.05
    spec = {"kind": "sweep", "name": "agents", "scenario": "reference", "seeds": 3,
            "parameters": [{"path": "/sessions", "values": [1, 2, 4]}]}
    sw = loopcast.sweep(spec, models=models)
    ax = lp.sweep(sw, metric="stall_share")
    assert len(ax.get_lines()) == 2 and list(ax.get_lines()[0].get_xdata()) == [1, 2, 4]
    assert float(np.std(_png(ax.figure, tmp_path / "sweep.png")[..., :3])) > 0.05
    # A second parameter: one line per option and per value of it, each over the first's values,
    # with the medians of its own points (never a zigzag across stagger values).
    spec["parameters"].append({"path": "/stagger_s", "values": [0, 30]})
    sw2 = loopcast.sweep(spec, models=models)
    ax = lp.sweep(sw2, metric="wall_s")
    lines = {l.get_label(): l for l in ax.get_lines()}
    assert sorted(lines) == ["cloud, stagger_s=0", "cloud, stagger_s=30", "local, stagger_s=0", "local, stagger_s=30"]
    for label, line in lines.items():
        stagger = float(label.rsplit("=", 1)[1])
        k = 0 if label.startswith("cloud") else 1
        want = [p["options"][k]["wall_s"]["p50"]["value"] for q, p in zip(sw2.points, sw2.summary["points"])
                if float(q[1]) == stagger]
        assert list(line.get_xdata()) == [1, 2, 4]
        assert list(line.get_ydata()) == pytest.approx(want)
    with pytest.raises(ValueError, match="'/turns' is not a swept parameter; the sweep's are: /sessions, /stagger_s"):
        lp.sweep(sw2, x="/turns")


def test_validation_plots(traces, tmp_path):
    w = traces / "claude-code-weka"
    wl = loopcast.validate([w / "trace_0527.json", w / "trace_0729.json"],
                           workload_fit_on=[w / "trace_0043.json", w / "trace_0291.json", w / "trace_0455.json"],
                           sessions=100)
    ax = lp.validation(wl)
    heights = [p.get_height() for p in ax.patches]
    assert heights == pytest.approx([m["ks"] for m in wl["measures"]])
    assert [t.get_text() for t in ax.get_xticklabels()] == [m["measure"] for m in wl["measures"]]
    assert ax.get_ylim()[1] >= 0.15 * 1.1  # the 0.15 target inside the axes
    assert float(np.std(_png(ax.figure, tmp_path / "wl.png")[..., :3])) > 0.05
    sp = loopcast.validate([w / "trace_0043.json"], fit_on=[w / "trace_0455.json", w / "trace_0527.json"], seeds=3)
    ax = lp.validation(sp)
    assert [p.get_height() for p in ax.patches] == pytest.approx([100 * sp["traces"][0]["ape_p50"]])
    assert [t.get_text() for t in ax.get_xticklabels()] == ["trace_0043.json"]
    assert ax.get_ylim()[0] == 0 and ax.get_ylim()[1] >= 14 * 1.1  # the 14% target inside the axes
    # Calibration: one bar per model, then all requests and log totals, at the coverages returned,
    # against the 80% target and the 70% floor.
    ax = lp.validation(sp, show="calibration")
    expected = [m["coverage_p10_p90"] for m in sp["models"]] + [sp["summary"]["coverage_p10_p90"],
                                                               sp["summary"]["total_coverage_p10_p90"]]
    assert [p.get_height() for p in ax.patches if p.get_label() != "calibrated (78–82%)"][:len(expected)] == \
        pytest.approx([100 * v for v in expected])
    labels = [t.get_text() for t in ax.get_xticklabels()]
    assert labels[-2:] == [f"all requests\n({sp['summary']['requests']})", "log totals\n(1 logs)"]
    assert labels[0] == f"{sp['models'][0]['model']}\n({sp['models'][0]['requests']} req.)"
    assert sorted(l.get_ydata()[0] for l in ax.get_lines()) == [70, 80]
    with pytest.raises(ValueError, match="a workload validation has no intervals to calibrate"):
        lp.validation(wl, show="calibration")


def test_monte_carlo_plot_draws_each_options_distribution(models):
    # One ECDF per option from the seeds' own values (even with a single option: no full-width bar),
    # rising to 1 over the runs that have a value, and the P50 marked at height 0.5.
    mc = loopcast.monte_carlo("reference", 30, models=models)
    ax = lp.monte_carlo(mc, "wall_s")
    lines = [l for l in ax.get_lines() if l.get_label() in ("cloud", "local")]
    assert [l.get_label() for l in lines] == ["cloud", "local"]
    for i, line in enumerate(lines):
        values = np.sort(mc.array["wall_s"][mc.array["option"] == i])
        assert list(line.get_xdata()[1:]) == pytest.approx(list(values))
        assert line.get_ydata()[-1] == pytest.approx(1.0)
    plt.close(ax.figure)


def test_bucket_legend_stays_off_the_429s(reference):
    ax = lp.buckets(reference, "cloud")
    legend = ax.get_legend()
    ax.figure.canvas.draw()
    box, axes = legend.get_window_extent(), ax.get_window_extent()
    assert box.x0 >= axes.x1  # drawn beside the axes, not over the data
    plt.close(ax.figure)


def test_bucket_panel_draws_the_continuous_level(reference):
    # The line is the replayed level (not a step held between arrivals): between two of its points
    # without a charge or refund in between, a token bucket with room drains at limit / period.
    o = reference["cloud"]
    ax = lp.buckets(reference, "cloud")
    line = {l.get_label(): l for l in ax.get_lines()}["total_tpm"]
    t, used = o.bucket_curve("total_tpm")
    limit = o.bucket_limit["total_tpm"]
    with pytest.raises(KeyError, match="cloud has no bucket 'tpm'; its buckets: uncached_tpm, total_tpm, rpm"):
        o.bucket_curve("tpm")
    with pytest.raises(IndexError, match="bucket 3 of an option with 3 buckets"):
        o.bucket_curve(3)
    assert len(t) > 2000
    assert list(line.get_xdata()) == pytest.approx(list(t))
    assert list(line.get_ydata()) == pytest.approx(list(100 * used / limit))
    period = next(b["period_s"] for b in o.summary["buckets"] if b["name"] == "total_tpm")
    step = np.diff(t) > 0
    draining = step & (used[:-1] > 0) & (used[1:] > 0)
    assert draining.sum() > 1000
    rate = (used[:-1] - used[1:])[draining] / np.diff(t)[draining]
    assert rate == pytest.approx(np.full(draining.sum(), limit / period), rel=1e-6)
    # Each 429 marker sits at the level the refused attempt found, on the curve (linear between
    # its points while the bucket drains).
    marks = np.asarray(next(c for c in ax.collections if c.get_label() == "429").get_offsets())
    refused = o.timeline.array["status"] == 1
    assert len(marks) == refused.sum() > 0
    assert list(marks[:, 1]) == pytest.approx(list(100 * np.interp(marks[:, 0], t, used) / limit), abs=1e-6)
    plt.close(ax.figure)


def test_context_panel_marks_the_window_and_where_a_session_stopped(models):
    # Eight agents at once on the Developer tier with the Anthropic SDK's two retries: session 0
    # dies after serving 3 requests; its panel draws those 3 prompts under the 131,072-token window
    # and marks request 4, where it stopped.
    s = loopcast.Scenario(name="eight", workload="reference-agent-loop", sessions=8, seed=42, models=models,
                          options=[loopcast.Option("cloud", "cerebras-developer-qwen-3.8-27b", "anthropic-python-sdk")])
    run = loopcast.run(s, models=models)
    row = run["cloud"].sessions.array[0]
    assert loopcast._core.SESSION_OUTCOME[row["outcome"]] == "died_after_retries" and row["requests_served"] == 3
    ax = lp.context(run, "cloud", session=0)
    served = run["cloud"].requests.array
    served = served[served["session"] == 0]
    tops = [p.get_y() + p.get_height() for p in ax.patches[3:6]]
    assert tops == pytest.approx(list(served["prompt"] / 1e3))
    lines = {l.get_label(): l for l in ax.get_lines()}
    window = lines["context window (131,072 tokens)"]
    assert list(window.get_ydata()) == [131.072, 131.072]
    stop = lines["stopped at request 4: died after retries"]
    assert list(stop.get_xdata()) == [4, 4]
    # A completed session has the window and no stop mark.
    labels = lp.context(run, "cloud", session=6).get_legend_handles_labels()[1]
    assert labels == ["context window (131,072 tokens)", "cache reads", "uncached input"]
    plt.close("all")


def test_legends_never_cover_the_data(reference, models):
    # Every plot puts its legend to the right of its plotting area, where no data is drawn.
    mc = loopcast.monte_carlo("reference", 5, models=models)
    axes = [lp.context(reference), lp.buckets(reference, "cloud"), lp.cost(reference),
            lp.throughput_by_context(reference), lp.monte_carlo(mc, "wall_s")]
    for ax in axes:
        ax.figure.canvas.draw()
        legend = ax.get_legend().get_window_extent()
        assert legend.x0 >= ax.get_window_extent().x1, ax.get_title()
        plt.close(ax.figure)


def test_cost_panel_draws_a_plans_fee_share(models):
    # A plan bills no tokens: its line is its share of the monthly fee over its wall clock, never $0.
    run = loopcast.run(os.path.join(os.path.dirname(models), "examples", "scenarios", "plan-vs-api.json"), models=models)
    ax = lp.cost(run)
    lines = {l.get_label(): l for l in ax.get_lines()}
    plan = run["max 5x"].summary
    line = lines["max 5x (share of the $100 monthly fee)"]
    assert list(line.get_xdata()) == pytest.approx([0, plan["wall_s"]])
    assert list(line.get_ydata()) == pytest.approx([0, plan["plan"]["fee_share_usd"]])
    assert plan["plan"]["fee_share_usd"] > 1
    plt.close(ax.figure)


def test_cost_panel_marks_a_replays_recorded_cost(traces, models):
    # subagent.jsonl cost $0.5577563 as recorded (priced by hand in tests/unit/test_accounting.cpp).
    run = loopcast.replay(traces / "claude-code-jsonl" / "subagent.jsonl", ["anthropic-tier1-claude-opus-4.5"], models=models)
    ax = lp.cost(run)
    rec = run.summary["recorded"]
    marks = next(c for c in ax.collections if c.get_label().startswith("recorded:"))
    assert marks.get_label() == f"recorded: $0.56 in {rec['wall_s']:.0f} s"
    # Logs with clock times: the replay is drawn in UTC, from the first logged send.
    start = run["anthropic-tier1-claude-opus-4.5"].summary["start_unix_s"]
    assert start is not None and ax.get_xlabel() == "time (UTC)"
    when = matplotlib.dates.date2num(np.datetime64(int(round((start + rec["wall_s"]) * 1e3)), "ms"))
    assert list(np.asarray(marks.get_offsets())[0]) == pytest.approx([when, 0.5577563], rel=1e-9)
    line = ax.get_lines()[0]
    assert line.get_xdata()[0] == np.datetime64(int(round(start * 1e3)), "ms")
    plt.close(ax.figure)
    # A scenario stays in seconds from its start.
    ax = lp.cost(loopcast.run("reference", models=models))
    assert ax.get_xlabel() == "time (s)" and ax.get_lines()[0].get_xdata()[0] == 0.0
    plt.close(ax.figure)


def test_cost_panel_marks_what_a_routes_later_target_served(models):
    # route-overflow: each route's requests served by the workstation are marked on its line, at
    # their end times and the running cost there.
    run = loopcast.run(os.path.join(os.path.dirname(models), "examples", "scenarios", "route-overflow.json"), models=models)
    ax = lp.cost(run)
    for o in run:
        route = o.summary.get("route")
        if not route:
            continue
        t = o.timeline.array
        ok = t[t["status"] == 0]
        order = np.argsort(ok["t_end"], kind="stable")
        second = route["targets"][1]
        marks = next(c for c in ax.collections if c.get_label() == f"{o.label}: served by {second['target']}")
        offsets = np.asarray(marks.get_offsets())
        assert len(offsets) == second["requests_served"] > 0
        sel = ok["target"][order] == 1
        assert list(offsets[:, 0]) == pytest.approx(list(ok["t_end"][order][sel]))
        assert list(offsets[:, 1]) == pytest.approx(list(np.cumsum(ok["cost_usd"][order])[sel]))
    plt.close(ax.figure)


def test_bucket_notes_say_why_a_level_passes_100_and_a_429_comes_below(models):
    # plan-vs-api with Tier 1's Opus limits before 2026-05-06 (30,000 ITPM, 8,000 OTPM): the API
    # option's otpm reserves max_tokens (32,000 against 8,000 a minute) and takes oversize requests
    # into debt, so its level passes 100%; its 429s come when the request's own charge would not
    # fit, at levels below 100%. The checked note is exactly what is drawn.
    examples = pathlib.Path(__file__).resolve().parents[2] / "examples" / "scenarios" / "plan-vs-api.json"
    scenario = json.loads(examples.read_text())
    scenario["options"][1]["limits"] = {"itpm": 30_000, "otpm": 8_000}
    run = loopcast.run(scenario, models=models)
    ax = lp.buckets(run, "api")
    o = run["api"]
    t = o.timeline.array
    rows = np.nonzero(t["status"] == 1)[0]
    by = t["refused_by"][rows].astype(np.int64)
    limits = np.array([o.bucket_limit[n] for n in o.bucket_names])
    assert np.any(o.bucket_levels[rows, by] < limits[by])  # a 429 drawn below 100%
    assert np.max(o.bucket_curve("otpm")[1]) > o.bucket_limit["otpm"]  # a level above it
    assert [x.get_text() for x in ax.texts] == [
        "otpm above 100%: max_tokens is reserved at admission (refunded at completion); a request larger than the "
        "bucket is admitted into debt once it is full\n"
        "429s below 100%: the request's own charge would have passed the limit"]
    plt.close(ax.figure)
    # A run whose levels stay within 100% and whose 429s all find a full bucket has no note.
    free = loopcast.run(examples, models=models)
    ax = lp.buckets(free, "rtx 3090")
    assert [x.get_text() for x in ax.texts] == ["no rate limits"]
    plt.close(ax.figure)

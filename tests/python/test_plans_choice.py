"""loopcast.plans from Python: the same comparison as `loopcast plans --json`, and its table."""
import json
import os
import subprocess

import pytest

import loopcast

TRACES = os.environ.get("LOOPCAST_TRACES_DIR", "tests/data/traces")


def test_plans_is_the_cli_comparison_as_a_table():
    logs = [os.path.join(TRACES, "claude-code-jsonl"), os.path.join(TRACES, "codex")]
    r = loopcast.plans(logs)
    cli = json.loads(subprocess.run([os.environ["LOOPCAST_CLI"], "plans", *logs, "--json"], check=True,
                                    capture_output=True, text=True).stdout)
    assert [a["agent"] for a in r["agents"]] == ["Claude Code", "Codex"]
    assert r["agents"] == cli["agents"]
    df = r.to_pandas()
    # Claude Code: Pro, Max, Ultra, the API, Pro with extra usage (the only plan that waits) and
    # Cerebras Code Pro and Max; Codex: Plus, Pro 5x, Pro 20x, the API and Cerebras Code (none waits,
    # so none spills).
    assert list(df.agent).count("Claude Code") == 7
    assert list(df.agent).count("Codex") == 6
    pro = df[df.label == "Claude Pro"].iloc[0]
    # The 26 Claude Code requests of 2026-02-10/12 on Pro's assumed 200K (100K before 2026-05-06):
    # one wait of 4.0 h at 21:59 UTC, and the one session whose request outgrows the window cut.
    assert pro.caps == "assumed"
    assert pro.waits == 1
    assert pro.sessions_cut == 1
    assert set(df.agent) == {"Claude Code", "Codex"}


def test_plans_takes_caps_per_target_and_names_a_typo():
    logs = [os.path.join(TRACES, "claude-code-jsonl")]
    r = loopcast.plans(logs, limits={"claude-pro-*:five_hour": 50_000_000, "claude-pro-*:weekly": 500_000_000})
    rows = {x["label"]: x for x in r["agents"][0]["rows"]}
    assert rows["Claude Pro"]["caps"] == "given"
    assert rows["Claude Pro"]["waits"] == 0
    assert rows["Claude Max (5x)"]["caps"] == "assumed"
    with pytest.raises(ValueError, match=r'limits\["fivehour"\]: no plan or API preset has that bucket'):
        loopcast.plans(logs, limits={"fivehour": 1_000_000})
    with pytest.raises(ValueError, match=r"--plan team: not a plan of this agent"):
        loopcast.plans(logs, plan="team")


def test_plans_since_keeps_the_later_sessions():
    r = loopcast.plans(os.path.join(TRACES, "claude-code-jsonl"), since="2026-02-12", timezone="UTC")
    assert r["agents"][0]["rows"][0]["sessions"] == 2
    assert "4 sessions that started before 2026-02-12 00:00 UTC left out (--since)" in r["agents"][0]["notes"]


def test_plans_plot_draws_a_bar_per_option_inside_the_figure():
    import matplotlib
    matplotlib.use("Agg")
    import loopcast.plot

    r = loopcast.plans(os.path.join(TRACES, "claude-code-jsonl"))
    ax = loopcast.plot.plans(r, "Claude Code")
    rows = r["agents"][0]["rows"]
    bars = [p for p in ax.patches if p.get_height() > 0.5]
    assert len(bars) == len(rows)
    assert sorted(round(b.get_width(), 6) for b in bars) == sorted(round(x["usd_month"], 6) for x in rows)
    # Pro waits 16 h a week (above 2 h): orange; the others within: green.
    pro = next(b for b in bars if abs(b.get_width() - 20.0) < 1e-9)
    assert matplotlib.colors.to_hex(pro.get_facecolor()[:3]) == "#fd8d3c"
    fig = ax.figure
    fig.canvas.draw()
    box = fig.bbox
    renderer = fig.canvas.get_renderer()
    for t in [*ax.texts, *ax.get_yticklabels(), ax.title, ax.xaxis.label, ax.get_legend()]:
        e = t.get_window_extent(renderer)
        assert e.x0 >= box.x0 - 1 and e.x1 <= box.x1 + 1 and e.y0 >= box.y0 - 1 and e.y1 <= box.y1 + 1, t
    with pytest.raises(ValueError, match="no agent 'Codex' in the result"):
        loopcast.plot.plans(r, "Codex")


def test_plan_waits_draws_each_wait_on_its_local_days():
    import matplotlib
    matplotlib.use("Agg")
    import loopcast.plot

    r = loopcast.plans(os.path.join(TRACES, "claude-code-jsonl"))
    pro = next(x for x in r["agents"][0]["rows"] if x["label"] == "Claude Pro")
    wait = pro["waits_at"][0]  # 2026-02-10 21:59 UTC, 4.0 h: past midnight, so two days' bars
    ax = loopcast.plot.plan_waits(r, timezone="UTC")
    bars = sorted(ax.patches, key=lambda p: p.get_x())
    assert len(bars) == 2
    start_hour = (wait["start_unix_s"] % 86400) / 3600
    assert bars[0].get_y() == pytest.approx(start_hour)
    assert bars[0].get_height() == pytest.approx(24 - start_hour)
    assert bars[1].get_y() == pytest.approx(0.0)
    assert bars[0].get_height() + bars[1].get_height() == pytest.approx(wait["hours"])
    assert ax.get_title().startswith("Claude Code on Claude Pro\n1 wait, ")
    with pytest.raises(ValueError, match="no option 'Claude Team' for Claude Code"):
        loopcast.plot.plan_waits(r, option="Claude Team")

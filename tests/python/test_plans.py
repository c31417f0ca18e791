"""Subscription plans from Python: caps set on an option or a replay, the fee priced per task."""

import json
import subprocess

import pytest

import loopcast

MONTH_S = 365.25 / 12 * 86400


def _plan_scenario(limits):
    return loopcast.Scenario(
        name="plan", workload="reference-agent-loop", sessions=3, stagger_s=10,
        options=[loopcast.Option("max", "claude-max-5x-opus-4.5", "claude-code", limits=limits)])


def test_option_limits_set_the_unpublished_caps(models):
    with pytest.raises(loopcast.ConfigError) as e:
        _plan_scenario(None)
    assert str(e.value) == ("<python>: /options/0: target claude-max-5x-opus-4.5's bucket five_hour has no published "
                            "limit: set it with \"limits\": {\"five_hour\": N} (docs/plans.md)")
    scn = _plan_scenario({"five_hour": 400_000, "weekly": 2_000_000})
    assert scn.options[0].limits == {"five_hour": 400_000, "weekly": 2_000_000}
    o = loopcast.run(scn, models=models).options[0]
    assert o.bucket_limit == {"five_hour": 400_000, "weekly": 2_000_000}
    plan = o.plan
    assert plan["name"] == "Claude Max 5x" and plan["monthly_fee_usd"] == 100
    # The run's share of the fee is fee × wall / month, and that is its cost.
    assert plan["fee_share_usd"] == pytest.approx(100 * o.wall_s / MONTH_S, rel=1e-12)
    assert o.cost_usd == pytest.approx(plan["fee_share_usd"], rel=1e-12)
    # Tasks a month: the least of the wall clock's and each window's, from the run's own charges.
    tasks = int((o.sessions["outcome"] == 0).sum())  # 0: completed
    assert tasks == o.summary["fleet"]["completed"] == 3
    assert o.rate_limited > 0  # the 5-hour window stops the fleet: a run that tests the caps
    bounds = {"wall clock": tasks * MONTH_S / o.wall_s}
    for b in o.summary["buckets"]:
        bounds[b["name"]] = tasks * (b["limit"] / b["charged"]) * (MONTH_S / b["period_s"])
    limited_by = min(bounds, key=bounds.get)
    assert plan["limited_by"] == limited_by
    assert plan["tasks_per_month"] == pytest.approx(bounds[limited_by], rel=1e-12)
    assert plan["usd_per_task"] == pytest.approx(100 / bounds[limited_by], rel=1e-12)


def test_replay_limits_on_a_plan(traces, models, cli):
    log = str(traces / "claude-code-weka" / "trace_0043.json")
    with pytest.raises(KeyError) as e:
        loopcast.replay(log, ["claude-max-5x-opus-4.5"], limits={"five_hours": 1}, models=models)
    assert e.value.args[0] == "no target has a bucket 'five_hours' (buckets: five_hour, weekly)"
    r = loopcast.replay(log, ["claude-max-5x-opus-4.5"], limits={"five_hour": 300_000, "weekly": 3_000_000},
                        models=models)
    o = r.options[0]
    out = subprocess.run([cli, "--models", models, "replay", log, "--on", "claude-max-5x-opus-4.5", "--limit",
                          "five_hour=300000", "--limit", "weekly=3000000", "--json"],
                         check=True, capture_output=True, text=True).stdout
    cli_plan = json.loads(out)["options"][0]["plan"]
    assert o.plan == cli_plan
    assert o.plan["limited_by"] in ("wall clock", "five_hour", "weekly")


def test_infer_plan_caps_matches_the_cli(traces, cli):
    logs = str(traces / "codex")
    r = loopcast.infer_plan_caps(logs)
    out = subprocess.run([cli, "limits", "infer", "--logs", "--json", logs], check=True, capture_output=True,
                         text=True).stdout
    assert dict(r) == json.loads(out)
    df = r.to_pandas()
    five = df[(df.window == "5-hour") & (df.counts == "all tokens")].iloc[0]
    # 2% → 6% while the requests used 1,434,736 tokens (the last of them 107,330): see test_plans.cpp.
    assert five.low == pytest.approx(100 * (1434736 - 107330) / 5.5, rel=1e-12)
    assert five.high == pytest.approx(100 * 1434736 / 2.5, rel=1e-12)
    weekly = df[(df.window == "weekly") & (df.counts == "all tokens")].iloc[0]
    assert weekly.high != weekly.high  # NaN: nothing bounds it above
    with pytest.raises(loopcast.TraceError, match="no dated requests"):
        loopcast.infer_plan_caps(str(traces / "claude-code-weka" / "trace_0043.json"))


def test_watch_follows_a_log_written_line_by_line(traces, cli, models, tmp_path):
    """A real Claude Code log fed line by line into a file `loopcast watch` follows: a forecast per new request,
    the last equal to --once on the whole file and to loopcast.forecast()."""
    import time
    src = (traces / "claude-code-jsonl" / "tool_heavy.jsonl").read_text().splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    log.write_text("")
    on = ["--on", "claude-max-5x-opus-4.5", "--limit", "five_hour=2000000", "--limit", "weekly=20000000",
          "--json", "--draws", "50"]
    follow = [cli, "--models", models, "watch", str(log), *on, "--poll", "0.02", "--quit-after", "1.5"]
    proc = subprocess.Popen(follow, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    with open(log, "a") as f:
        for line in src:
            f.write(line)
            f.flush()
            time.sleep(0.01)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    docs = [json.loads(line) for line in out.splitlines()]
    counts = [d["requests"] for d in docs]
    assert len(docs) >= 2 and counts == sorted(set(counts)), counts  # one forecast per new request count
    whole = loopcast.import_logs(str(log))
    assert counts[-1] == sum(len(whole.requests(0, s)) for s in range(len(whole.sessions(0))))
    once = subprocess.run([cli, "--models", models, "watch", str(log), *on, "--once"], check=True,
                          capture_output=True, text=True).stdout
    assert docs[-1] == json.loads(once)
    py = loopcast.forecast(log, loopcast.Target.load("claude-max-5x-opus-4.5", models=models),
                           limits={"five_hour": 2_000_000, "weekly": 20_000_000}, draws=50)
    assert py == docs[-1]

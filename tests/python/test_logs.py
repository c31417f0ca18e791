"""Recorded logs from Python: the same numbers as the CLI."""

import json
import subprocess

import pytest

import loopcast


def test_stats_equal_the_cli(traces, cli, models):
    log = str(traces / "claude-code-weka" / "trace_0043.json")
    out = subprocess.run([cli, "--models", models, "stats", "--json", log], check=True, capture_output=True, text=True).stdout
    assert loopcast.stats(log)["groups"] == json.loads(out)["groups"]
    # Independently computed P50 (see tests/unit/test_replay.cpp).
    assert loopcast.stats(log)["groups"][-1]["effective_tps"]["p50"] == pytest.approx(45.675194, abs=1e-5)


def test_logs_arrays_and_issues(traces):
    logs = loopcast.import_logs([traces / "claude-code-weka" / "trace_0291.json"])
    assert logs.format() == "kv-cache-tester"
    assert len(logs.sessions()) == 3
    r = logs.requests(0, 1)
    assert r["t_send"][0] == pytest.approx(1148.013)
    assert logs.skipped() == {}


def test_replay_and_fit(traces, models):
    log = traces / "claude-code-weka" / "trace_0455.json"
    fitted = loopcast.fit(log, name="mine")
    assert fitted.to_dict()["speed"]["decode"]["kind"] == "linear"
    run = loopcast.replay(log, on=[fitted, "cerebras-developer-qwen-3.8-27b"])
    assert [o.label for o in run] == ["mine", "cerebras-developer-qwen-3.8-27b"]
    assert len(run["mine"].requests) == 51 and run.summary["recorded"]["requests"] == 51
    assert run["mine"].rate_limited == 0


def test_totals_only_logs_are_refused_for_replay(traces):
    with pytest.raises(loopcast.TraceError, match="per-task totals only"):
        loopcast.replay(traces / "swe-agent" / "pydicom__pydicom-1458.traj", on=["local-workstation-qwen-27b"])

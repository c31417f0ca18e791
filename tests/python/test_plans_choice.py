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
    # Claude Code: Pro, Max, Ultra, the API, and Pro with extra usage (the only plan that waits);
    # Codex: Plus, Pro 5x, Pro 20x and the API (none waits, so none spills).
    assert list(df.agent).count("Claude Code") == 5
    assert list(df.agent).count("Codex") == 4
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

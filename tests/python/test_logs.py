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


def test_replay_routes_each_model_and_keeps_recorded_times(traces):
    log = traces / "claude-code-weka" / "trace_0291.json"
    mapping = {"claude-opus-*": "anthropic-tier1-claude-opus-4.5", "claude-haiku-*": "anthropic-tier1-claude-haiku-4.5"}
    run = loopcast.replay(log, on=[mapping], speed="recorded", context="fail")
    option = run.summary["options"][0]
    assert option["label"] == "anthropic-tier1-claude-opus-4.5+anthropic-tier1-claude-haiku-4.5"
    assert option["routes"] == ["claude-opus-* → anthropic-tier1-claude-opus-4.5",
                                "claude-haiku-* → anthropic-tier1-claude-haiku-4.5"]
    assert run.summary["speed"] == "recorded" and run.summary["context_policy"] == "fail"
    # Opus and Haiku requests priced at their own models: the recorded column is priced, not n/a.
    assert run.summary["recorded"]["cost_priced"] is True and run.summary["recorded"]["cost_usd"] > 0
    # Without limits, recorded speed gives back the recorded wall clock.
    free = loopcast.Target.load("local-workstation-qwen-27b")
    same = loopcast.replay(log, on=[free], speed="recorded")
    assert abs(same.summary["options"][0]["wall_s"] - same.summary["recorded"]["wall_s"]) < 1e-3 * same.summary["recorded"]["wall_s"]


def test_routed_replay_bucket_curves_pass_through_the_recorded_levels(traces):
    # A replay routed to two targets has both targets' buckets side by side; each bucket's curve,
    # replayed from its own operations, is at the level each attempt on that bucket's target found.
    import numpy as np

    log = traces / "claude-code-weka" / "trace_0291.json"
    run = loopcast.replay(log, on=[{"claude-haiku-*": "anthropic-tier1-claude-haiku-4.5", "*": "anthropic-tier1-claude-sonnet-4.5"}])
    o = run.options[0]
    assert len(o.bucket_names) == 6
    levels, sent = o.bucket_levels, o.timeline.array["t_send"]
    checked = 0
    for b, name in enumerate(o.bucket_names):
        t, used = o.bucket_curve(name)
        assert len(t) > 2000 and np.all(np.diff(t) >= 0)
        mine = np.isfinite(levels[:, b]) & (levels[:, b] >= 0)
        at = np.searchsorted(t, sent[mine], side="left")  # the point just before an operation at that instant
        expected = np.where(t[at] == sent[mine], used[at], np.interp(sent[mine], t, used))
        assert expected == pytest.approx(levels[mine, b], rel=1e-9, abs=1e-6), name
        checked += int(mine.sum())
    assert checked >= len(sent)


def test_replay_refuses_bad_arguments(traces):
    log = traces / "claude-code-weka" / "trace_0291.json"
    with pytest.raises(ValueError, match="speed must be"):
        loopcast.replay(log, on=["local-workstation-qwen-27b"], speed="fast")
    with pytest.raises(ValueError, match="context must be"):
        loopcast.replay(log, on=["local-workstation-qwen-27b"], context="shrink")
    with pytest.raises(ValueError, match="max_tokens must be"):
        loopcast.replay(log, on=["local-workstation-qwen-27b"], max_tokens=0)
    with pytest.raises(loopcast.ConfigError, match="no mapping for the model claude-haiku-4-5-20251001"):
        loopcast.replay(log, on=[{"claude-opus-*": "anthropic-tier1-claude-opus-4.5"}])


def test_stats_price_each_model_and_a_provider_cache(traces):
    s = loopcast.stats(traces / "claude-code-weka" / "trace_0291.json", cache_ttl_s=300, block_tokens=64)
    groups = {g["model"]: g for g in s["groups"]}
    assert groups["claude-opus-4-5-20251101"]["priced_from"] == "anthropic-tier1-claude-opus-4.5"
    assert groups["claude-haiku-4-5-20251001"]["priced_from"] == "anthropic-tier1-claude-haiku-4.5"
    total = groups["claude-opus-4-5-20251101"]["priced_cost_usd"] + groups["claude-haiku-4-5-20251001"]["priced_cost_usd"]
    assert groups["all"]["priced_cost_usd"] == pytest.approx(total, rel=1e-12)
    cache = groups["all"]["provider_cache"]
    assert cache["ttl_s"] == 300 and 0 < cache["cache_hit_rate"] <= groups["all"]["cache_hit_rate"]
    assert s["unpriced_models"] == []


def test_validate_and_fit_per_model(traces):
    w = traces / "claude-code-weka"
    r = loopcast.validate([w / "trace_0043.json"], fit_on=[w / "trace_0455.json", w / "trace_0527.json"], seeds=3)
    assert r["seeds"] == 3 and len(r["traces"]) == 1 and r["traces"][0]["requests"] == 22
    assert 0 <= r["summary"]["coverage_p10_p90"] <= 1
    fitted = loopcast.fit(w / "trace_0291.json", name="opus", model="claude-opus-*", context_window=200000)
    d = fitted.to_dict()
    assert d["model"] == "claude-opus-4-5-20251101" and d["context_window_tokens"] == 200000
    assert d["speed"]["noise"]["kind"] == "lognormal"
    with pytest.raises(TypeError, match=r"give one of fit_on=, on= \(speeds\), workload= or workload_fit_on="):
        loopcast.validate([w / "trace_0043.json"])


def test_fit_workload_and_validate_it(traces, tmp_path):
    w = traces / "claude-code-weka"
    train = [w / "trace_0043.json", w / "trace_0291.json", w / "trace_0455.json"]
    held = [w / "trace_0527.json", w / "trace_0729.json"]
    fitted = loopcast.fit_workload(train, name="weka3", context_window=200000)
    d = fitted.to_dict()
    assert d["kind"] == "workload" and d["name"] == "weka3" and d["context_window_tokens"] == 200000
    assert d["fitted_on"]["sessions"] == 3 and d["turns"]["kind"] == "quantiles"
    assert d["source"] == [str(p) for p in train]
    r = loopcast.validate(held, workload=fitted, sessions=100)
    assert r["real_sessions"] == 2 and r["synthetic_sessions"] == 100
    assert [m["measure"] for m in r["measures"]] == [
        "requests per session", "context growth per request", "prompt tokens per request", "cost per session"]
    assert all(0 <= m["ks"] <= 1 for m in r["measures"])
    # The same comparison fitted on the fly gives the same answer (same fit, same seeds).
    assert loopcast.validate(held, workload_fit_on=train, sessions=100)["measures"] == [
        {**m} for m in loopcast.validate(held, workload=loopcast.fit_workload(train), sessions=100)["measures"]]
    # The shipped preset fitted on the training corpus loads by name.
    shipped = loopcast.Workload.load("claude-code-fitted")
    assert shipped.to_dict()["fitted_on"]["sessions"] == 141
    with pytest.raises(ValueError, match="context_window must be a whole number >= 1"):
        loopcast.fit_workload(train, context_window=0)
    # Imported logs: the preset's source is the files they came from (it was an empty list, which
    # the preset loader refuses).
    imported = loopcast.fit_workload(loopcast.import_logs(train), name="weka3", context_window=200000)
    assert imported.to_dict()["source"] == [str(p) for p in train]
    assert imported.to_dict()["turns"] == d["turns"]


def test_stats_reads_the_default_places(traces, tmp_path, monkeypatch):
    import datetime
    import shutil
    proj = tmp_path / ".claude" / "projects" / "-home-u-alpha"
    proj.mkdir(parents=True)
    shutil.copy(traces / "claude-code-jsonl" / "tool_heavy.jsonl", proj / "tool_heavy.jsonl")
    for k in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME"):
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("HOME", str(tmp_path))
    s = loopcast.stats(by="project")
    assert s["by"] == "project"
    groups = {g["group"]: g for g in s["groups"]}
    # The project is the folder the agent ran in, as the log records it (cwd).
    assert groups["/home/marco/projects/spotter"]["requests"] == 4 and groups["all"]["requests"] == 4
    assert groups["/home/marco/projects/spotter"]["tokens"]["cache_read"] == 88231
    # A day after every request: nothing counted, all four left out.
    later = loopcast.stats(by="day", since=datetime.date(2030, 1, 1))
    assert later["filtered_out"] == 4 and later["groups"] == []
    with pytest.raises(ValueError, match="since yesterday: expected a date as YYYY-MM-DD or YYYYMMDD"):
        loopcast.stats(since="yesterday")
    with pytest.raises(ValueError, match='by must be "model", "day", "week", "month", "session", "project", "machine" or '
                                         '"block", not "fortnight"'):
        loopcast.stats(by="fortnight")
    with pytest.raises(ValueError, match='unknown time zone "Mars/Olympus"'):
        loopcast.stats(by="day", timezone="Mars/Olympus")
    monkeypatch.setenv("HOME", str(tmp_path / "nowhere"))
    with pytest.raises(ValueError, match="no agent logs in the default places"):
        loopcast.stats()


def test_stats_views_as_dataframes(traces):
    """Periods are local to the time zone and come back as datetimes there; a breakdown adds a row
    per model; 1-hour cache writes are their own column."""
    import pandas as pd
    logs = traces / "claude-code-jsonl"
    s = loopcast.stats(logs, by="day", timezone="America/New_York", breakdown=True)
    assert s["timezone"] == "America/New_York"
    df = s.to_pandas()
    assert list(df.columns[:4]) == ["day", "start", "end", "model"]
    assert str(df["start"].dt.tz) == "America/New_York"
    first = df.iloc[0]
    assert first["start"] == pd.Timestamp("2026-02-10", tz="America/New_York") and first["model"] == "*"
    # short.jsonl, subagent.jsonl and tool_heavy.jsonl (10 February, 16:11 New York time and later):
    # 17 requests of claude-opus-4-6 and the 5 of claude-haiku-4-5 a subagent sent, known from their
    # echoes in subagent.jsonl; every cache write a 1-hour one.
    assert first["requests"] == 22 and first["cache_write"] == 0
    assert first["cache_write_1h"] == 13835 + 25842 + 17696 + 14285
    assert list(df[df["day"] == "2026-02-10"]["model"]) == ["*", "claude-haiku-4-5-20251001", "claude-opus-4-6"]
    # The whole of it priced at each model: nothing partial.
    assert not df["priced_partial"].any()
    total = s["groups"][-1]
    # $1.0760387 of Opus and Sonnet, and the echoed Haiku subagent's $0.0381633.
    assert total["group"] == "all" and total["priced_cost_usd"] == pytest.approx(1.0760387 + 0.0381633, rel=1e-9)
    assert [p["source"] for p in s["pricing"]] == ["the preset catalogue"] * 3


def test_results_are_tables(traces):
    w = traces / "claude-code-weka"
    s = loopcast.stats(w / "trace_0291.json")
    assert isinstance(s, dict) and isinstance(s, loopcast.Report)
    df = s.to_pandas()
    by_group = df.set_index("model")
    assert list(df["model"]) == [g["group"] for g in s["groups"]]
    assert by_group.loc["all", "requests"] == s["groups"][-1]["requests"]
    assert by_group["requests"].drop("all").sum() == by_group.loc["all", "requests"]  # tokens conserved over groups
    assert by_group["input"].drop("all").sum() == by_group.loc["all", "input"]
    bins = s.to_pandas(bins=True)
    assert set(bins["context_bin"]) == {"<20K", "20-50K", "50-100K", ">100K"}
    assert bins[bins["model"] == "all"]["requests"].sum() == by_group.loc["all", "requests"]
    assert "<table" in s._repr_html_()
    v = loopcast.validate([w / "trace_0043.json"], fit_on=[w / "trace_0455.json"], seeds=2)
    vdf = v.to_pandas()
    assert list(vdf["file"]) == [t["file"] for t in v["traces"]] and vdf.loc[0, "requests"] == 22
    wv = loopcast.validate([w / "trace_0527.json"], workload_fit_on=[w / "trace_0043.json", w / "trace_0291.json"],
                           sessions=50)
    wdf = wv.to_pandas()
    assert list(wdf["measure"]) == [m["measure"] for m in wv["measures"]]
    assert list(wdf["ks"]) == [m["ks"] for m in wv["measures"]]


def test_logs_to_pandas_covers_every_session(traces):
    import pandas as pd
    logs = loopcast.import_logs([traces / "claude-code-jsonl" / "subagent.jsonl", traces / "claude-code-weka" / "trace_0291.json"])
    df = logs.to_pandas()
    # Every request of every session of both logs, not only the first session's.
    expected = sum(len(logs.requests(i, s)) for i in range(len(logs)) for s in range(len(logs.sessions(i))))
    assert len(df) == expected and len(df) > len(logs.requests(0, 0))
    cc = df[df["format"] == "claude-code"]
    assert set(cc["model"]) == {"claude-opus-4-6", "claude-haiku-4-5-20251001"}  # (a subagent known from its echoes)
    assert pd.api.types.is_datetime64_any_dtype(cc["sent"])  # Claude Code logs: wall clock
    kv = df[df["format"] == "kv-cache-tester"]
    assert kv["t_send_s"].iloc[0] == 0.0 and kv["sent"].isna().all()  # seconds from the trace start, no dates
    assert abs(cc["sent"].iloc[0] - pd.Timestamp(cc["t_send_s"].iloc[0], unit="s", tz="UTC")) < pd.Timedelta("1us")
    # The Haiku subagents are there, under their parent, with their model's name.
    subs = kv[kv["parent"].notna()]
    assert set(subs["session"]) == {"trace_0291/agent_001", "trace_0291/agent_002"}
    assert set(subs["parent"]) == {"trace_0291"} and set(subs["model"]) == {"claude-haiku-4-5-20251001"}
    assert df["input"].sum() == sum(int(logs.requests(i, s)["input"].sum())
                                    for i in range(len(logs)) for s in range(len(logs.sessions(i))))


def test_default_replay_client_is_the_clis(traces, cli, models):
    # Without a client, Python and `loopcast replay` both replay with the agent that wrote the
    # first log of a known agent, whatever else follows it.
    codex = str(sorted((traces / "codex").glob("rollout-*.jsonl"))[0])
    claude = str(traces / "claude-code-jsonl" / "short.jsonl")
    for logs, agent in (([codex, claude], "codex"), ([claude, codex], "claude-code")):
        out = subprocess.run([cli, "--models", models, "replay", *logs, "--on", "cerebras-developer-qwen-3.8-27b", "--json"],
                             check=True, capture_output=True, text=True).stdout
        assert json.loads(out)["options"][0]["client"] == agent
        run = loopcast.replay(logs, on=["cerebras-developer-qwen-3.8-27b"])
        assert run.summary["options"][0]["client"] == agent


def test_replay_by_model_reports_the_local_engine_it_ran(traces, models, cli):
    # A model mapping whose Haiku requests go to a local GPU: the merged option's engine is that
    # GPU's (it was read from the merged description, which had none).
    out = subprocess.run([cli, "--models", models, "replay", str(traces / "claude-code-weka"), "--on",
                          "claude-haiku-*=rtx3090-llamacpp-qwen-3.8-27b-128k,*=anthropic-tier1-claude-sonnet-4.5",
                          "--json"], check=True, capture_output=True, text=True).stdout
    engine = json.loads(out)["options"][0]["engine"]
    gpu = loopcast.Target.load("rtx3090-llamacpp-qwen-3.8-27b-128k", models=models).to_dict()["engine"]
    assert engine["name"] == gpu["name"] == "llama.cpp"
    assert engine["max_sequences"] == gpu["max_sequences"]
    assert engine["gpu_gb"] == gpu["memory"]["gpu_gb"] and engine["kv_pool_gb"] == gpu["memory"]["kv_pool_gb"]


def test_replay_refuses_what_it_would_round(traces):
    """Fractional counts and compact_at=0 are refused, never floored or taken for the default; a
    NaN in a preset is named where it is, never a JSON column."""
    log = traces / "claude-code-jsonl" / "short.jsonl"
    with pytest.raises(ValueError, match=r"max_tokens must be a whole number >= 1, not 2\.5"):
        loopcast.replay(log, ["local-workstation-qwen-27b"], max_tokens=2.5)
    with pytest.raises(ValueError, match=r"attempt_budget must be a whole number >= 1, not 0"):
        loopcast.replay(log, ["local-workstation-qwen-27b"], attempt_budget=0)
    with pytest.raises(ValueError, match=r"compact_at must be in \[0\.05, 1\] \(or None for the client's\), not 0"):
        loopcast.replay(log, ["local-workstation-qwen-27b"], compact_at=0)
    t = loopcast.Target.load("local-workstation-qwen-27b").to_dict()
    t["speed"]["overhead_s"] = float("nan")
    with pytest.raises(ValueError, match=r"Target <python>: /speed/overhead_s is not a finite number \(nan\)"):
        loopcast.Target(t)
    # The work budget reaches the replay: a run cut off at its first attempt.
    run = loopcast.replay(log, ["local-workstation-qwen-27b"], attempt_budget=1)
    assert run.options[0].summary["outcome"] == "cut_off"

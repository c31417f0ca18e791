"""Scenarios from Python: the reference case equals the CLI, determinism, arrays, Monte Carlo."""

import json
import math
import os
import subprocess

import numpy as np
import pytest

import loopcast


def test_reference_numbers_equal_the_cli_json(reference, cli, models):
    out = subprocess.run([cli, "--models", models, "run", "--json"], check=True, capture_output=True, text=True).stdout
    assert reference.summary == json.loads(out)


def test_reference_case_ranges(reference):
    cloud, local = reference["cloud"], reference["local"]
    assert cloud.first_429["bucket"] == "total_tpm"
    assert 13 <= cloud.first_429["request"] <= 15
    assert 50 <= cloud.first_429["time_s"] <= 80
    # The session's billed classes (docs/model.md §9): uncached input, cache reads, output + reasoning.
    tok = cloud.tokens
    assert tok["input"] + tok["cache_write"] + tok["cache_write_1h"] == pytest.approx(270539, rel=0.15)
    assert tok["cache_read"] == pytest.approx(1264128, rel=0.15)
    assert tok["output"] + tok["reasoning"] == pytest.approx(34935, rel=0.15)
    assert cloud.cost_usd == pytest.approx(1.57, rel=0.15)
    assert local.energy_kwh == pytest.approx(500 * local.wall_s / 3.6e6, rel=1e-12)


def test_timeline_is_a_read_only_view_that_adds_up(reference):
    cloud = reference["cloud"]
    t = cloud.timeline.array
    assert t.base is not None and not t.flags.writeable
    assert len(t) == cloud.attempts
    ok = t[t["status"] == 0]
    assert len(ok) == cloud.summary["requests"] == len(cloud.requests)
    # Tokens are conserved: the served attempts add up to the summary's totals.
    for c in ("input", "cache_read", "cache_write", "output", "reasoning"):
        assert int(ok[c].sum()) == cloud.tokens[c]
    assert ok["cost_usd"].sum() == pytest.approx(cloud.cost_usd, rel=1e-12)
    with pytest.raises(ValueError):
        t["cost_usd"][0] = 0.0
    assert cloud.bucket_levels.shape == (len(t), 3)
    assert cloud.bucket_names == ["uncached_tpm", "total_tpm", "rpm"]


def test_to_pandas(reference):
    df = reference.to_pandas()
    assert list(df["option"].unique()) == ["cloud", "local"]
    assert set(df["status"].cat.categories) == {"ok", "rate_limited", "too_large", "context_overflow"}
    refused = df[df["status"] == "rate_limited"]
    assert (refused["refused_by"] == "total_tpm").all() and len(refused) >= 1
    # A category over "" (not refused) and the option's buckets: no Python string per row.
    cloud = reference["cloud"].timeline.to_pandas()
    assert list(cloud["refused_by"].cat.categories) == ["", "uncached_tpm", "total_tpm", "rpm"]
    assert (cloud.loc[cloud["status"] == "ok", "refused_by"] == "").all()
    sessions = reference["local"].sessions.to_pandas()
    assert sessions.loc[0, "outcome"] == "completed"


def test_same_seed_same_arrays_other_seed_other(models):
    a = loopcast.run("reference", seed=3, models=models)["cloud"].timeline.array
    b = loopcast.run("reference", seed=3, models=models)["cloud"].timeline.array
    c = loopcast.run("reference", seed=4, models=models)["cloud"].timeline.array
    assert np.array_equal(a, b)
    assert len(a) != len(c) or not np.array_equal(a, c)


def test_scenario_built_in_code_with_keywords(models):
    target = loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=models).with_bucket_limit("total_tpm", 4_500_000)
    s = loopcast.Scenario(name="two", workload="reference-agent-loop", sessions=2, stagger_s=5, models=models,
                          options=[loopcast.Option("x10", target, "opencode")])
    run = loopcast.run(s, models=models)
    assert run["x10"].first_429 is None  # ten times the total TPM: no wall for two agents
    assert run["x10"].summary["sessions"][1]["start_s"] == 5.0
    assert run.script(0)["prompt_tokens"][0] == run.script(1)["prompt_tokens"][0] == 11000


def test_monte_carlo_rows_match_single_runs(models):
    mc = loopcast.monte_carlo("reference", [5, 6, 7], models=models)
    rows = mc.array
    assert len(rows) == 6 and list(rows["seed"]) == [5, 5, 6, 6, 7, 7]
    single = loopcast.run("reference", seed=6, timeline=False, models=models)
    row = rows[(rows["seed"] == 6) & (rows["option"] == 0)][0]
    assert row["cost_usd"] == single["cloud"].cost_usd
    assert row["wall_s"] == single["cloud"].wall_s
    assert row["effective_tps_p50"] == single["cloud"].effective_tps["p50"]
    first = single["cloud"].first_429
    assert (math.isnan(row["first_429_s"]) and first is None) or row["first_429_s"] == first["time_s"]
    df = mc.to_pandas()
    assert list(df["label"][:2]) == ["cloud", "local"]
    assert mc.summary["first_seed"] == 5 and "seed_list" not in mc.summary
    # A count runs the scenario's seed (42) and those after it, as the CLI's --seeds does.
    three = loopcast.monte_carlo("reference", 3, models=models)
    assert np.array_equal(three.array["seed"], [42, 42, 43, 43, 44, 44])
    assert three.summary["first_seed"] == 42 and three.summary["seeds"] == 3
    cli = json.loads(subprocess.run([os.environ["LOOPCAST_CLI"], "--models", models, "montecarlo", "reference",
                                     "--seeds", "3", "--json"], check=True, capture_output=True, text=True).stdout)
    assert cli["first_seed"] == 42 and cli["seeds"] == 3
    assert loopcast.monte_carlo("reference", [9, 3], models=models).summary["seed_list"] == [9, 3]


def test_options_table_counts_a_request_no_bucket_can_admit_as_a_429(models):
    scn = loopcast.Scenario.load("reference", models=models).to_dict()
    target = loopcast.Target.load(scn["options"][0]["target"], models=models)
    scn["options"][0]["target"] = target.with_bucket_limit("total_tpm", 10).to_dict()
    mc = loopcast.monte_carlo(scn, 10, models=models)
    table = mc.options_table()
    assert list(table.columns) == ["label", "runs", "runs_cut_off", "p_429", "p_429_lo", "p_429_hi", "p_refused",
                                   "p_refused_lo", "p_refused_hi", "p_session_dies", "p_session_dies_lo",
                                   "p_session_dies_hi", "p_429_per_hour", "p_429_per_hour_lo", "p_429_per_hour_hi",
                                   "stall_hours_per_hour"]
    cloud, local = table.iloc[0], table.iloc[1]
    assert (cloud.label, cloud.runs, cloud.p_429, cloud.p_refused, cloud.p_session_dies) == ("cloud", 10, 1.0, 1.0, 1.0)
    # Each cloud run is refused at t = 0: its one hour of operation has a 429; no local hour has one.
    assert (cloud.p_429_per_hour, local.p_429_per_hour, cloud.stall_hours_per_hour) == (1.0, 0.0, 0.0)
    # Clopper-Pearson, 10 of 10 at 95%: the lower bound is 0.025^(1/10).
    assert cloud.p_429_lo == pytest.approx(0.025 ** 0.1, rel=1e-9)
    assert (local.p_429, local.p_refused) == (0.0, 0.0)
    assert np.isnan(mc.array["first_429_s"][0]) and mc.array["first_refused_s"][0] == 0.0


def test_report_and_csv(reference):
    assert "refused by total_tpm" in reference.report()
    csv = reference.timeline_csv().splitlines()
    assert csv[0].startswith("option,session,request,turn,attempt")
    assert len(csv) == 1 + sum(o.attempts for o in reference)


def test_monte_carlo_precision_summary_and_threads(models):
    mc = loopcast.monte_carlo("reference", precision=0.02, threads=2, models=models)
    assert mc.summary["precision_reached"] is True
    n = mc.summary["seeds"]
    assert n % 20 == 0 and len(mc.array) == 2 * n
    assert list(mc.array["seed"][:4]) == [42, 42, 43, 43]
    q = mc.quantiles()
    cost = q[(q.label == "cloud") & (q.metric == "usd_per_task")].iloc[0]
    assert cost.p50_lo <= cost.p50 <= cost.p50_hi
    local_first = q[(q.label == "local") & (q.metric == "first_429_s")].iloc[0]
    assert math.isinf(local_first.p50)  # the local engine never sends a 429
    # Threads do not change the rows.
    one = loopcast.monte_carlo("reference", range(42, 42 + n), threads=1, models=models)
    for name in mc.array.dtype.names:
        assert np.array_equal(one.array[name], mc.array[name], equal_nan=mc.array[name].dtype.kind == "f"), name
    with pytest.raises(TypeError, match="not both"):
        loopcast.monte_carlo("reference", 10, precision=0.1, models=models)


def test_fleet_scenario_from_python(models):
    s = loopcast.Scenario(name="mixed", models=models, fleet=[
        {"workload": "reference-agent-loop", "sessions": 3, "stagger_s": 10},
        {"label": "chat", "workload": "burst-chat-256-512", "sessions": 4, "start_s": 30}],
        options=[loopcast.Option("cloud", "cerebras-developer-qwen-3.8-27b", "opencode")])
    run = loopcast.run(s, models=models)
    fleet = run["cloud"].summary["fleet"]
    assert fleet["sessions"] == 7
    assert fleet["completed"] + fleet["died"] == 7
    assert run["cloud"].summary["sessions"][3]["start_s"] == 30.0
    with pytest.raises(TypeError, match="either workload= or fleet="):
        loopcast.Scenario(name="x", workload="reference-agent-loop", fleet=[], options=[], models=models)


def test_results_render_as_tables_in_jupyter(reference):
    # One row per option, with the reference case's values (docs/model.md §9; examples/reference.expected).
    t = reference.options_table().set_index("option")
    assert list(t.index) == ["cloud", "local"]
    assert t.loc["cloud", "first_429_request"] == 14 and t.loc["cloud", "first_429_bucket"] == "total_tpm"
    assert t.loc["cloud", "first_429_s"] == pytest.approx(63.3, abs=0.05)
    assert t.loc["cloud", "requests"] == reference["cloud"].summary["requests"] == 34
    assert t.loc["cloud", "cost_usd"] == pytest.approx(reference["cloud"].summary["cost_usd"])
    assert t.loc["local", "first_429_bucket"] is None  # no 429: missing, not 0
    html = reference._repr_html_()
    assert html.startswith("<div>") and "<table" in html and "total_tpm" in html and "cerebras-developer-qwen-3.8-27b" in html
    timeline = reference["cloud"].timeline
    assert timeline._repr_html_() == timeline.to_pandas()._repr_html_()


def test_long_work_shows_a_tqdm_bar(models, capsys, monkeypatch):
    # tqdm draws on stderr; the delay that hides short work is lowered so a short run shows its bar.
    pytest.importorskip("tqdm")
    from loopcast import _progress
    monkeypatch.setattr(_progress, "DELAY_S", 0.0)
    mc = loopcast.monte_carlo("reference", 2000, models=models)
    err = capsys.readouterr().err
    assert "Monte Carlo" in err and "/2000" in err, err
    assert len(mc) == 2000 * 2
    loopcast.show_progress(False)
    try:
        loopcast.monte_carlo("reference", 2000, models=models)
        assert capsys.readouterr().err == ""
    finally:
        loopcast.show_progress(True)
    monkeypatch.setattr(_progress, "DELAY_S", 2.0)
    loopcast.monte_carlo("reference", 500, models=models)  # 25 ms: under the default delay, no bar
    assert capsys.readouterr().err == ""


def test_attempt_budget_cuts_runs_off_and_monte_carlo_counts_them(models):
    s = loopcast.Scenario(name="budgeted", workload="reference-agent-loop", sessions=5, stagger_s=20,
                          options=[loopcast.Option("developer", "cerebras-developer-qwen-3.8-27b", "opencode")],
                          attempt_budget=40, models=models)
    assert s.to_dict()["attempt_budget"] == 40
    run = loopcast.run(s, models=models)
    dev = run["developer"]
    assert dev.attempts == 40 and dev.summary["cut_off_s"] is not None
    assert {x["outcome"] for x in dev.summary["sessions"]} == {"cut_off"}
    mc = loopcast.monte_carlo(s, 3, models=models)
    assert list(mc.array["cut_off"]) == [True, True, True]
    assert mc.summary["options"][0]["runs_cut_off"] == 3
    uncut = loopcast.monte_carlo(s.replace(attempt_budget=10**9), 3, models=models)
    assert not uncut.array["cut_off"].any() and uncut.summary["options"][0]["runs_cut_off"] == 0


def test_the_loopcast_command_says_when_the_program_is_missing(monkeypatch):
    # The source tree's package has no bundled program (the wheel adds loopcast/bin/loopcast).
    from loopcast import _cli
    program = os.path.join(os.path.dirname(os.path.abspath(_cli.__file__)), "bin", "loopcast")
    monkeypatch.setattr(_cli.os, "access", lambda path, mode: False)
    with pytest.raises(SystemExit) as e:
        _cli.main()
    assert str(e.value) == (f"loopcast: {program}: no command-line program in this installation (it is built with "
                            "the wheel; a source checkout has it at build/loopcast)")

"""Routes from Python (docs/routing.md): a Route as an option's target, its per-target shares."""

import json
import math
import subprocess

import pytest

import loopcast

PRIMARY = "cerebras-developer-qwen-3.8-27b"
OVERFLOW = "local-workstation-qwen-27b"


def _scenario(route):
    return loopcast.Scenario(name="routes", workload="reference-agent-loop", sessions=5, stagger_s=20, seed=42,
                             options=[loopcast.Option("alone", PRIMARY), loopcast.Option("routed", route)])


def test_route_option_round_trips_and_runs(models):
    route = loopcast.Route([PRIMARY, OVERFLOW], spill_after_s=10, cooldown={"after_fails": 1, "window_s": 60,
                                                                          "for_s": 5})
    scn = _scenario(route)
    assert scn.options[1].target == route
    assert scn.options[1].to_dict()["route"] == {"targets": [PRIMARY, OVERFLOW], "spill_after_s": 10,
                                                 "cooldown": {"after_fails": 1, "window_s": 60, "for_s": 5}}
    run = loopcast.run(scn, models=models)
    alone, routed = run["alone"], run["routed"]
    assert alone.route is None and alone.route_shares() is None
    shares = routed.route_shares()
    assert list(shares.index) == [PRIMARY, OVERFLOW]
    # Every served request, token and dollar belongs to one target of the route.
    assert shares["requests_served"].sum() == routed.summary["requests"] == 170
    assert shares["request_share"].sum() == pytest.approx(1.0)
    classes = ["input", "cache_read", "cache_write", "output", "reasoning"]
    assert sum(shares[f"tokens_{c}"].sum() for c in classes) == sum(routed.tokens.values())
    assert shares["cost_usd"].sum() == pytest.approx(routed.cost_usd, rel=1e-12)
    assert shares["attempts"].sum() == len(routed.timeline)
    # The timeline says which target took each attempt; the buckets are named TARGET:BUCKET.
    t = routed.timeline.to_pandas()
    assert set(t["target"]) == {0, 1}
    assert (t["target"] == 1).sum() == shares.loc[OVERFLOW, "attempts"]
    assert routed.bucket_names == [f"{PRIMARY}:uncached_tpm", f"{PRIMARY}:total_tpm", f"{PRIMARY}:rpm"]
    # The overflow takes the stalls away: the routed fleet waits less than the primary alone.
    assert routed.summary["fleet"]["stall_share"] < alone.summary["fleet"]["stall_share"]
    assert routed.route["spill_after_s"] == 10


def test_never_spilling_without_cooldown_is_the_primary_alone(models):
    run = loopcast.run(_scenario(loopcast.Route([PRIMARY, OVERFLOW], spill_after_s=math.inf, cooldown=False)),
                       models=models)
    alone, routed = run["alone"], run["routed"]
    shares = routed.route_shares()
    assert shares.loc[OVERFLOW, "attempts"] == 0
    assert routed.token_cost_usd == pytest.approx(alone.token_cost_usd, rel=1e-12)
    # The idle workstation still draws power over the run: the route's cost is the primary's tokens
    # plus that energy.
    assert routed.cost_usd == pytest.approx(alone.cost_usd + shares.loc[OVERFLOW, "cost_usd"], rel=1e-12)
    assert shares.loc[OVERFLOW, "cost_usd"] > 0
    assert routed.wall_s == alone.wall_s
    assert routed.summary["rate_limited"] == alone.summary["rate_limited"]


def test_route_limits_are_named_target_colon_bucket(models):
    with pytest.raises(loopcast.ConfigError) as e:
        loopcast.Scenario(name="routes", workload="reference-agent-loop", sessions=1,
                          options=[loopcast.Option("r", loopcast.Route([PRIMARY]), limits={"rpm": 5})])
    assert str(e.value) == ("<python>: /options/0/limits: a route's limits are named \"TARGET:BUCKET\" "
                            f"(e.g. \"{PRIMARY}:uncached_tpm\"), found \"rpm\"")


def test_replay_on_a_route(traces, models, cli):
    logs = str(traces / "claude-code-weka")
    run = subprocess.run([cli, "--models", models, "replay", logs, "--on", PRIMARY, "--on", f"{PRIMARY}>{OVERFLOW}",
                          "--on", f"{PRIMARY}>{OVERFLOW}", "--spill-after", "never", "--no-cooldown", "--json"],
                         check=True, capture_output=True, text=True)
    alone, routed, waiting = json.loads(run.stdout)["options"]
    assert alone["route"] is None
    # Never spilling and never cooling down, the route is the primary alone (its idle GPU aside).
    assert waiting["route"]["spill_after_s"] == "never" and waiting["route"]["cooldown_after_fails"] == 0
    assert waiting["route"]["targets"][1]["attempts"] == 0
    assert waiting["token_cost_usd"] == pytest.approx(alone["token_cost_usd"], rel=1e-12)
    assert waiting["rate_limited"] == alone["rate_limited"] > 0
    # --spill-after applies to every route of the command: here both are "never".
    assert routed["route"] == waiting["route"]
    bad = subprocess.run([cli, "--models", models, "replay", logs, "--on", f"{PRIMARY}>", "--json"],
                         capture_output=True, text=True)
    assert bad.returncode == 2
    assert f'--on "{PRIMARY}>": expected TARGET>TARGET[>TARGET…]' in bad.stderr
    bad = subprocess.run([cli, "--models", models, "replay", logs, "--on", f"{PRIMARY}>{OVERFLOW}", "--spill-after",
                          "soon"], capture_output=True, text=True)
    assert bad.returncode == 2
    assert "--spill-after soon: expected seconds from 0 to 10^7, or never" in bad.stderr


def test_python_replay_on_a_route_matches_the_cli(traces, models, cli):
    logs = str(traces / "claude-code-weka")
    route = loopcast.Route([PRIMARY, OVERFLOW], spill_after_s=10)
    r = loopcast.replay(logs, [PRIMARY, route], limits={"rpm": 400}, models=models)
    alone, routed = r.options
    assert alone.route is None
    shares = routed.route_shares()
    assert list(shares.index) == [PRIMARY, OVERFLOW]
    assert shares["requests_served"].sum() == routed.summary["requests"]
    out = subprocess.run([cli, "--models", models, "replay", logs, "--on", PRIMARY, "--on", f"{PRIMARY}>{OVERFLOW}",
                          "--spill-after", "10", "--limit", "rpm=400", "--json"],
                         check=True, capture_output=True, text=True).stdout
    cli_routed = json.loads(out)["options"][1]
    assert routed.route == cli_routed["route"]
    assert routed.cost_usd == cli_routed["cost_usd"]
    assert routed.bucket_limit[f"{PRIMARY}:rpm"] == 400


def test_python_replay_takes_on_as_the_cli_writes_it(traces, models, cli):
    # One grammar (split_model_map in C++): "A>B" is a route, "PATTERN=TARGET,…" a model map.
    logs = str(traces / "claude-code-weka")
    specs = [f"{PRIMARY}>{OVERFLOW}", f"claude-*={PRIMARY}>{OVERFLOW},*={OVERFLOW}"]
    r = loopcast.replay(logs, specs, limits={"rpm": 400}, models=models)
    out = subprocess.run([cli, "--models", models, "replay", logs, "--on", specs[0], "--on", specs[1],
                          "--limit", "rpm=400", "--json"], check=True, capture_output=True, text=True).stdout
    cli_options = json.loads(out)["options"]
    assert [o.label for o in r.options] == [o["label"] for o in cli_options]
    assert r.options[0].label == f"{PRIMARY} → {OVERFLOW}"
    assert r.options[1].label == f"{PRIMARY} → {OVERFLOW}+{OVERFLOW}"
    for mine, theirs in zip(r.options, cli_options):
        assert mine.cost_usd == theirs["cost_usd"]
        assert mine.summary["requests"] == theirs["requests"]
    with pytest.raises(ValueError, match=f'--on "{PRIMARY}>": expected TARGET>TARGET'):
        loopcast.replay(logs, [f"{PRIMARY}>"], models=models)

"""Presets as dicts: exact round trips, editing, validation errors with their JSON pointers."""

import json
import pathlib
import shutil
import subprocess
import sys

import pytest

import loopcast


def test_every_preset_round_trips(models):
    rows = loopcast.presets(models=models)
    assert {r["kind"] for r in rows} == {"target", "client", "workload", "scenario"}
    for r in rows:
        p = loopcast.load_preset(r["kind"], r["name"], models=models)
        with open(r["file"], encoding="utf-8") as f:
            assert p.to_dict() == json.load(f)
        again = type(p).from_dict(p.to_dict(), models=models)
        assert again == p
        assert eval(repr(p).replace("loopcast.", "loopcast."), {"loopcast": loopcast}) == p


def test_repr_reads_like_the_constructor(models):
    c = loopcast.Client.load("opencode", models=models)
    assert repr(c).startswith("loopcast.Client.from_dict({'kind': 'client', 'name': 'opencode'")
    o = loopcast.Option("cloud", "cerebras-developer-qwen-3.8-27b")
    assert repr(o) == "loopcast.Option(label='cloud', target='cerebras-developer-qwen-3.8-27b', client='opencode', batch=False)"


def test_editing_returns_validated_copies(models):
    t = loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=models)
    t2 = t.set("/cache/ttl_s", 3600).with_bucket_limit("rpm", 900)
    assert t2.to_dict()["cache"]["ttl_s"] == 3600
    assert t2.to_dict()["limits"]["buckets"][2]["limit"] == 900
    assert t.to_dict()["cache"]["ttl_s"] == 300  # the original is unchanged
    with pytest.raises(KeyError, match="has no bucket 'tpd'"):
        t.with_bucket_limit("tpd", 1)
    # A limit set by hand is the cap in force now: the bucket's dated rules stay, and scale it at
    # other dates (as --limit does).
    pro = loopcast.Target.load("claude-pro-sonnet-4.5", models=models)
    assert [d["bucket"] for d in pro.to_dict()["limits"]["dated"]] == ["five_hour"]
    capped = pro.with_bucket_limit("five_hour", 1_000_000).to_dict()
    assert [(d["bucket"], d["factor"]) for d in capped["limits"]["dated"]] == [("five_hour", 0.5)]
    assert capped["limits"]["buckets"][0]["limit"] == 1_000_000


def test_presets_typed_in_code_need_no_provenance_and_can_be_renamed(models, cli, tmp_path):
    t = loopcast.Target.load("anthropic-tier1-claude-sonnet-4.5", models=models)
    edited = t.with_bucket_limit("itpm", 2_000_000).renamed("anthropic-custom-sonnet-4.5", "our tier")
    assert (edited.name, edited.to_dict()["description"]) == ("anthropic-custom-sonnet-4.5", "our tier")
    assert t.name == "anthropic-tier1-claude-sonnet-4.5"
    # A notebook's dict without source, read_on or start_time_utc is a scenario (the clock starts at
    # the Unix epoch); the same dict in a preset file is refused for the first of them.
    scn = loopcast.Scenario.load("reference", models=models).to_dict()
    for k in ("source", "read_on", "start_time_utc", "verified"):
        scn.pop(k)
    target = edited.to_dict()
    for k in ("source", "read_on", "verified"):
        target.pop(k)
    scn["options"][0]["target"] = target
    r = loopcast.run(loopcast.Scenario(scn), models=models)
    assert r.options[0].label == scn["options"][0]["label"]
    # Typed in code, the seed (42) and the sessions (1) may be left out too.
    short = {k: v for k, v in scn.items() if k not in ("seed", "sessions", "stagger_s")}
    r2 = loopcast.run(loopcast.Scenario(short), models=models)
    assert (r2.summary["scenario"]["seed"], r2.summary["scenario"]["sessions"]) == (42, 1)
    assert len(r2.options[0].summary["sessions"]) == 1 and r2.options[0].summary["requests"] > 0
    f = tmp_path / "notebook.json"
    f.write_text(json.dumps(scn))
    out = subprocess.run([cli, "--models", models, "run", str(f)], capture_output=True, text=True)
    assert out.returncode == 3
    # A file needs its provenance: every missing key in one error, each at its place.
    assert (f"{f}: 3 problems:\n  missing key \"source\"\n  missing key \"start_time_utc\"\n"
            f"  /options/0/target: missing key \"source\"\n") in out.stderr, out.stderr


def test_loaded_presets_follow_their_files(models, tmp_path):
    """Preset.load serves a preset read once until its file changes, moves or renames the preset."""
    import os
    import shutil
    d = tmp_path / "models"
    shutil.copytree(models, d)
    f = d / "targets" / "cerebras-developer-qwen-3.8-27b.json"
    a = loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=d)
    assert loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=d) is a
    data = json.loads(f.read_text())
    data["context_window_tokens"] = 65536
    f.write_text(json.dumps(data))
    os.utime(f, ns=(1, 1))  # a different modification time, whatever the clock's resolution
    assert loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=d).to_dict()["context_window_tokens"] == 65536
    moved = d / "targets" / "moved.json"
    f.rename(moved)
    assert loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=d)._file == str(moved)
    data["name"] = "renamed-in-place"
    moved.write_text(json.dumps(data))
    os.utime(moved, ns=(2, 2))
    assert loopcast.Target.load("renamed-in-place", models=d).name == "renamed-in-place"
    with pytest.raises(loopcast.ConfigError, match='no target preset named "cerebras-developer-qwen-3.8-27b"'):
        loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=d)


def test_errors_are_loopcast_exceptions_with_the_cli_messages(models):
    t = loopcast.Target.load("cerebras-developer-qwen-3.8-27b", models=models)
    with pytest.raises(loopcast.ConfigError) as e:
        t.set("/cache/ttl_s", 0)
    assert str(e.value) == ('<python>: /cache/ttl_s: expected a TTL > 0 s while caching is enabled, found 0 '
                            '(set "enabled": false to turn caching off)')
    assert isinstance(e.value, loopcast.Error)
    with pytest.raises(loopcast.ConfigError, match=r'/limits/buckets/0/limit: expected a whole number between 1 and'):
        t.set("/limits/buckets/0/limit", -5)
    with pytest.raises(loopcast.ConfigError, match='no client preset named "curl"'):
        loopcast.Client.load("curl", models=models)
    with pytest.raises(loopcast.TraceError, match="/nonexistent.jsonl: no such file or directory"):
        loopcast.import_logs("/nonexistent.jsonl")
    with pytest.raises(TypeError):
        loopcast.Scenario(name="x")


def test_monte_carlo_and_run_refuse_bad_arguments():
    # Each was accepted (wrapped, floored, or a raw Boost error) before: now a TypeError or ValueError.
    with pytest.raises(ValueError, match="a seed must be from 0"):
        loopcast.monte_carlo("reference", seeds=[-1])
    with pytest.raises(TypeError, match="a seed must be a whole number"):
        loopcast.monte_carlo("reference", seeds=[1.7])
    with pytest.raises(ValueError, match="horizon_s must be a finite number"):
        loopcast.monte_carlo("reference", seeds=2, horizon_s=-1)
    with pytest.raises(ValueError, match="confidence must be a finite number"):
        loopcast.monte_carlo("reference", seeds=2, confidence=5)
    with pytest.raises(ValueError, match="seed must be from 0"):
        loopcast.run("reference", seed=-1)
    with pytest.raises(TypeError, match="found NoneType"):
        loopcast.run(None)


def test_the_extension_stub_matches_the_bindings():
    # python/loopcast/_core.pyi is generated from the bindings' own signatures; it must not drift.
    root = pathlib.Path(__file__).resolve().parents[2]
    out = subprocess.run([sys.executable, str(root / "scripts" / "gen-core-stub")], check=True, capture_output=True,
                         text=True).stdout
    assert out == (root / "python" / "loopcast" / "_core.pyi").read_text(), \
        "regenerate: PYTHONPATH=build/python /usr/bin/python3 scripts/gen-core-stub > python/loopcast/_core.pyi"
    assert "def import_prices(file: str, format: str = ..., models: list[str] = ..., all_modes: bool = ...) -> Any:" in out


def test_the_tier_presets_are_what_their_generator_writes(tmp_path):
    # models/targets/{anthropic,openai}/*-tierN-* come from scripts/gen-tier-presets; a hand edit to
    # one of them, or a table changed without rerunning it, fails here with the files named.
    root = pathlib.Path(__file__).resolve().parents[2]
    gen = root / "scripts" / "gen-tier-presets"
    run = subprocess.run([sys.executable, str(gen), "--check"], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    # The check does see a drift: in a copy with one limit edited by hand, it names that file.
    copy = tmp_path / "repo"
    shutil.copytree(root / "models" / "targets", copy / "models" / "targets")
    (copy / "scripts").mkdir()
    shutil.copy(gen, copy / "scripts" / "gen-tier-presets")
    edited = copy / "models" / "targets" / "anthropic" / "anthropic-tier3-claude-opus-4.7.json"
    edited.write_text(edited.read_text().replace('"limit": 5000000', '"limit": 900000'))
    run = subprocess.run([sys.executable, str(copy / "scripts" / "gen-tier-presets"), "--check"], capture_output=True,
                         text=True)
    assert run.returncode == 1
    assert run.stderr == ("these tier presets differ from what scripts/gen-tier-presets writes: "
                          "models/targets/anthropic/anthropic-tier3-claude-opus-4.7.json\n")

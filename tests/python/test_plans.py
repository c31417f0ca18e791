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
    # The caps given are today's; the scenario starts on 2026-05-04, before the 5-hour caps doubled
    # (the preset's dated rule): it runs under half of the 5-hour cap until 2026-05-06.
    assert o.bucket_limit == {"five_hour": 200_000, "weekly": 2_000_000}
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
    assert dict(r) == json.loads(out)["bounds"]
    assert loopcast.fit_plan(logs) == json.loads(out)["fit"]
    df = r.to_pandas()
    five = df[(df.window == "5-hour") & (df.counts == "all tokens")].iloc[0]
    # 2% → 6% while the requests used 1,434,736 tokens (the last of them 107,330): see test_plans.cpp.
    assert five.low == pytest.approx(100 * (1434736 - 107330) / 5.5, rel=1e-12)
    assert five.high == pytest.approx(100 * 1434736 / 2.5, rel=1e-12)
    weekly = df[(df.window == "weekly") & (df.counts == "all tokens")].iloc[0]
    assert weekly.high != weekly.high  # NaN: nothing bounds it above
    with pytest.raises(loopcast.TraceError, match="no dated requests"):
        loopcast.infer_plan_caps(str(traces / "claude-code-weka" / "trace_0043.json"))


def _watch_fingerprint(path):
    """What `watch` forecasts anew on: the requests' count, tokens and last times (None: no usable request)."""
    try:
        logs = loopcast.import_logs(str(path))
    except loopcast.TraceError:
        return None
    arrays = [logs.requests(0, s).array for s in range(len(logs.sessions(0)))]
    classes = ("input", "cache_read", "cache_write", "cache_write_1h", "output", "reasoning")
    return (sum(len(a) for a in arrays), sum(int(a[c].sum()) for a in arrays for c in classes),
            max(float(a["t_send"].max()) for a in arrays if len(a)),
            max(float(a["t_end"].max()) for a in arrays if len(a)))


class _Watch:
    """A `loopcast watch --json` process whose lines a thread hands over one by one: each read waits for the
    line that is due (a select() on the pipe would miss a line already in the reader's buffer)."""

    def __init__(self, cmd):
        import queue
        import threading
        self.proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines = queue.Queue()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)  # the end of the stream

    def next(self):
        import queue
        try:
            line = self.lines.get(timeout=120)
        except queue.Empty:
            raise AssertionError("watch printed nothing in 120 s") from None
        assert line is not None, f"watch ended: {self.proc.stderr.read()}"
        return json.loads(line)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=60)
        self.reader.join(timeout=60)
        self.proc.stderr.close()


def test_watch_follows_a_log_written_line_by_line(traces, cli, models, tmp_path):
    """A real Claude Code log fed into a file `loopcast watch` follows, in chunks that each change what the
    forecast depends on: one forecast per chunk, each waited for (no sleeps), the last equal to --once on the
    whole file and to loopcast.forecast(); then the log truncated, replaced, deleted and re-created, as
    `tail -F` follows a file."""
    src = (traces / "claude-code-jsonl" / "tool_heavy.jsonl").read_text().splitlines(keepends=True)
    probe = tmp_path / "probe.jsonl"
    chunks, chunk, fps, last = [], [], [], None
    for i, line in enumerate(src):
        chunk.append(line)
        probe.write_text("".join(src[:i + 1]))
        fp = _watch_fingerprint(probe)
        if fp is not None and fp != last:
            chunks.append("".join(chunk))
            fps.append(fp)
            chunk, last = [], fp
    tail = "".join(chunk)  # lines after the last change
    assert len(chunks) >= 4
    log = tmp_path / "session.jsonl"
    log.write_text("")
    on = ["--on", "claude-max-5x-opus-4.5", "--limit", "five_hour=2000000", "--limit", "weekly=20000000",
          "--json", "--draws", "50"]
    w = _Watch([cli, "--models", models, "watch", str(log), *on, "--poll", "0.02"])
    try:
        docs = []
        with open(log, "a") as f:
            for text, fp in zip(chunks, fps):
                f.write(text)
                f.flush()
                docs.append(w.next())
                assert docs[-1]["requests"] == fp[0]
            f.write(tail)
        once = subprocess.run([cli, "--models", models, "watch", str(log), *on, "--once"], check=True,
                              capture_output=True, text=True).stdout
        assert docs[-1] == json.loads(once)
        py = loopcast.forecast(log, loopcast.Target.load("claude-max-5x-opus-4.5", models=models),
                               limits={"five_hour": 2_000_000, "weekly": 20_000_000}, draws=50, models=models)
        assert py == docs[-1]
        # Truncated to its first chunk: read afresh.
        log.write_text(chunks[0])
        assert w.next() == {"log": str(log), "event": "truncated"}
        assert w.next()["requests"] == fps[0][0]
        # Replaced by another file under its name (an editor's save): read afresh.
        other = tmp_path / "other.jsonl"
        other.write_text("".join(chunks[:2]))
        other.replace(log)
        assert w.next() == {"log": str(log), "event": "replaced"}
        assert w.next()["requests"] == fps[1][0]
        # Deleted (rotation), then back: waited for.
        log.unlink()
        assert w.next() == {"log": str(log), "event": "vanished"}
        other.write_text("".join(chunks))
        other.replace(log)  # whole at once: the forecast below is of the whole log
        assert w.next() == {"log": str(log), "event": "replaced"}
        assert w.next() == docs[-1]
    finally:
        w.stop()


def test_watch_quits_after_a_quiet_spell_and_refuses_to_follow_a_stream(traces, cli, models, tmp_path):
    log = traces / "claude-code-jsonl" / "tool_heavy.jsonl"
    on = ["--on", "claude-max-5x-opus-4.5", "--limit", "five_hour=2000000", "--limit", "weekly=20000000", "--json"]
    r = subprocess.run([cli, "--models", models, "watch", str(log), *on, "--poll", "0.01", "--quit-after", "0.05"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert [json.loads(x)["requests"] for x in r.stdout.splitlines()] == [_watch_fingerprint(log)[0]]
    # A stream is read once (--once), never followed; --once reads standard input.
    r = subprocess.run([cli, "--models", models, "watch", "-", *on], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2
    assert "watch -: a stream can be read once (--once), not followed: give a file" in r.stderr
    r = subprocess.run([cli, "--models", models, "watch", "-", *on, "--once"], input=log.read_text(),
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout)["requests"] == _watch_fingerprint(log)[0]
    # A FIFO with no writer is an empty stream at once, never a hang.
    import os
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    r = subprocess.run([cli, "--models", models, "watch", str(fifo), *on, "--once"], capture_output=True, text=True,
                       timeout=60)
    assert r.returncode == 3
    assert "empty" in r.stderr, r.stderr


def test_watch_reads_every_log_of_the_account(traces, cli, models, tmp_path):
    """A plan's windows hold every session of the account: watch reads several logs on one clock, a copied
    transcript (a resumed session) counts once, and with no log named it reads this machine's logs of the
    plan's agent (Claude Code for an Anthropic plan; the Codex log beside them is not the account's)."""
    import os
    import shutil
    src = traces / "claude-code-jsonl"
    on = ["--on", "claude-max-5x-opus-4.5", "--limit", "five_hour=2000000", "--limit", "weekly=20000000",
          "--draws", "50", "--once", "--json"]

    def once(*logs, env=None):
        r = subprocess.run([cli, "--models", models, "watch", *map(str, logs), *on], capture_output=True, text=True,
                           env=env, timeout=120)
        assert r.returncode == 0, r.stderr
        return json.loads(r.stdout)

    def used(doc):
        return {b["name"]: b["used"] for b in doc["buckets"]}

    def without_log(doc):
        return {k: v for k, v in doc.items() if k != "log"}

    heavy, short = once(src / "tool_heavy.jsonl"), once(src / "short.jsonl")
    copy = tmp_path / "resumed.jsonl"
    shutil.copy(src / "tool_heavy.jsonl", copy)
    assert without_log(once(src / "tool_heavy.jsonl", copy)) == without_log(heavy)
    # short.jsonl (21:11-21:16 UTC) and tool_heavy.jsonl (22:57-22:59) share the five-hour window opened at
    # 21:00: it holds both, and short's last request, in flight when it was watched alone, has completed.
    two = once(src / "short.jsonl", src / "tool_heavy.jsonl")
    assert two["requests"] == short["requests"] + heavy["requests"]
    assert two["log"] == f"2 logs ({src / 'short.jsonl'}, {src / 'tool_heavy.jsonl'})"
    assert used(two)["five_hour"] > used(short)["five_hour"] + used(heavy)["five_hour"]
    assert without_log(once(src / "tool_heavy.jsonl", src / "short.jsonl")) == without_log(two)
    py = loopcast.forecast([src / "short.jsonl", src / "tool_heavy.jsonl"], "claude-max-5x-opus-4.5",
                           limits={"five_hour": 2_000_000, "weekly": 20_000_000}, draws=50, models=models)
    assert py == two
    # Each window's own wall (the draws wait out the others' resets); without it, the draws stop at
    # the first wall, which is the same.
    assert all(set(b["wall"]) == {"p10_s", "p50_s", "p90_s", "p10_at_least", "p50_at_least", "p90_at_least",
                                  "hit_share"} for b in two["buckets"])
    first = loopcast.forecast([src / "short.jsonl", src / "tool_heavy.jsonl"], "claude-max-5x-opus-4.5",
                              limits={"five_hour": 2_000_000, "weekly": 20_000_000}, draws=50, models=models,
                              each_window=False)
    assert all(b["wall"] is None for b in first["buckets"])
    same = {k: v for k, v in first["next_wall"].items() if k != "requests_simulated"}
    assert same == {k: v for k, v in two["next_wall"].items() if k != "requests_simulated"}
    assert first["next_wall"]["requests_simulated"] < two["next_wall"]["requests_simulated"]
    # The five-hour window opened on the hour of the first use (21:11 -> 21:00) and is empty again at 02:00;
    # the last send was at 22:59:33.333 (tool_heavy.jsonl line 33): 3 h 0 min 26.667 s before the reset.
    five = next(b for b in two["buckets"] if b["name"] == "five_hour")
    assert five["resets_in_s"] == pytest.approx(10826.667, abs=1e-3)
    assert two["last_send_s"] + five["resets_in_s"] == pytest.approx(1770775200.0, abs=1e-3)  # 2026-02-11 02:00 UTC
    # No log named: this machine's logs of the account, found in the default places.
    home = tmp_path / "home"
    (home / ".claude" / "projects" / "p").mkdir(parents=True)
    (home / ".codex" / "sessions").mkdir(parents=True)
    shutil.copy(src / "short.jsonl", home / ".claude" / "projects" / "p" / "a.jsonl")
    shutil.copy(src / "tool_heavy.jsonl", home / ".claude" / "projects" / "p" / "b.jsonl")
    codex = next((traces / "codex").glob("rollout-*.jsonl"))
    shutil.copy(codex, home / ".codex" / "sessions" / codex.name)
    env = {k: v for k, v in os.environ.items() if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "XDG_DATA_HOME")}
    env["HOME"] = str(home)
    assert without_log(once(env=env)) == without_log(two)
    # A kv-cache-tester trace has no clock to share.
    r = subprocess.run([cli, "--models", models, "watch", str(src / "short.jsonl"),
                        str(traces / "claude-code-weka" / "trace_0291.json"), *on], capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 3
    assert r.stderr.strip() == (f"loopcast: {traces / 'claude-code-weka' / 'trace_0291.json'}: its times are relative "
                                "to its start (as kv-cache-tester's): it cannot be put on one clock with other logs")


def test_the_current_models_plans_are_their_templates_with_the_models_api_speed(models):
    """Each plan preset for Opus 4.6/4.7 and Sonnet 4.6 is the 4.5 plan of its tier with the model, its
    maximum output and its speed from the model's API preset; the windows and dated rules are the same."""
    import pathlib
    root = pathlib.Path(models) / "targets"
    pairs = {"claude-max-5x-opus-4.7": "claude-max-5x-opus-4.5", "claude-max-20x-opus-4.7": "claude-max-20x-opus-4.5",
             "claude-max-5x-opus-4.6": "claude-max-5x-opus-4.5", "claude-max-5x-sonnet-4.6": "claude-max-5x-sonnet-4.5",
             "claude-pro-sonnet-4.6": "claude-pro-sonnet-4.5"}
    for name, template in pairs.items():
        new = json.loads((root / "plans" / f"{name}.json").read_text())
        old = json.loads((root / "plans" / f"{template}.json").read_text())
        model = new["model"].removeprefix("claude-")
        assert name.endswith(model) and model != template.rsplit("-", 2)[-2] + "-4.5"
        api = json.loads((root / "anthropic" / f"anthropic-tier1-claude-{model}.json").read_text())
        assert new["limits"] == old["limits"] and new["plan"] == old["plan"] and new["cache"] == old["cache"]
        assert new["context_window_tokens"] == 200_000
        assert new["speed"] == api["speed"] and new["max_output_tokens"] == api["max_output_tokens"]
        assert loopcast.Target.load(name, models=models).name == name


def test_backtest_matches_the_cli_and_tables(traces, cli, models):
    logs = [str(traces / "claude-code-weka" / f) for f in ("trace_0527.json", "trace_0729.json")]
    r = loopcast.backtest(logs, "claude-max-5x-opus-4.5", caps={"five_hour": 0.9}, limits={"weekly": 10**12},
                          draws=40, models=models)
    out = subprocess.run([cli, "--models", models, "watch", "--backtest", *logs, "--on", "claude-max-5x-opus-4.5",
                          "--cap", "five_hour=0.9", "--limit", "weekly=1000000000000", "--draws", "40", "--json"],
                         check=True, capture_output=True, text=True).stdout
    assert dict(r) == json.loads(out)
    df = r.to_pandas()
    assert len(df) == r["forecasts"] == 6  # two logs, three cuts each, every wall after its cut
    assert r["coverage_p10_p90"] == pytest.approx(df.covered.mean())
    assert (df.truth_s > 0).all() and (df.p10_s <= df.p90_s).all()
    # Each window's own wall, scored as the CLI scores it; the next wall's scores are the same.
    w = loopcast.backtest(logs, "claude-max-5x-opus-4.5", caps={"five_hour": 0.9, "weekly": 0.95}, draws=40,
                          models=models, each_window=True)
    out = subprocess.run([cli, "--models", models, "watch", "--backtest", *logs, "--on", "claude-max-5x-opus-4.5",
                          "--cap", "five_hour=0.9", "--cap", "weekly=0.95", "--draws", "40", "--each-window",
                          "--json"], check=True, capture_output=True, text=True).stdout
    assert dict(w) == json.loads(out)
    alone = subprocess.run([cli, "--models", models, "watch", "--once", logs[0], "--on", "claude-max-5x-opus-4.5",
                            "--limit", "five_hour=1000000", "--limit", "weekly=10000000", "--each-window"],
                           capture_output=True, text=True)
    assert alone.returncode == 2
    assert alone.stderr == ("loopcast: --each-window scores a backtest's forecasts of each window: give it with "
                            "--backtest (watch forecasts each window's wall unless --first-wall-only)\n")
    for s in w["windows"]:
        rows = [x for row in w["rows"] for x in row["windows"] if x["bucket"] == s["bucket"]]
        assert s["forecasts"] == len(rows) > 0
        assert s["coverage_p10_p90"] == pytest.approx(sum(x["covered"] for x in rows) / len(rows))
    with pytest.raises(ValueError, match='a cap on bucket "monthly": the target claude-pro-sonnet-4.5 has no bucket '
                                         r'of that name \(its buckets: five_hour, weekly\)'):
        loopcast.backtest(logs, "claude-pro-sonnet-4.5", caps={"monthly": 0.9}, models=models)


def test_watch_says_when_an_earlier_request_is_appended(traces, cli, models, tmp_path):
    """A request appended with a send before the last one read (here tool_heavy.jsonl's last response,
    copied with a timestamp three days earlier and new ids) is said before the new forecast."""
    lines = (traces / "claude-code-jsonl" / "tool_heavy.jsonl").read_text().splitlines(keepends=True)
    log = tmp_path / "session.jsonl"
    log.write_text("".join(lines))
    on = ["--on", "claude-max-5x-opus-4.5", "--limit", "five_hour=2000000", "--limit", "weekly=20000000",
          "--json", "--draws", "20"]
    w = _Watch([cli, "--models", models, "watch", str(log), *on, "--poll", "0.02"])
    try:
        first = w.next()
        assert first["requests"] == 4
        earlier = []
        for line in lines:
            j = json.loads(line)
            if j.get("type") in ("user", "assistant") and j.get("timestamp", "").startswith("2026-02-10"):
                j["timestamp"] = "2026-02-07" + j["timestamp"][10:]
                if j.get("type") == "assistant":
                    j["message"]["id"] += "-late"
                    j["requestId"] = j.get("requestId", "r") + "-late"
                earlier.append(json.dumps(j) + "\n")
        with open(log, "a") as f:
            f.write("".join(earlier[-12:]))
        event = w.next()
        assert event["event"] == "earlier_request" and event["log"] == str(log)
        assert w.next()["requests"] > 4
    finally:
        w.stop()


def test_fit_and_backtest_plan_on_real_codex_accounts(traces, cli):
    logs = str(traces / "codex-rate-limits")
    f = loopcast.fit_plan(logs)
    assert [a["name"] for a in f["accounts"]] == ["codex: EdofEngland-code_butler", "codex: EdouardZemb-test-framework",
                                                 "codex: Jackela-AI-Recruitment-Clerk"]
    five = [w for w in f["windows"] if w["window"] == "5-hour"][0]
    assert five["best"]["rule"] == "cache reads at 0"
    assert five["best"]["inliers"] == 6
    out = subprocess.run([cli, "limits", "backtest", "--json", logs], check=True, capture_output=True, text=True).stdout
    assert loopcast.backtest_plan(logs) == json.loads(out)
    with pytest.raises(ValueError, match="--account nobody: no account of that name"):
        loopcast.fit_plan(logs, account="nobody")

"""Recorded agent logs: import, measure, replay, fit."""

from __future__ import annotations

import datetime
import json
import os
from typing import Any, Iterable, Mapping, Sequence

from loopcast import _core
from loopcast._presets import _dumps, Client, Route, Target, Workload, models_dir
from loopcast._results import Run, Table
from loopcast._tables import Report

__all__ = ["Logs", "import_logs", "stats", "replay", "fit", "validate"]


class Logs:
    """Imported logs (Claude Code, Codex, opencode, kv-cache-tester, SWE-agent, loopcast JSONL)."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def __len__(self) -> int:
        return self._handle.count

    @property
    def files(self) -> list[str]:
        """The imported files, in order."""
        return [self._handle.file(i) for i in range(len(self))]

    def format(self, i: int = 0) -> str:
        """The detected format of log i."""
        return self._handle.format(i)

    def to_pandas(self):
        """Every recorded request of every session of every log, one row each.

        Columns: ``log`` (file), ``format``, ``session``, ``parent`` (the parent session's id for a
        subagent, else None), ``model`` (its name), ``t_send_s``, ``t_first_token_s``, ``t_end_s``
        (seconds on the log's clock: Unix time, or from the trace start), ``sent``, ``first_token``
        and ``end`` (the same as UTC datetimes; NaT for logs on a relative clock or where the log has
        no time), the token classes, ``compaction`` and ``cost_usd`` (NaN when not recorded).
        """
        import pandas as pd

        frames = []
        for i in range(len(self)):
            models = self._handle.models(i)
            ids = self.sessions(i)
            for s, sid in enumerate(ids):
                df = Table(self._handle.requests(i, s), "").to_pandas()
                if df.empty:
                    continue
                parent = self._handle.session_parent(i, s)
                df.insert(0, "log", self._handle.file(i))
                df.insert(1, "format", self._handle.format(i))
                df.insert(2, "session", sid)
                df.insert(3, "parent", ids[parent] if parent >= 0 else None)
                df["model"] = [models[m] for m in df["model"]]
                for col, new in (("t_send", "sent"), ("t_first_token", "first_token"), ("t_end", "end")):
                    df[new] = (pd.to_datetime(df[col], unit="s", utc=True) if self._handle.absolute_clock(i)
                               else pd.Series(pd.NaT, index=df.index, dtype="datetime64[ns, UTC]"))
                df = df.rename(columns={"t_send": "t_send_s", "t_first_token": "t_first_token_s", "t_end": "t_end_s"})
                frames.append(df)
        if not frames:
            return pd.DataFrame()
        out = pd.concat(frames, ignore_index=True)
        for col in ("sent", "first_token", "end"):  # concat may fall back to object with all-NaT parts
            out[col] = pd.to_datetime(out[col], utc=True)
        return out

    def requests(self, log: int = 0, session: int = 0) -> Table:
        """The recorded requests of one session (a view of the imported records); ``to_pandas()`` has all of them."""
        return Table(self._handle.requests(log, session), f"{self._handle.session_id(log, session)} requests")

    def sessions(self, log: int = 0) -> list[str]:
        """The session ids of log i."""
        return [self._handle.session_id(log, s) for s in range(self._handle.session_count(log))]

    def skipped(self, log: int = 0) -> dict[str, int]:
        """Records the import skipped, by reason."""
        return dict(self._handle.skipped(log))

    def issues(self, log: int = 0) -> list[tuple[str, int, str]]:
        """(file, line, reason) of the first problems the import met."""
        return list(self._handle.issues(log))

    def __repr__(self) -> str:
        return f"loopcast.import_logs({self.files!r})"


def import_logs(paths: "str | os.PathLike | Sequence[str | os.PathLike]", format: str = "auto") -> Logs:
    """Imports log files or directories; ``format`` overrides detection (``"claude-code"``, ``"codex"``, …)."""
    if isinstance(paths, (str, os.PathLike)):
        paths = [paths]
    return Logs(_core.import_traces([os.fspath(p) for p in paths], format))


def _logs(logs: "Logs | str | os.PathLike | Sequence[str | os.PathLike]") -> Logs:
    return logs if isinstance(logs, Logs) else import_logs(logs)


def _day(x: Any, name: str, timezone: "str | None", days_after: int = 0) -> "float | str | None":
    """A bound as Unix seconds (datetimes: naive ones in UTC), or a local date's text for the core to
    place in the time zone (``days_after`` 1: the day's end)."""
    if x is None:
        return None
    if isinstance(x, datetime.datetime):
        return (x if x.tzinfo else x.replace(tzinfo=datetime.timezone.utc)).timestamp()
    if isinstance(x, datetime.date):
        return _core.local_day_start(name, x.isoformat(), timezone or "", days_after)
    if isinstance(x, str):
        return _core.local_day_start(name, x, timezone or "", days_after)
    return float(x)


def stats(logs: "Logs | str | Sequence[str] | None" = None, price: "Target | str | None" = None, *,
          price_list: "str | os.PathLike | None" = None, cache_ttl_s: float = 0.0, block_tokens: int = 1,
          models: "str | os.PathLike | None" = None, by: str = "model", since: Any = None,
          until: Any = None, timezone: "str | None" = None, breakdown: bool = False) -> dict[str, Any]:
    """``loopcast stats --json`` as a dict (``.to_pandas()``: a row per group; ``bins=True``: per context bin too).

    ``logs`` None reads every log in the agents' default places (``~/.claude/projects``,
    ``~/.codex/sessions``, opencode's data; docs/trace-format.md); each API response counts once.
    ``by`` groups by ``"model"``, ``"day"``, ``"week"`` (from Monday), ``"month"``, ``"session"``,
    ``"project"`` (the folder the agent ran in), ``"machine"`` or ``"block"`` (the 5-hour windows a
    Claude plan counts); periods are local to ``timezone`` (an IANA name; default: the machine's), and their
    ``start``/``end`` columns are datetimes there. ``breakdown`` splits each group by model.
    ``since``/``until`` keep the requests sent in that span (dates are whole local days, ``until``
    included; datetimes and Unix seconds are exact). Each request is priced at its own model: from a
    LiteLLM / models.dev ``price_list`` first (else ``$LOOPCAST_PRICE_LIST``), then the preset
    catalogue (``models``), then the bundled LiteLLM map; totals that lack a model are partial
    (``priced_partial``). ``price`` instead prices every request with one target. ``cache_ttl_s``
    > 0 adds the hit rate and cost with a provider cache of that TTL.
    """
    if timezone is not None and not str(timezone).strip():
        raise ValueError("timezone: an empty time zone: give an IANA name (UTC, Europe/Berlin), or None for the machine's")
    price_json = None
    if price is not None:
        price_json = (price if isinstance(price, Target) else Target.load(price))._text
    handle = Logs(_core.import_default_logs())._handle if logs is None else _logs(logs)._handle
    return Report("stats", _core.stats(handle, price_json, None if price_list is None else os.fspath(price_list),
                                       models_dir(models), float(cache_ttl_s), int(block_tokens), by,
                                       _day(since, "since", timezone), _day(until, "until", timezone, 1),
                                       timezone or "", bool(breakdown)))


def plans(logs: "Logs | str | Sequence[str] | None" = None, *, plan: str = "", max_blocked_hours: float = 2.0,
          limits: "Mapping[str, float] | None" = None, since: Any = None, timezone: "str | None" = None,
          models: "str | os.PathLike | None" = None) -> "Report":
    """Which plan? ``loopcast plans --json`` as a dict (``.to_pandas()``: a row per agent and option).

    The Claude Code sessions in ``logs`` (None: this machine's logs) are replayed on Claude Pro,
    Max (5x), Ultra (Max 20x) and the API, the Codex sessions on ChatGPT Plus, Pro 5x, Pro 20x and
    the API, with their recorded agent time. Per option: ``usd_month``, ``blocked_hours_week``
    (waiting for resets, with ``_low``/``_high`` at the caps' interval), ``pace`` (the share of the
    recorded pace kept up with), the first waits, the sessions cut, and where the caps came from
    (``caps``: given, fitted, assumed or published; ``caps_note``). ``limits`` gives caps:
    ``{"five_hour": 1e6}`` for every plan, ``{"claude-pro-*:weekly": 2e6}`` for some. ``plan`` is the
    plan the logs were recorded on ("max", "plus", …): caps fitted from the logs are that plan's.
    ``since`` keeps the sessions that started since then (a date is a whole local day in
    ``timezone``; a datetime or Unix seconds is exact) (docs/plans.md, "Which plan").
    """
    handle = Logs(_core.import_default_logs())._handle if logs is None else _logs(logs)._handle
    text = _core.plans(handle, models_dir(models), str(plan), float(max_blocked_hours),
                       {str(k): float(v) for k, v in (limits or {}).items()}, _day(since, "since", timezone))
    return Report("plans", json.loads(text))


def _with_limits(tg: Target, limits: "Mapping[str, int]", found: "dict[str, bool]", names: "set[str]") -> Target:
    have = {b["name"] for b in tg.to_dict()["limits"]["buckets"]}
    names |= have
    for bucket, limit in limits.items():
        if bucket in have:
            tg = tg.with_bucket_limit(bucket, limit)
            found[bucket] = True
    return tg


def _target_entry(target: "Target | str | Route", pattern: str, limits: "Mapping[str, int]",
                  found: "dict[str, bool]", names: "set[str]",
                  models: "str | os.PathLike | None") -> tuple[tuple[str, str, bool], str]:
    # (pattern, JSON, whether it is a route) for _core.replay, and the entry's name.
    if isinstance(target, Route):
        targets = [_with_limits(x if isinstance(x, Target) else Target.load(x, models=models), limits, found, names)
                   for x in target.targets]
        d = Route([x.to_dict() for x in targets], target.spill_after_s, target.cooldown).to_dict()
        return (pattern, _dumps(d), True), " → ".join(x.name for x in targets)
    tg = _with_limits(target if isinstance(target, Target) else Target.load(target, models=models), limits, found, names)
    return (pattern, tg._text, False), tg.name


def _routes(t: "Target | str | Route | Mapping[str, Target | str | Route]", limits: "Mapping[str, int]",
            found: "dict[str, bool]", names: "set[str]",
            models: "str | os.PathLike | None") -> tuple[str, list[tuple[str, str, bool]]]:
    label = ""
    if isinstance(t, (str, os.PathLike)):
        # `--on` as the command line writes it, split by the same C++ grammar.
        label, split = _core.split_model_map(os.fspath(t))
        if len(split) == 1 and split[0][0] == "*":
            refs = split[0][1]
            t = refs[0] if len(refs) == 1 else Route(refs)
        else:
            t = {pattern: refs[0] if len(refs) == 1 else Route(refs) for pattern, refs in split}
    if isinstance(t, Mapping):
        routes = []
        labels = []
        for pattern, target in t.items():
            entry, name = _target_entry(target, str(pattern), limits, found, names, models)
            routes.append(entry)
            labels.append(name)
        if not routes:
            raise ValueError("a model mapping needs at least one pattern")
        return (label if label and len(routes) > 1 else "+".join(labels)), routes
    entry, name = _target_entry(t, "*", limits, found, names, models)
    return name, [entry]


def replay(logs: "Logs | str | Sequence[str]", on: "Iterable[Target | str | Route | Mapping[str, Target | str]]",
           client: "Client | str | None" = None, *, seed: int = 1, max_tokens: int | None = None,
           speed: str = "target", context: str = "compact", compact_at: float | None = None,
           price_list: "str | os.PathLike | None" = None, timeline: bool = True,
           limits: "Mapping[str, int] | None" = None, models: "str | os.PathLike | None" = None,
           attempt_budget: int | None = None) -> Run:
    """Re-times the recorded sessions on each option of ``on``.

    An option is a target (name, ``.json`` path or :class:`Target`) or a mapping from model-name
    patterns to targets (``{"claude-opus-*": "anthropic-tier1-claude-opus-4.5", "claude-haiku-*": …}``)
    so that each session runs at its own model, or a :class:`Route` of targets (a 429 spills to the
    next; docs/routing.md; ``limits`` apply to its targets). A string takes every form ``--on``
    takes, by the same grammar: ``"A>B"`` is a route, ``"claude-*=A,*=B"`` a model map, a
    ``.json`` file of ``{"PATTERN": "TARGET"}`` one too. ``client`` defaults to the agent that wrote the first
    log of a known agent (``claude-code``, ``codex`` or ``opencode``, as ``loopcast replay`` does);
    ``max_tokens`` to the client's, capped at each target's maximum output. ``speed="recorded"``
    keeps every request's recorded duration; ``context`` is what happens when a prompt outgrows a
    target's window (``"compact"``, ``"truncate"`` or ``"fail"``), ``compact_at`` the fraction of
    the window that triggers compaction. ``limits`` sets bucket limits by name on every target
    that has the bucket (``{"five_hour": 300_000}``: a subscription plan's unpublished cap, or a
    what-if), as ``loopcast replay --limit`` does; a name no target has is a KeyError.
    ``attempt_budget`` stops each option's run after that many attempts, 429s included (default
    200,000,000): its running sessions are cut off and its totals partial.
    """
    max_tokens = _whole(max_tokens, "max_tokens")
    attempt_budget = _whole(attempt_budget, "attempt_budget")
    if compact_at is not None and not (0.05 <= float(compact_at) <= 1):
        raise ValueError(f"compact_at must be in [0.05, 1] (or None for the client's), not {compact_at!r}")
    handle = _logs(logs)._handle
    if client is None:
        client = handle.default_client()  # the agent that wrote the first log (as `loopcast replay` does)
    c = client if isinstance(client, Client) else Client.load(client)
    options = []
    limits = dict(limits or {})
    found = {bucket: False for bucket in limits}
    names: set[str] = set()
    for t in on:
        label, routes = _routes(t, limits, found, names, models)
        options.append((label, routes, c._text))
    for bucket, ok in found.items():
        if not ok:
            raise KeyError(f"no target has a bucket {bucket!r} (buckets: {', '.join(sorted(names)) or 'none'})")
    return Run(_core.replay(handle, options, seed, 0 if max_tokens is None else max_tokens, timeline, speed,
                            context, 0.0 if compact_at is None else float(compact_at),
                            None if price_list is None else os.fspath(price_list), models_dir(models),
                            0 if attempt_budget is None else attempt_budget))


def _whole(x: Any, name: str) -> "int | None":
    """None, or a whole number >= 1 (2.0 is 2; 2.5, True and 0 are refused, never floored)."""
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)) or x != int(x) or x < 1:
        raise ValueError(f"{name} must be a whole number >= 1, not {x!r}")
    return int(x)


def fit(logs: "Logs | str | Sequence[str]", name: str = "fitted", *, model: str = "",
        context_window: int | None = None, noise: bool = True) -> Target:
    """A :class:`Target` (type local) whose speed is least-squares fitted to the logs.

    ``model`` keeps the requests of models matching a pattern (``"claude-opus-*"``);
    ``context_window`` is the model's window (default: derived from the logs, with a note);
    ``noise`` writes the residuals' spread as per-request noise and a per-session speed factor
    (``speed.noise``, measured out of sample when the logs are 5 or more).
    """
    if context_window is not None and (isinstance(context_window, bool) or int(context_window) < 1):
        raise ValueError(f"context_window must be a whole number >= 1, not {context_window!r}")
    return Target.from_dict(_core.fit(_logs(logs)._handle, name, model,
                                      0 if context_window is None else int(context_window), noise))


def fit_workload(logs: "Logs | str | Sequence[str]", name: str = "fitted", *, model: str = "",
                 context_window: int | None = None, max_tokens: int = 32000, points: int = 40) -> Workload:
    """A :class:`Workload` fitted to the logs' top-level sessions (``loopcast fit-workload``).

    Turns per session, first prompt, context growth by turn band with a per-session scale tied to
    the turns, outputs, agent time, compactions and cache breaks, each as a quantile table of what
    was recorded. ``model`` keeps the sessions of models matching a pattern; ``context_window`` is
    the agent's window (default: the largest prompt seen, with a note in ``calibration``).
    """
    if context_window is not None and (isinstance(context_window, bool) or int(context_window) < 1):
        raise ValueError(f"context_window must be a whole number >= 1, not {context_window!r}")
    sources = [os.fspath(logs)] if isinstance(logs, (str, os.PathLike)) else (
        [] if isinstance(logs, Logs) else [os.fspath(p) for p in logs])
    return Workload.from_dict(_core.fit_workload(
        _logs(logs)._handle, name, model, 0 if context_window is None else int(context_window), int(max_tokens),
        int(points), sources))


def validate(held_out: "Logs | str | Sequence[str]", *, fit_on: "Logs | str | Sequence[str] | None" = None,
             on: "Target | str | None" = None, seeds: int = 20, seed: int = 1, noise: bool = True,
             workload: "Workload | str | None" = None, workload_fit_on: "Logs | str | Sequence[str] | None" = None,
             price: "Target | str" = "anthropic-tier1-claude-sonnet-4.5-1m", sessions: int = 1000) -> dict[str, Any]:
    """``loopcast validate --json`` as a dict (``.to_pandas()``: a row per log or per measure): held-out logs vs predictions.

    Speeds: give ``fit_on`` (logs to fit per-model speeds on, never the held-out ones) or ``on`` (a
    target whose speed to check). Per log and overall: per-request error, bias, total API time
    error, KS distance of durations, and the share of recorded durations inside the simulated P10–P90.

    Workloads: give ``workload`` (a preset) or ``workload_fit_on`` (logs to fit one on). The
    held-out sessions are compared with ``sessions`` synthetic ones: KS distances and P10/P50/P90 of
    requests per session, context growth, prompt size and cost per session at ``price``'s prices.
    """
    modes = sum(x is not None for x in (fit_on, on, workload, workload_fit_on))
    if modes != 1:
        raise TypeError("give one of fit_on=, on= (speeds), workload= or workload_fit_on= (workloads)")
    if workload is not None or workload_fit_on is not None:
        wl = workload if workload_fit_on is None else fit_workload(workload_fit_on)
        wl = wl if isinstance(wl, Workload) else Workload.load(wl)
        pt = price if isinstance(price, Target) else Target.load(price)
        return Report("validate", _core.validate_workload(
            _logs(held_out)._handle, wl._text, pt._text, int(sessions), int(seed)))
    target_json = None
    if on is not None:
        target_json = (on if isinstance(on, Target) else Target.load(on))._text
    return Report("validate", _core.validate_replay(
        _logs(held_out)._handle, None if fit_on is None else _logs(fit_on)._handle, target_json, seeds, seed, noise))


def forecast(log: "str | os.PathLike | Sequence[str | os.PathLike]", on: "Target | str", *,
             limits: "Mapping[str, int] | None" = None,
             format: str = "auto", seed: int = 1, draws: int = 200, horizon_s: float = 7 * 86400.0,
             recent: int | None = None, work_budget: int | None = None,
             models: "str | os.PathLike | None" = None, each_window: bool = True) -> dict:
    """The next wall of a (running) session on a target or plan: ``loopcast watch --once --json`` as a dict.

    The log so far is replayed on the target as ``loopcast replay --speed recorded`` replays it
    (its cache and charges as the target counts them); each of ``draws`` continuations then goes on
    with requests resampled from the session's last ``recent`` ones (growth, output, agent time and
    duration together) until a bucket refuses one. ``["next_wall"]`` gives the bucket and the P10 /
    P50 / P90 of the seconds from the last send to that refusal (None: beyond ``horizon_s``, at most
    366 days); a quantile that a draw stopped by ``work_budget`` (requests simulated over all draws,
    default 20,000,000) could move is flagged ``p50_at_least``. ``["buckets"]`` is each bucket's use
    now and, with ``each_window`` (the default), ``["wall"]``: the same quantiles of its own first
    refusal, the session waiting out the other windows' resets (``each_window=False`` stops each draw
    at its first wall: faster, and ``["wall"]`` is None). ``limits`` sets bucket limits by name (a
    plan's unpublished caps). ``log`` may be ``"-"``
    or a FIFO, read once; a list of logs is one account on one clock (``watch LOG...``): every
    session of every log, each API response counted once. See docs/watch.md.
    """
    draws = _whole(draws, "draws")
    recent = _whole(recent, "recent")
    work_budget = _whole(work_budget, "work_budget")
    tg = on if isinstance(on, Target) else Target.load(on, models=models)
    for bucket, limit in (limits or {}).items():
        tg = tg.with_bucket_limit(bucket, limit)
    logs = [os.fspath(log)] if isinstance(log, (str, os.PathLike)) else [os.fspath(x) for x in log]
    return _core.forecast(logs, tg._text, format, int(seed), draws, float(horizon_s),
                          recent or 0, work_budget or 0, models_dir(models), bool(each_window))


def backtest(logs: "Logs | str | Sequence[str]", on: "Target | str", *, caps: "Mapping[str, float] | None" = None,
             limits: "Mapping[str, int] | None" = None, cuts: "Sequence[float]" = (0.25, 0.5, 0.75), seed: int = 1,
             draws: int = 200, horizon_s: float = 7 * 86400.0, recent: int | None = None,
             work_budget: int | None = None, models: "str | os.PathLike | None" = None,
             each_window: bool = False) -> "Report":
    """``loopcast watch --backtest --json`` as a dict (``.to_pandas()``: a row per forecast).

    Each log is cut at ``cuts`` (shares of its requests); the forecast from before each cut is scored
    against the replay of the whole log on ``on``: whether the truth fell inside P10–P90, the P50's
    error and the CRPS as shares of the time remaining, beside a straight-line burn-rate baseline.
    ``caps`` sets a bucket's limit per log to that share of what the whole log used in the bucket's
    first window (``{"five_hour": 0.9}``: the log meets that wall); ``limits`` sets the others.
    ``each_window=True`` scores each window's own wall too (``["windows"]``, and per row), against a
    replay of the whole log whose client waits for each window to reset (``watch --backtest
    --each-window``).
    """
    tg = on if isinstance(on, Target) else Target.load(on, models=models)
    caps = dict(caps or {})
    for bucket, limit in (limits or {}).items():
        tg = tg.with_bucket_limit(bucket, limit)
    names = {b["name"] for b in tg.to_dict()["limits"]["buckets"]}
    for bucket in caps:  # set per log by the backtest; any number stands in meanwhile (unknown: the core says so)
        if bucket in names:
            tg = tg.with_bucket_limit(bucket, 1)
    return Report("backtest", _core.backtest(
        _logs(logs)._handle, tg._text, [float(c) for c in cuts], [(str(k), float(v)) for k, v in caps.items()],
        int(seed), _whole(draws, "draws"), float(horizon_s), _whole(recent, "recent") or 0,
        _whole(work_budget, "work_budget") or 0, models_dir(models), bool(each_window)))

"""The catalogue: price lists users keep, and rate limits inferred from what providers send back."""

from __future__ import annotations

import json
import os
from typing import Sequence

from loopcast import _core
from loopcast._presets import _dumps, Target
from loopcast._tables import Report

__all__ = ["import_prices", "infer_limits"]


def import_prices(path: "str | os.PathLike", *, model: "str | Sequence[str] | None" = None, format: str = "auto",
                  all: bool = False, base: "Target | str | None" = None, name: str | None = None,
                  models: "str | os.PathLike | None" = None) -> "Report | Target":
    """Reads LiteLLM's ``model_prices_and_context_window.json`` or models.dev's ``api.json`` (``loopcast prices import``).

    Returns the ``--json`` document as a :class:`Report` (``.to_pandas()``: one row per model, USD
    per million tokens): ``{"file", "format", "models": [{"id", "provider", "prices", …}], "warnings"}``.
    ``model`` keeps only those ids; ``all`` keeps LiteLLM entries of every mode (by default chat,
    completion and responses models only).

    With ``base`` (a target or a preset name) it returns a :class:`Target` instead: the base's
    limits, cache and speed with the one ``model``'s prices, named ``name`` (default: the base's
    name and the model), ``verified`` false — ready for :func:`replay` or a scenario.
    """
    ids = [] if model is None else [model] if isinstance(model, str) else list(model)
    if base is None:
        return Report("prices", _core.import_prices(os.fspath(path), format, ids, bool(all)))
    if len(ids) != 1:
        raise ValueError(f"base= writes one target: give model= one id (got {len(ids)})")
    b = base if isinstance(base, Target) else Target.load(base, models=models)
    text = _core.target_with_prices(os.fspath(path), format, ids[0], b._text, b._file,
                                    name or f"{b.to_dict()['name']}-{ids[0]}")
    return Target.from_dict(json.loads(text))


def infer_limits(*paths: "str | os.PathLike") -> Report:
    """Buckets inferred from captured rate-limit headers, and 429 messages checked (``loopcast limits infer``).

    Each path holds raw HTTP response headers or JSON header maps, and/or 429 messages ("Limit L,
    Used U, Requested R … try again in T"). Returns the ``--json`` document as a :class:`Report`
    (``.to_pandas()``: one row per inferred bucket): ``{"snapshots", "provider", "limits", "evidence",
    "messages", "notes"}``; ``["limits"]`` is a target preset's ``limits`` object.
    """
    if not paths:
        raise TypeError("infer_limits needs at least one file")
    return Report("limits", _core.infer_limits([os.fspath(p) for p in paths]))


def infer_plan_caps(*logs: "str | os.PathLike") -> Report:
    """A subscription plan's caps bounded by agent logs (``loopcast limits infer --logs``, docs/plans.md).

    Codex rollouts record each window's ``used_percent``; Claude Code logs record the cut-off
    ("usage limit reached|EPOCH"). For each window and each rule of what the cap may count ("all
    tokens", "all but cache reads", "cache reads at 0.1") the result gives the interval of caps
    consistent with every observation: ``{"caps": [{"window", "period_s", "counts", "low", "high"
    (None: no upper bound), "observations", "consistent"}], "notes": [...]}``. The lower bounds
    hold always; the upper bounds only if the logs hold all the account's usage in the spans
    measured.
    """
    if not logs:
        raise TypeError("infer_plan_caps needs at least one log")
    return Report("plan_caps", _core.infer_plan_caps([os.fspath(p) for p in logs]))


def fit_plan(*logs: "str | os.PathLike", account: str = "") -> dict:
    """A subscription plan's caps fitted robustly per account (``loopcast limits infer --logs``, docs/plans.md).

    Each wall with a stated reset (Claude Code) and each window whose measured percentage rose 5
    points or more (Codex's ``used_percent``) is one sample of the cap; per counting rule the
    samples' median is the cap, with an 80% interval of the centre, the per-window spread
    (``sigma``, ``p10``, ``p90``), the outliers named and the share explained. Returns
    ``{"accounts", "windows", "walls", "notes"}``; each window's ``"best"`` is the rule whose
    samples spread least, ``"rules"`` every rule tried. ``account`` keeps the accounts whose name
    contains it.
    """
    if not logs:
        raise TypeError("fit_plan needs at least one log")
    return json.loads(_core.fit_plan([os.fspath(p) for p in logs], account))


def backtest_plan(*logs: "str | os.PathLike", leads_s=(1800, 3600, 7200), account: str = "", draws: int = 400) -> dict:
    """Each wall and measured-percentage window forecast from each lead before it, using only what
    came earlier, scored against a baseline (``loopcast limits backtest --json``, docs/validation.md).

    Returns ``{"walls", "windows_with_percent", "leads": [{"lead_s", "walls", "baseline", "percent",
    "percent_baseline"}], "notes"}``; statistics without samples are None.
    """
    if not logs:
        raise TypeError("backtest_plan needs at least one log")
    return json.loads(_core.backtest_plan([os.fspath(p) for p in logs], [float(x) for x in leads_s], account, int(draws)))

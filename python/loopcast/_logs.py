"""Recorded agent logs: import, measure, replay, fit."""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Sequence

from loopcast import _core
from loopcast._presets import Client, Target
from loopcast._results import Run, Table

__all__ = ["Logs", "import_logs", "stats", "replay", "fit"]


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

    def requests(self, log: int = 0, session: int = 0) -> Table:
        """The recorded requests of one session (a view of the imported records)."""
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


def stats(logs: "Logs | str | Sequence[str]", price: "Target | str | None" = None) -> dict[str, Any]:
    """``loopcast stats --json`` as a dict: throughput percentiles per model and context bin, cost."""
    price_json = None
    if price is not None:
        price_json = json.dumps((price if isinstance(price, Target) else Target.load(price)).to_dict())
    return json.loads(_core.stats_json(_logs(logs)._handle, price_json))


def replay(logs: "Logs | str | Sequence[str]", on: "Iterable[Target | str]", client: "Client | str" = "opencode", *,
           seed: int = 1, max_tokens: int = 16384, timeline: bool = True) -> Run:
    """Re-times the recorded sessions on each target (name, ``.json`` path or :class:`Target`)."""
    c = client if isinstance(client, Client) else Client.load(client)
    options = []
    for t in on:
        target = t if isinstance(t, Target) else Target.load(t)
        options.append((target.name, json.dumps(target.to_dict()), json.dumps(c.to_dict())))
    return Run(_core.replay(_logs(logs)._handle, options, seed, max_tokens, timeline))


def fit(logs: "Logs | str | Sequence[str]", name: str = "fitted") -> Target:
    """A :class:`Target` (type local) whose speed is least-squares fitted to the logs."""
    return Target.from_dict(json.loads(_core.fit_json(_logs(logs)._handle, name)))

"""Presets: the JSON documents of ``models/``, validated by loopcast's strict C++ loader."""

from __future__ import annotations

import copy
import json
import math
import os
from typing import Any, Iterable

from loopcast import _core

__all__ = ["Preset", "Target", "Client", "Workload", "Scenario", "Option", "Route", "load_preset", "models_dir",
           "presets"]


def models_dir(path: str | os.PathLike | None = None) -> str:
    """The presets directory: ``path`` if given, else ``$LOOPCAST_MODELS``, the presets bundled in an
    installed wheel (``loopcast/models``), or the installed / source ``models/``."""
    if path is not None:
        return os.fspath(path)
    bundled = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")
    if not os.environ.get("LOOPCAST_MODELS") and os.path.isdir(bundled):
        return bundled
    env = os.environ.get("LOOPCAST_MODELS")
    found = _default_dirs.get(env)
    if found is None or not os.path.isdir(found):  # looked up once per value of $LOOPCAST_MODELS
        found = _default_dirs[env] = _core.default_models_dir()
    return found


_default_dirs: "dict[str | None, str]" = {}


def _nonfinite(x: Any, at: str = "") -> "str | None":
    """The JSON pointer of the first NaN or infinite number in x, or None."""
    if isinstance(x, float) and not math.isfinite(x):
        return at or "/"
    if isinstance(x, dict):
        for k, v in x.items():
            found = _nonfinite(v, f"{at}/{k}")
            if found:
                return found
    elif isinstance(x, (list, tuple)):
        for i, v in enumerate(x):
            found = _nonfinite(v, f"{at}/{i}")
            if found:
                return found
    return None


def _dumps(x: Any, what: str = "the document") -> str:
    """JSON text for the core; a NaN or an infinity (which JSON cannot hold) is a ValueError naming
    where it is, never a parse error at a column."""
    where = _nonfinite(x)
    if where is not None:
        raise ValueError(f"{what}: {where} is not a finite number ({_at(x, where)!r}); JSON holds finite numbers only")
    return json.dumps(x)


def _at(x: Any, pointer: str) -> Any:
    for part in pointer.strip("/").split("/"):
        if part == "":
            break
        x = x[int(part)] if isinstance(x, (list, tuple)) else x[part]
    return x


def presets(kind: str | None = None, models: str | os.PathLike | None = None) -> list[dict[str, str]]:
    """Every preset as ``{"kind", "name", "description", "file"}``, optionally of one kind."""
    rows = [dict(zip(("kind", "name", "description", "file"), row)) for row in _core.list_presets(models_dir(models))]
    return [r for r in rows if kind is None or r["kind"] == kind]


_loaded: "dict[tuple, Preset]" = {}  # Preset.load's: (class, file, mtime, size, models) → preset
_found: "dict[tuple, str]" = {}  # (kind, name, models directory) → the file that held it


class Preset:
    """A preset document (a dict shaped like the ``models/`` JSON), validated on construction.

    ``to_dict()`` returns a copy of the document; ``from_dict()`` validates one and raises
    :class:`loopcast.ConfigError` (with the JSON pointer of the bad value) when it is wrong.
    """

    kind = ""

    def __init__(self, data: dict[str, Any], *, file: str = "<python>", models: str | None = None) -> None:
        if not isinstance(data, dict):
            raise TypeError(f"{type(self).__name__} expects a dict, got {type(data).__name__}")
        self._data = copy.deepcopy(data)
        self._file = file
        self._text = _dumps(self._data, f"{type(self).__name__} {file}")  # the JSON the core reads (immutable)
        _core.validate(self.kind, self._text, file, models_dir(models))

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, models: str | None = None) -> "Preset":
        """Validates ``data`` as a preset of this kind."""
        return cls(data, models=models)

    @classmethod
    def load(cls, name: str, *, models: str | os.PathLike | None = None) -> "Preset":
        """Loads the preset called ``name`` (or the ``.json`` file at that path).

        Presets are immutable: a file read and validated once serves every load until it changes (its
        modification time or size), and a name is looked up again when its file moved or was renamed."""
        by_path = str(name).endswith(".json") and os.path.isfile(name)
        mdir = None if models is None else os.fspath(models)
        where = (cls.kind, str(name), models_dir(models))
        file = os.fspath(name) if by_path else _found.get(where)
        if file is None or not os.path.isfile(file):
            file = _found[where] = _core.find_preset(where[2], cls.kind, str(name))
        preset = cls._read(file, mdir)
        if not by_path and preset.name != str(name):  # the file's preset was renamed in place
            file = _found[where] = _core.find_preset(where[2], cls.kind, str(name))
            preset = cls._read(file, mdir)
        return preset

    @classmethod
    def _read(cls, file: str, models: str | None) -> "Preset":
        st = os.stat(file)
        key = (cls, file, st.st_mtime_ns, st.st_size, models)
        preset = _loaded.get(key)
        if preset is None:
            with open(file, encoding="utf-8") as f:
                preset = cls(json.load(f), file=file, models=models)
            if len(_loaded) >= 512:
                _loaded.clear()
            _loaded[key] = preset
        return preset

    def to_dict(self) -> dict[str, Any]:
        """The preset document (a deep copy)."""
        return copy.deepcopy(self._data)

    @property
    def name(self) -> str:
        """The preset's name."""
        return self._data["name"]

    def replace(self, **changes: Any) -> "Preset":
        """A copy with top-level keys replaced, validated: ``target.replace(context_window_tokens=65536)``."""
        data = self.to_dict()
        data.update(changes)
        return type(self)(data)

    def renamed(self, name: str, description: str | None = None) -> "Preset":
        """A copy under another name (and description): an edited preset should not keep the name of the
        one it came from, ``Target.load("anthropic-tier1-claude-sonnet-4.5").with_bucket_limit(...)
        .renamed("anthropic-custom-sonnet-4.5")``."""
        return self.replace(name=name) if description is None else self.replace(name=name, description=description)

    def set(self, path: str, value: Any) -> "Preset":
        """A copy with the value at a JSON pointer replaced: ``target.set("/cache/ttl_s", 3600)``."""
        data = self.to_dict()
        parts = [p.replace("~1", "/").replace("~0", "~") for p in path.strip("/").split("/")]
        node = data
        for p in parts[:-1]:
            node = node[int(p)] if isinstance(node, list) else node[p]
        if isinstance(node, list):
            node[int(parts[-1])] = value
        else:
            node[parts[-1]] = value
        return type(self)(data)

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self._data == other._data  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"loopcast.{type(self).__name__}.from_dict({self._data!r})"


class Target(Preset):
    """A cloud provider tier or a local deployment (``models/targets/``)."""

    kind = "target"

    def with_bucket_limit(self, bucket: str, limit: float) -> "Target":
        """A copy with one rate-limit bucket's limit changed: ``t.with_bucket_limit("total_tpm", 900_000)``.

        The limit is the cap in force now: the bucket's dated rules (``limits.dated``) still scale it
        at other dates, as ``--limit`` on the command line (a replay of April's logs on a Claude plan
        meets half the 5-hour cap given)."""
        data = self.to_dict()
        for b in data["limits"]["buckets"]:
            if b["name"] == bucket:
                b["limit"] = limit
                return Target(data)
        names = ", ".join(b["name"] for b in data["limits"]["buckets"]) or "none"
        raise KeyError(f"{self.name} has no bucket {bucket!r} (buckets: {names})")


class Client(Preset):
    """What a client does on a 429 (``models/clients/``)."""

    kind = "client"


class Workload(Preset):
    """A synthetic agent session (``models/workloads/``)."""

    kind = "workload"


def _ref(x: Any) -> Any:
    return x.to_dict() if isinstance(x, Preset) else x


class Route:
    """An ordered list of targets serving one option (docs/routing.md): each attempt goes to the first
    target not cooling down; a 429 whose retry-after exceeds ``spill_after_s`` (``math.inf``: never)
    sends the request at once to the next target, which bills the prefix the first had cached.
    ``cooldown`` is ``False`` (none) or ``{"after_fails": 1, "window_s": 60, "for_s": 5}`` (the
    defaults, after LiteLLM's router: a 429 cools a target down at once, for 5 s)."""

    def __init__(self, targets: "Iterable[str | Target | dict]", spill_after_s: float = 0.0,
                 cooldown: "bool | dict[str, float] | None" = None) -> None:
        self.targets = list(targets)
        self.spill_after_s = spill_after_s
        self.cooldown = cooldown

    def to_dict(self) -> dict[str, Any]:
        """The route as it appears in a scenario option."""
        d: dict[str, Any] = {"targets": [_ref(t) for t in self.targets],
                             "spill_after_s": "never" if math.isinf(self.spill_after_s) else self.spill_after_s}
        if self.cooldown is not None and self.cooldown is not True:
            d["cooldown"] = self.cooldown if self.cooldown is False else dict(self.cooldown)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Route":
        """The inverse of :meth:`to_dict`."""
        spill = d.get("spill_after_s", 0.0)
        return cls(d["targets"], math.inf if spill == "never" else spill, d.get("cooldown"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Route) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        return f"loopcast.Route({self.targets!r}, spill_after_s={self.spill_after_s!r}, cooldown={self.cooldown!r})"


class Option:
    """One option of a scenario: a target (or a :class:`Route` of targets), a client, and whether
    requests go through the batch API.

    ``target`` and ``client`` are preset names, :class:`Target`/:class:`Client` objects or dicts.
    ``limits`` sets the target's bucket limits by name (``{"five_hour": 300_000}``; on a route,
    ``{"TARGET:BUCKET": N}``): a subscription plan's caps that its provider does not publish, or a
    what-if.
    """

    def __init__(self, label: str, target: "str | Target | dict | Route", client: "str | Client | dict" = "opencode",
                 batch: bool = False, limits: "dict[str, int] | None" = None) -> None:
        self.label = label
        self.target = target
        self.client = client
        self.batch = batch
        self.limits = dict(limits) if limits else {}

    def to_dict(self) -> dict[str, Any]:
        """The option as it appears in a scenario document."""
        d: dict[str, Any] = {"label": self.label}
        if isinstance(self.target, Route):
            d["route"] = self.target.to_dict()
        else:
            d["target"] = _ref(self.target)
        d["client"] = _ref(self.client)
        if self.batch:
            d["batch"] = True
        if self.limits:
            d["limits"] = dict(self.limits)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Option":
        """The inverse of :meth:`to_dict`."""
        target = Route.from_dict(d["route"]) if "route" in d else d["target"]
        return cls(d["label"], target, d["client"], d.get("batch", False), d.get("limits"))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Option) and self.to_dict() == other.to_dict()

    def __repr__(self) -> str:
        limits = f", limits={self.limits!r}" if self.limits else ""
        return (f"loopcast.Option(label={self.label!r}, target={self.target!r}, client={self.client!r}, "
                f"batch={self.batch!r}{limits})")


class Scenario(Preset):
    """A workload run on one or more options (``models/scenarios/``).

    Build one in code with keyword arguments::

        loopcast.Scenario(name="five-agents", workload="reference-agent-loop", sessions=5, stagger_s=10,
                          options=[loopcast.Option("cloud", "cerebras-developer-qwen-3.8-27b")])

    A fleet of several workloads sharing the options' limits takes ``fleet=`` instead of
    ``workload=``/``sessions=``/``stagger_s=``: a list of groups such as
    ``{"workload": "reference-agent-loop", "sessions": 5, "start_s": 0, "stagger_s": 30}``.

    ``attempt_budget=N`` stops each run after N attempts (429s included), its running sessions
    cut off: it bounds Monte Carlo, sweeps and solve on a tier the fleet overwhelms.

    Load a preset with :meth:`Scenario.load` and change it with :meth:`replace`.
    """

    kind = "scenario"

    def __init__(self, data: dict[str, Any] | None = None, *, name: str | None = None,
                 workload: "str | Workload | dict | None" = None, options: Iterable["Option | dict"] | None = None,
                 seed: int = 42, sessions: int = 1, stagger_s: float = 0.0,
                 fleet: Iterable[dict] | None = None,
                 start_time_utc: str = "2026-05-04T14:00:00Z", description: str = "", source: str = "python",
                 read_on: str = "2026-11-01", file: str = "<python>", models: str | None = None,
                 attempt_budget: int | None = None) -> None:
        if data is None:
            if name is None or (workload is None) == (fleet is None) or options is None:
                raise TypeError("Scenario() needs name=, options= and either workload= or fleet= (or a scenario dict)")
            data = {"kind": "scenario", "name": name, "description": description, "source": source,
                    "read_on": read_on, "seed": seed, "start_time_utc": start_time_utc}
            if fleet is not None:
                data["fleet"] = [{k: (v.to_dict() if isinstance(v, Preset) else v) for k, v in g.items()} for g in fleet]
            else:
                data.update({"workload": workload.to_dict() if isinstance(workload, Preset) else workload,
                             "sessions": sessions, "stagger_s": stagger_s})
            data["options"] = [o.to_dict() if isinstance(o, Option) else o for o in options]
            if attempt_budget is not None:
                data["attempt_budget"] = attempt_budget
        self._models = models
        super().__init__(data, file=file, models=models)

    @property
    def options(self) -> list[Option]:
        """The scenario's options."""
        return [Option.from_dict(o) for o in self._data["options"]]

    def replace(self, **changes: Any) -> "Scenario":
        """A copy with top-level keys replaced (``options`` may be :class:`Option` objects)."""
        data = self.to_dict()
        for k, v in changes.items():
            if k == "options":
                v = [o.to_dict() if isinstance(o, Option) else o for o in v]
            elif isinstance(v, Preset):
                v = v.to_dict()
            data[k] = v
        return Scenario(data, models=self._models)

    def __repr__(self) -> str:
        return f"loopcast.Scenario({self._data!r})"


_KINDS = {"target": Target, "client": Client, "workload": Workload, "scenario": Scenario}


def load_preset(kind: str, name: str, models: str | os.PathLike | None = None) -> Preset:
    """Loads a preset of the given kind (``"target"``, ``"client"``, ``"workload"``, ``"scenario"``)."""
    try:
        cls = _KINDS[kind]
    except KeyError:
        raise ValueError(f"unknown preset kind {kind!r} (expected one of {', '.join(_KINDS)})") from None
    return cls.load(name, models=models)

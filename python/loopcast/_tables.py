"""Results that are dicts (the ``--json`` documents of docs/output.md) and also tables.

``stats``, ``validate``, ``compare``, ``solve``, ``import_prices`` and ``infer_limits`` return a :class:`Report`: the same dict as
before, plus ``to_pandas()`` (one row per group, log, measure, option or step) and an HTML
rendering in Jupyter. pandas is imported when a table is first asked for.
"""

from __future__ import annotations

from typing import Any


def _p(d: Any, key: str) -> Any:
    """A percentile object's value, or None."""
    return None if not isinstance(d, dict) or d.get("count", 1) == 0 else d.get(key)


def _stats_rows(r: dict, bins: bool) -> list[dict]:
    by = r.get("by", "model")
    periods = by in ("day", "week", "month", "block")
    rows = []

    def row(g: dict, name: str, model: "str | None") -> dict:
        out = {by: name}
        if periods:
            out["start"] = g.get("start_unix")
            out["end"] = g.get("end_unix")
        if model is not None:
            out["model"] = model
        out.update({"requests": g["requests"], **g["tokens"], "recorded_cost_usd": g["recorded_cost_usd"],
                    "priced_cost_usd": g["priced_cost_usd"], "priced_partial": g.get("priced_partial", False),
                    "effective_tps_p50": _p(g["effective_tps"], "p50"),
                    "context_tokens_p50": _p(g["context_tokens"], "p50"), "cache_hit_rate": g["cache_hit_rate"]})
        return out

    breakdown = any(g.get("models") for g in r["groups"])
    for g in r["groups"]:
        if not bins:
            rows.append(row(g, g["group"], "*" if breakdown else None))
            for m in g.get("models", []):
                rows.append(row(m, g["group"], m["model"]))
            continue
        for b in g["context_bins"]:
            rows.append({by: g["group"], "context_bin": b["label"], "requests": b["requests"],
                         "effective_tps_p50": _p(b["effective_tps"], "p50"), "decode_tps_p50": _p(b["decode_tps"], "p50")})
    return rows


def _stats_frame(r: dict, rows: list[dict]):
    """The stats rows as a DataFrame; a period's start and end as datetimes in the report's time zone."""
    import pandas as pd
    df = pd.DataFrame(rows)
    for col in ("start", "end"):
        if col in df:
            df[col] = pd.to_datetime(df[col], unit="s", utc=True).dt.tz_convert(r.get("timezone") or "UTC")
    return df


def _validate_rows(r: dict) -> list[dict]:
    if "measures" in r:
        return [{"measure": m["measure"], "ks": m["ks"],
                 **{f"real_{k}": m["real"][k] for k in ("p10", "p50", "p90")},
                 **{f"synthetic_{k}": m["synthetic"][k] for k in ("p10", "p50", "p90")}} for m in r["measures"]]
    return [dict(t) for t in r["traces"]]


def _compare_rows(r: dict) -> list[dict]:
    rows = []
    for o in r["options"]:
        rows.append({"label": o["label"], "model": o["model"], "effective_tps_p50": _p(o["effective_tps"], "p50"),
                     "ttft_p50_s": _p(o["ttft_s"], "p50"), "wall_per_task_s": o["wall_per_task_s"],
                     "rate_limited": o["rate_limited"], "stall_share": o["stall_share"],
                     "usd_per_task": o["usd_per_task"], "usd_per_hour": o["usd_per_hour"], "gate": o["gate"],
                     "meets": o["meets"], "failures": "; ".join(o["failures"])})
    return rows


def _prices_rows(r: dict) -> list[dict]:
    rows = []
    for m in r["models"]:
        p = (m["prices"] or {}).get("usd_per_million", {})
        rows.append({"id": m["id"], "provider": m["provider"], "priced": m["prices"] is not None,
                     **{k: p.get(k) for k in ("input", "cache_read", "cache_write_5m", "cache_write_1h", "output",
                                              "reasoning")},
                     "context_window_tokens": m["context_window_tokens"], "max_output_tokens": m["max_output_tokens"]})
    return rows


def _limits_rows(r: dict) -> list[dict]:
    evidence = {e["name"]: e for e in r["evidence"]}
    return [{"name": b["name"], "unit": b["unit"], "limit": b["limit"], "period_s": b.get("period_s"),
             "algorithm": b.get("algorithm"), "header": evidence.get(b["name"], {}).get("header"),
             "evidence": evidence.get(b["name"], {}).get("evidence")} for b in r["limits"]["buckets"]]


class Report(dict):
    """A result document (a dict, as ``--json`` prints it) that also renders as a table."""

    def __init__(self, kind: str, document: dict) -> None:
        super().__init__(document)
        self.kind = kind

    def to_pandas(self, bins: bool = False):
        """The result as a DataFrame.

        stats: one row per group (``bins=True``: per group and context bin); validate: one row
        per held-out log (speeds) or per measure (workloads); compare: one row per option;
        solve: one row per evaluation step; prices: one row per model (USD per million tokens,
        None where the list gives no usable price); limits: one row per inferred bucket; plan
        caps: one row per window and counting rule (``high`` NaN where nothing bounds it above);
        backtest: one row per forecast; plans: one row per agent and option.
        Missing statistics are NaN, never 0.
        """
        import pandas as pd

        if self.kind == "stats":
            return _stats_frame(self, _stats_rows(self, bins))
        elif self.kind == "validate":
            rows = _validate_rows(self)
        elif self.kind == "compare":
            rows = _compare_rows(self)
        elif self.kind == "solve":
            rows = [dict(s) for s in self["steps"]]
        elif self.kind == "backtest":
            rows = [dict(r) for r in self["rows"]]
        elif self.kind == "prices":
            rows = _prices_rows(self)
        elif self.kind == "limits":
            rows = _limits_rows(self)
        elif self.kind == "plans":
            rows = [{"agent": a["agent"], **{k: v for k, v in r.items() if k != "waits_at"}}
                    for a in self["agents"] for r in a["rows"]]
        elif self.kind == "plan_caps":
            rows = [{**c, "high": float("nan") if c["high"] is None else c["high"]} for c in self["caps"]]
        else:  # pragma: no cover - every constructor passes one of the kinds above
            raise ValueError(f"no table for a {self.kind} result")
        return pd.DataFrame(rows)

    def _repr_html_(self) -> str:
        return self.to_pandas()._repr_html_()

"""Sweeps from Python: on local threads, and on a Dask LocalCluster with the same rows."""

import json
import math
import pathlib

import numpy as np
import pytest

import loopcast

ROOT = pathlib.Path(__file__).resolve().parents[2]

SPEC = {
    "kind": "sweep", "name": "agents", "scenario": "reference",
    "parameters": [
        {"path": "/sessions", "values": [1, 2, 4]},
        {"path": "/options/0/target/limits/buckets/1/limit", "values": [450000, 1800000]},
    ],
    "seeds": 3,
}


def same_rows(a: np.ndarray, b: np.ndarray) -> bool:
    return a.dtype == b.dtype and len(a) == len(b) and all(
        np.array_equal(a[n], b[n], equal_nan=a[n].dtype.kind == "f") for n in a.dtype.names)


def test_sweep_on_threads(models):
    s = loopcast.sweep(SPEC, threads=2, models=models)
    assert len(s) == 6 * 3 * 2
    assert s.paths == ["/sessions", "/options/0/target/limits/buckets/1/limit"]
    assert s.points[3] == [2, 1800000]
    df = s.to_pandas()
    assert list(df.columns[:5]) == ["point", "/sessions", "/options/0/target/limits/buckets/1/limit", "seed", "option"]
    assert df["label"].iloc[1] == "local"
    assert (df[df["point"] == 5]["sessions"] == 4).all()
    # More agents on the same tier stall more (medians over the seeds, cloud option).
    medians = [p["options"][0]["stall_share"]["p50"]["value"] for p in s.summary["points"]]
    assert medians[0] < medians[2] < medians[4]
    one = loopcast.sweep(SPEC, threads=1, models=models)
    assert same_rows(one.array, s.array)


def test_sweep_file_and_errors(models):
    s = loopcast.sweep(ROOT / "examples" / "sweeps" / "agents-on-developer-tier.json", models=models)
    assert len(s.points) == 10 and s.seeds == 10
    bad = dict(SPEC, parameters=[{"path": "/nope/0", "values": [1]}])
    with pytest.raises(loopcast.ConfigError, match=r"/parameters/0/path: /nope/0 is not in the scenario"):
        loopcast.sweep(bad, models=models)


def test_sweep_on_a_dask_cluster_equals_the_local_run(models):
    distributed = pytest.importorskip("distributed")
    local = loopcast.sweep(SPEC, threads=2, models=models)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        remote = loopcast.sweep(SPEC, client=client, models=models)
    assert same_rows(local.array, remote.array)
    assert remote.summary["points"] == local.summary["points"]


def test_solve_from_python(models):
    r = loopcast.solve("min-limit", "reference", stall_share=0.02, seeds=10, threads=2, models=models)
    assert r["found"] and r["question"] == "min-limit"
    lo, hi = r["bracket"]
    assert lo < hi <= lo * 1.01 and r["answer"] == hi
    assert r["steps"][0]["label"] == "×1" and not r["steps"][0]["meets"]
    steps = r.to_pandas()
    assert list(steps["label"]) == [s["label"] for s in r["steps"]] and list(steps["meets"]) == [s["meets"] for s in r["steps"]]
    even = loopcast.solve("break-even", "reference", hardware_usd=3500, lifetime_hours=26280, seeds=5, models=models)
    assert even["found"] and 0 < even["answer"] < 0.1  # the article's 90× cost gap: a little use pays off
    with pytest.raises(ValueError, match="question must be"):
        loopcast.solve("fastest", "reference", models=models)


def test_compare_from_python(models):
    r = loopcast.compare("task-code-completion", on=["rtx4090-vllm-llama-3.1-8b", "anthropic-tier1-claude-sonnet-4.5"],
                         client="openai-python-sdk", seeds=2, intelligence={"claude-sonnet-4.5": 80}, bar=50, models=models)
    assert r["contract"]["task"] == "code completion"
    local, cloud = r["options"]
    assert local["meets"] and local["gate"] == "not rated"
    assert not cloud["meets"] and cloud["gate"] == "pass"
    assert cloud["failures"][0].startswith("TTFT P50")
    df = r.to_pandas().set_index("label")
    assert list(df.index) == [o["label"] for o in r["options"]]
    assert bool(df.loc[local["label"], "meets"]) and not bool(df.loc[cloud["label"], "meets"])
    assert df.loc[cloud["label"], "failures"].startswith("TTFT P50")
    assert df.loc[cloud["label"], "usd_per_task"] == cloud["usd_per_task"]

"""Price lists and limits from Python: the same documents as the command line, and ready targets."""

import json
import math
import pathlib
import subprocess

import pytest

import loopcast

DATA = pathlib.Path(__file__).resolve().parents[1] / "data"


def test_import_prices_equals_the_cli(cli, models):
    path = DATA / "prices" / "litellm.json"
    r = loopcast.import_prices(path, model="claude-3-haiku-20240307")
    out = subprocess.run([cli, "--models", models, "prices", "import", str(path), "--model", "claude-3-haiku-20240307",
                          "--json"], check=True, capture_output=True, text=True).stdout
    assert r == json.loads(out)
    df = r.to_pandas()
    assert list(df["id"]) == ["claude-3-haiku-20240307"]
    # LiteLLM lists USD per token: 1.25e-06 per output token is $1.25 per million.
    assert df.loc[0, "output"] == pytest.approx(1.25)
    assert df.loc[0, "cache_write_1h"] == pytest.approx(6.0)


def test_import_prices_leaves_unpriced_models_unpriced():
    r = loopcast.import_prices(DATA / "prices" / "litellm.json")
    broken = [m for m in r["models"] if m["id"] == "broken-model"]
    assert broken and broken[0]["prices"] is None
    row = r.to_pandas().set_index("id").loc["broken-model"]
    assert not row["priced"] and math.isnan(row["input"])  # missing, never 0


def test_import_prices_on_a_base_is_a_target(models):
    t = loopcast.import_prices(DATA / "prices" / "litellm.json", model="claude-sonnet-4-5",
                               base="anthropic-tier1-claude-sonnet-4.5", name="sonnet-litellm", models=models)
    assert isinstance(t, loopcast.Target)
    d = t.to_dict()
    base = loopcast.Target.load("anthropic-tier1-claude-sonnet-4.5", models=models).to_dict()
    assert d["name"] == "sonnet-litellm" and d["model"] == "claude-sonnet-4-5" and d["verified"] is False
    assert d["limits"] == base["limits"] and d["cache"] == base["cache"] and d["speed"] == base["speed"]
    assert d["prices"]["usd_per_million"]["input"] == 3.0
    assert d["prices"]["long_context"][0]["usd_per_million"]["input"] == 6.0
    with pytest.raises(ValueError, match="base= writes one target: give model= one id"):
        loopcast.import_prices(DATA / "prices" / "litellm.json", base="anthropic-tier1-claude-sonnet-4.5", models=models)
    with pytest.raises(loopcast.ConfigError, match="a local target is priced by its power"):
        loopcast.import_prices(DATA / "prices" / "litellm.json", model="claude-sonnet-4-5",
                               base="local-workstation-qwen-27b", models=models)


def test_infer_limits_equals_the_cli(cli, models):
    path = DATA / "headers" / "openai.txt"
    r = loopcast.infer_limits(path)
    out = subprocess.run([cli, "--models", models, "limits", "infer", str(path), "--json"], check=True,
                         capture_output=True, text=True).stdout
    assert r == json.loads(out)
    df = r.to_pandas()
    assert list(df["name"]) == ["rpm", "tpm"]
    assert list(df["limit"]) == [500, 30000]
    with pytest.raises(TypeError, match="at least one file"):
        loopcast.infer_limits()
    with pytest.raises(loopcast.ConfigError, match="litellm.json: no rate-limit header of Cerebras, OpenAI or Anthropic"):
        loopcast.infer_limits(DATA / "prices" / "litellm.json")

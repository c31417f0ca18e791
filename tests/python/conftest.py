"""Shared fixtures. The suite runs with PYTHONPATH pointing at the build tree's python/ folder
(ctest sets it, with LOOPCAST_CLI, LOOPCAST_MODELS_DIR and LOOPCAST_TRACES_DIR)."""

import os
import pathlib

import pytest

import loopcast

ROOT = pathlib.Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def models() -> str:
    return os.environ.get("LOOPCAST_MODELS_DIR", str(ROOT / "models"))


@pytest.fixture(scope="session")
def traces() -> pathlib.Path:
    return pathlib.Path(os.environ.get("LOOPCAST_TRACES_DIR", str(ROOT / "tests" / "data" / "traces")))


@pytest.fixture(scope="session")
def cli() -> str:
    path = os.environ.get("LOOPCAST_CLI", str(ROOT / "build" / "loopcast"))
    assert os.path.exists(path), f"the loopcast command is not built at {path}"
    return path


@pytest.fixture(scope="session")
def reference(models) -> loopcast.Run:
    return loopcast.run("reference", models=models)

"""Shared pytest configuration for gradcheck's own tests."""

import os
from pathlib import Path

import pytest

# Multithreaded BLAS makes the small matrices of the linalg ops 8-100x slower when the
# 2 cores are shared between test workers; set before numpy loads its BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

# pytester runs pytest in a temporary directory; the plugin tests use it.
pytest_plugins = ["pytester"]

# The HTML report imports matplotlib when it first draws a plot.  A pytester run in this
# process removes the modules first imported inside it afterwards; a later import then mixes
# fresh and old matplotlib classes ("Invalid arguments to set_clip_path, of type Rectangle").
# Imported here, before any pytester run, it is never removed.
import matplotlib.figure  # noqa: E402, F401


def pytest_collection_finish(session: pytest.Session) -> None:
    """Once the test modules are imported (TensorFlow, torch and JAX with them: 680 000
    objects), move them out of the cycle collector's view, as a sweep's worker does after
    its first unit: they live as long as the process, and every full collection walked them
    all again."""
    from gradcheck.checker.executors.unit import settle_heap

    settle_heap()


@pytest.fixture
def workdir(tmp_path: Path, tmp_path_factory: pytest.TempPathFactory,
            monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty current directory (a run's ``reports/`` is created relative to it), and a
    cache folder elsewhere: what the command-line tests run in."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.delenv("HYPOTHESIS_STORAGE_DIRECTORY", raising=False)
    return tmp_path

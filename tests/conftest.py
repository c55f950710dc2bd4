"""Shared fixtures. Benchmark data comes from MABPD_DATA_DIR (the Makefile points it at ../shared/data)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """The shared benchmark directory, or skip with the reason (data is never committed)."""
    d = os.environ.get("MABPD_DATA_DIR") or str(ROOT.parent / "shared" / "data")
    p = Path(d)
    if not p.is_dir():
        pytest.skip(f"benchmark data not found at {p}: set MABPD_DATA_DIR (see README, 'Data')")
    return p


@pytest.fixture(autouse=True)
def _no_real_endpoint(monkeypatch):
    """Tests never reach a real endpoint or read a real key."""
    for var in ("MABPD_BASE_URL", "MABPD_API_KEY", "MABPD_MODEL", "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(autouse=True)
def _private_llm_cache(tmp_path_factory, monkeypatch):
    """Tests never read or write the user's LLM cache (~/.cache/mabpd-kit): one throwaway
    directory for the session (FakeLLMServer URLs are unique, so entries never collide)."""
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path_factory.getbasetemp() / "llm-cache"))


@pytest.fixture
def fake_server(tmp_path, monkeypatch):
    """Factory for :class:`mabpd_kit.testing.FakeLLMServer`: ``srv = fake_server(script, latency=0)``.

    Servers are started now and stopped after the test. The LLM record/replay cache goes to a
    per-test temporary directory, so a test sees only the answers it recorded itself.
    """
    from mabpd_kit.testing import FakeLLMServer

    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path / "llm-cache"))
    servers = []

    def make(script=None, **options):
        srv = FakeLLMServer(script, **options).start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()

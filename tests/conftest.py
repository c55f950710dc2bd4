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


@pytest.fixture(scope="session")
def tiny_lexicon():
    """A tiny teaching lexicon, so agent and pipeline tests do not depend on the shipped word list."""
    from mabpd_kit.config import Config
    from mabpd_kit.lexicon import Category, Lexicon, Protected, Term

    cats = [Category(id="attack_verbs", name="Attack verbs", taxonomy="loaded language", meta_category="biased language"),
            Category(id="labels", name="Labels", taxonomy="political labeling", meta_category="biased language")]
    terms = [Term(term="slam", category="attack_verbs", band=0.8, pos="verb", note="combat verb"),
             Term(term="disgraceful", category="attack_verbs", band=0.7, pos="adj", note="condemnation"),
             Term(term="radical leftist", category="labels", band=0.9, pos="noun", note="ideological label"),
             Term(term="illegal", category="attack_verbs", band=0.6, pos="adj", note="legal word")]
    prot = [Protected(term="illegal", context="illegal parking"), Protected(term="slam", context="slam dunk")]
    return Lexicon.from_entries(cats, terms, prot, config=Config())

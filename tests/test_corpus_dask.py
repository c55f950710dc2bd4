"""A corpus on a Dask cluster (``engine="dask"``, ``mabpd analyze CORPUS --engine dask``): the records equal a
local run's, item by item, rule-based and with an LLM (each worker connects to the endpoint itself, from a
key-free spec, with its share of the limit, and shares the answer cache folder)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from test_corpus_llm import _script

from mabpd_kit import cli
from mabpd_kit.config import Config
from mabpd_kit.corpus import CorpusConfig, analyze, read
from mabpd_kit.llm import connect

distributed = pytest.importorskip("distributed")

TEXTS = [f"The council met on day {k}. Critics slammed the disastrous plan {k}. Rain fell." for k in range(24)]


def _key(path):
    out = []
    for ln in path.read_text(encoding="utf-8").splitlines():
        r = json.loads(ln)["record"]
        out.append((r["id"], r["n_sentences"], r["n_biased"], [s["score"] for s in r["sentences"]], r["failed"]))
    return out


def test_the_cli_on_dask_writes_the_records_a_local_run_writes(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"id": [f"a{k:02d}" for k in range(len(TEXTS))], "text": TEXTS}).to_csv("c.csv", index=False)
    assert cli.main(["analyze", "c.csv", "--quiet", "--out", "local.jsonl", "--workers", "1"]) == 0
    assert cli.main(["analyze", "c.csv", "--quiet", "--out", "dask.jsonl", "--engine", "dask", "--workers", "2"]) == 0
    err = capsys.readouterr().err
    assert f"{len(TEXTS)} articles" in err
    assert _key(tmp_path / "dask.jsonl") == _key(tmp_path / "local.jsonl")
    assert not (tmp_path / "dask.jsonl.parts").exists() or not any((tmp_path / "dask.jsonl.parts").iterdir())
    assert cli.main(["analyze", "c.csv", "--quiet", "--scheduler", "tcp://127.0.0.1:1"]) == 2
    assert "--scheduler is a Dask scheduler's address: it needs --engine dask" in capsys.readouterr().err


def test_the_llm_path_on_dask_connects_in_each_worker_and_shares_the_cache(fake_server, tmp_path):
    srv = fake_server(_script, latency=0.0)
    cfg = Config().replace(**{"llm.concurrency": 4})
    llm = connect(base_url=srv.base_url, model="fake", config=cfg, cache_dir=tmp_path / "cache", quiet=True)
    df = pd.DataFrame({"text": TEXTS[:8]})
    st = CorpusConfig(article_threshold=1)
    local = analyze(read(df), tmp_path / "local.jsonl", config=cfg, llm=llm, settings=st)
    calls = len(srv.requests)
    assert calls > 0 and not local.n_failed
    fresh = connect(base_url=srv.base_url, model="fake", config=cfg, cache_dir=tmp_path / "cache", quiet=True)
    res = analyze(read(df), tmp_path / "dask.jsonl", config=cfg, llm=fresh, settings=st, engine="dask", workers=2)
    assert _key(tmp_path / "dask.jsonl") == _key(tmp_path / "local.jsonl") and res.computed == 8
    assert len(srv.requests) == calls  # the workers answered every call from the shared cache folder


def test_a_dask_partition_is_dask_partition_articles_and_a_local_task_chunk_articles(tmp_path, monkeypatch):
    """Each Dask partition pays a round trip through the scheduler and a committed part file, so it is larger
    than a local pool's task: ``dask_partition_articles`` sizes it, ``chunk_articles`` the local chunks."""
    from mabpd_kit import runs

    seen: dict[str, int] = {}
    real = runs.executor

    def spy(engine=None, **kw):
        seen[engine] = kw["chunk"]
        return real(engine, **kw)

    monkeypatch.setattr(runs, "executor", spy)
    st = CorpusConfig(chunk_articles=5, dask_partition_articles=7)
    assert CorpusConfig().dask_partition_articles > CorpusConfig().chunk_articles
    df = pd.DataFrame({"text": TEXTS[:16]})
    local = analyze(read(df), tmp_path / "local.jsonl", settings=st, workers=2)
    dask = analyze(read(df), tmp_path / "dask.jsonl", settings=st, engine="dask", workers=2)
    assert seen == {"local": 5, "dask": 7}
    assert _key(tmp_path / "dask.jsonl") == _key(tmp_path / "local.jsonl") and dask.computed == local.computed == 16

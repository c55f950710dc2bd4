"""Hold the line under bad models: a 20%-faulty server, then a healthy rerun with the same
LLM cache and checkpoint decides every item without repeating a call for an item that had succeeded;
a refused key fails a whole batch after a handful of calls."""

from __future__ import annotations

import json
import sqlite3

from mabpd_kit.config import Config
from mabpd_kit.llm import connect
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.testing import Reply
from mabpd_kit.testing.faults import FAULTS, fault_run, synthetic_items


def test_faulty_run_then_healthy_rerun_decides_all_and_repeats_nothing(tmp_path):
    f = fault_run(200, workdir=tmp_path, rate=0.2, seed=1)
    assert set(f["injected"]) == set(FAULTS)  # every kind of fault was met
    assert f["decided_1"] < 200 and f["errors_1"]  # ... and some items failed on them
    assert f["decided_2"] == 200, f  # the rerun decides every item
    assert f["resumed_2"] == f["decided_1"]  # every item decided in run 1 comes from the checkpoint
    assert f["repeated_2"] == 0  # no request for an item that had succeeded
    assert set(f["per_item_2"]) == set(map(str, range(200))) - {i for i in map(str, range(200))
                                                                 if f["per_item_1"][i] and i not in f["per_item_2"]}
    assert 0 < f["calls_2"] <= 8 * (200 - f["decided_1"])  # only the failed items' calls, at most one item's worth each
    with sqlite3.connect(tmp_path / "cache" / "llm-cache.sqlite3") as db:  # no empty reply, no refusal cached
        values = [json.loads(v) for (v,) in db.execute("SELECT value FROM responses")]
    assert values and all(v["text"].strip() and not v.get("refusal") for v in values)
    # Every cached answer leads to a decision: the whole batch replays from the cache alone.
    replay = connect(base_url=f["base_url"], model="fake", cache_mode="replay", cache_dir=tmp_path / "cache", quiet=True)
    again = Pipeline(Config(), replay).analyze_many([t for t, _ in synthetic_items(200)], progress=False)
    assert not again.failed and replay.usage.calls == 0


def test_a_refused_key_fails_a_pipeline_batch_after_a_handful_of_calls(fake_server):
    srv = fake_server(lambda r: Reply(status=401, error="Incorrect API key provided"), latency=0.02)
    cfg = Config().replace(**{"llm.concurrency": 4})
    llm = connect(base_url=srv.base_url, model="fake", config=cfg, cache_mode="off", quiet=True)
    res = Pipeline(cfg, llm).analyze_many([t for t, _ in synthetic_items(50)], progress=False)
    assert srv.calls <= 4, srv.calls  # the calls already in flight when the first 401 came back
    assert len(res.failed) == 50 and all("HTTP 401" in d.error and "MABPD_API_KEY" in d.error for d in res)

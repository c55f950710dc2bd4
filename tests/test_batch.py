"""Batch mode (issue 14): a run's calls go through the Batch API one stage per pass, a crash between
stages resumes from the saved batch id without paying twice, and the answers land in the cache so a
later replay is identical. Everything against FakeLLMServer's /v1/files and /v1/batches."""

from __future__ import annotations

import json

import pytest

from mabpd_kit.config import Config
from mabpd_kit.llm import batch as B
from mabpd_kit.llm import connect
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.testing import system_prompt

TEXTS = ["Democrats slammed the plan, the senator said on Monday.", "The council approved the budget on Tuesday.",
         "Critics blasted the so-called reform as a disaster."]
LOADED = ("slammed", "blasted")


def _script(req):
    sys_ = system_prompt(req).lower()
    item = json.dumps(req["messages"])
    loaded = next((w for w in LOADED if w in item), None)
    if "structured argument debate" in sys_:
        return {"rationale": "-", "evidence": [loaded] if loaded else [], "counter_argument": "-",
                "verdict": "biased" if loaded else "neutral", "confidence": 0.8}
    if "bias analyst" in sys_:
        spans = [{"quote": loaded, "category": "loaded language", "explanation": "-"}] if loaded else []
        return {"rationale": "-", "spans": spans, "counter_argument": "-", "verdict": "biased" if loaded else "neutral",
                "confidence": 0.9, "bias_score": 0.8 if loaded else 0.1}
    if "evidence analyst" in sys_:
        return {"rationale": "-", "evidence": [], "counter_argument": "-", "verdict": "neutral", "confidence": 0.6,
                "evidence_score": 0.3}
    if "framing analyst" in sys_:
        return {"rationale": "-", "patterns": [], "counter_argument": "-", "verdict": "neutral", "confidence": 0.7,
                "framing_score": 0.2}
    return {"reason": "-", "strongest_quote": loaded or "", "verdict": "biased"}


CFG = Config().replace(**{"llm.prices_per_mtok": {"fake": (1.0, 2.0)}})


def _run(llm, tmp_path, **kw):
    pipe = Pipeline(CFG, llm)
    return B.run_batched(lambda: pipe.analyze_many(TEXTS, checkpoint=tmp_path / "run.jsonl", progress=False), llm,
                         state=tmp_path / "run.batch.json", poll_s=0.01, quiet=True, **kw)


def _summary(res):
    return [(d.id, d.label, d.route, round(d.score, 6), d.failed) for d in res]


def test_batch_run_advances_one_stage_per_pass_and_matches_a_direct_run(fake_server, tmp_path):
    srv = fake_server(_script)
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", config=CFG, quiet=True)
    res = _run(llm, tmp_path)
    assert not res.failed and srv.calls == 0  # nothing went through /chat/completions: all by batch
    state = json.loads((tmp_path / "run.batch.json").read_text())
    assert [len(b["models"]) for b in state["batches"]] == [9, 6, 2]  # reports; 2 debates x 3 moves; 2 verifiers
    ids = [json.loads(line)["custom_id"] for b in state["batches"] for line in open(b["input"])]
    assert len(ids) == len(set(ids)) == len(srv.batch_requests)  # every request sent once
    assert all(r.batch for r in llm.usage.records if not r.cached) and llm.usage.calls == 17
    assert llm.usage.cost_usd == pytest.approx(0.5 * (llm.usage.prompt_tokens + 2 * llm.usage.completion_tokens) / 1e6)

    direct_srv = fake_server(_script)
    direct = connect(base_url=direct_srv.base_url, model="fake", cache_dir=tmp_path / "other", config=CFG, quiet=True)
    assert _summary(Pipeline(CFG, direct).analyze_many(TEXTS, progress=False)) == _summary(res)

    srv.stop()  # the answers are in the cache: a replay needs no server and gives the same decisions
    replay = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", config=CFG,
                     cache_mode="replay", quiet=True)
    assert _summary(Pipeline(CFG, replay).analyze_many(TEXTS, progress=False)) == _summary(res)


def test_a_crash_between_stages_resumes_the_submitted_batch_without_resubmitting(fake_server, tmp_path, monkeypatch):
    srv = fake_server(_script, batch_polls=2)
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", config=CFG, quiet=True)
    real_collect, seen = B._collect, []

    def crashing_collect(llm_, st, entry, **kw):
        seen.append(entry["id"])
        if len(seen) == 2:  # the second stage's batch is submitted: the process dies while waiting for it
            raise KeyboardInterrupt
        return real_collect(llm_, st, entry, **kw)

    monkeypatch.setattr(B, "_collect", crashing_collect)
    with pytest.raises(KeyboardInterrupt):
        _run(llm, tmp_path)
    monkeypatch.setattr(B, "_collect", real_collect)
    state = json.loads((tmp_path / "run.batch.json").read_text())
    assert [b["collected"] for b in state["batches"]] == [True, False] and len(srv.batches) == 2

    fresh = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", config=CFG, quiet=True)
    res = _run(fresh, tmp_path)  # a new process: same arguments
    assert not res.failed and len(srv.batches) == 3  # the open batch was collected, not submitted again
    assert len(srv.batch_requests) == 17 and srv.calls == 0
    assert [d.label for d in res] == ["biased", "neutral", "biased"]


def test_a_failed_batch_line_fails_its_item_with_the_reason_instead_of_looping(fake_server, tmp_path):
    from mabpd_kit.testing import Reply

    def script(req):
        if "council" in json.dumps(req["messages"]) and "bias analyst" in system_prompt(req).lower():
            return Reply(status=500, error="model overloaded")
        return _script(req)

    srv = fake_server(script)
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", config=CFG, quiet=True)
    res = _run(llm, tmp_path)
    failed = {d.id: d.error for d in res if d.failed}
    assert list(failed) == ["1"] and "model overloaded" in failed["1"]


def test_batch_files_round_trip_for_a_self_hosted_runner(tmp_path):
    reqs = {"k1": {"model": "m", "messages": [{"role": "user", "content": "hi"}]}}
    path = B.write_requests(reqs, tmp_path / "in.jsonl")
    line = json.loads(path.read_text())
    assert line == {"custom_id": "k1", "method": "POST", "url": "/v1/chat/completions", "body": reqs["k1"]}
    out = json.dumps({"custom_id": "k1", "response": {"status_code": 200, "body": {
        "model": "m", "choices": [{"message": {"content": "yo"}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 3, "completion_tokens": 1}}}, "error": None})
    done, failed = B.read_results(out + "\n", reqs)
    assert done["k1"].text == "yo" and done["k1"].batch and failed == {}


def test_batch_mode_needs_the_auto_cache(fake_server, tmp_path):
    srv = fake_server(_script)
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, cache_mode="record", quiet=True)
    with pytest.raises(ValueError, match="auto"):
        _run(llm, tmp_path)


def test_cli_analyze_batch_and_evaluate_batch(fake_server, tmp_path, monkeypatch, capsys):
    import pandas as pd

    from mabpd_kit.cli import main
    from mabpd_kit.evaluate import evaluate

    srv = fake_server(_script, batch_polls=0)
    monkeypatch.setenv("MABPD_BASE_URL", srv.base_url)
    monkeypatch.setenv("MABPD_MODEL", "fake")
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    (tmp_path / "in.txt").write_text("\n".join(TEXTS) + "\n")
    code = main(["analyze", str(tmp_path / "in.txt"), "--lines", "--llm", "--batch", str(tmp_path / "a.json"),
                 "--format", "json", "--quiet"])
    out = [json.loads(line) for line in capsys.readouterr().out.splitlines() if line.strip()]
    assert code == 0 and [d["label"] for d in out] == ["biased", "neutral", "biased"]
    assert srv.calls == 0 and len(srv.batches) == 3 and (tmp_path / "a.jsonl").exists()

    frame = pd.DataFrame({"id": ["a", "b", "c"], "text": TEXTS, "label": [1, 0, 1]})
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache2", config=CFG, quiet=True)
    ev = evaluate("mine", "train", ["full", "no-debate"], frame=frame, llm=llm, config=CFG, progress=False,
                  batch=tmp_path / "e.json", anchors=False, n_resamples=50)
    assert srv.calls == 0 and len(srv.batches) > 3
    assert set(ev.metrics["system"]) >= {"full", "no-debate"}


def test_cli_analyze_batch_on_a_corpus(fake_server, tmp_path, monkeypatch, capsys):
    """``--batch`` works on a corpus: one article per row, every call by the Batch API (none through
    /chat/completions), an article with a deferred sentence decided only once its pass is in."""
    import pandas as pd

    from mabpd_kit.cli import main

    srv = fake_server(_script, batch_polls=0)
    monkeypatch.setenv("MABPD_BASE_URL", srv.base_url)
    monkeypatch.setenv("MABPD_MODEL", "fake")
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    pd.DataFrame({"id": ["a", "b"], "text": [" ".join(TEXTS), TEXTS[1] + " " + TEXTS[1]]}).to_csv(tmp_path / "c.csv",
                                                                                                     index=False)
    out = tmp_path / "c.jsonl"
    code = main(["analyze", str(tmp_path / "c.csv"), "--llm", "--batch", str(tmp_path / "b.json"), "--out", str(out),
                 "--id-col", "id", "--quiet"])
    err = capsys.readouterr().err
    recs = [json.loads(ln)["record"] for ln in out.read_text().splitlines()]
    assert code == 0 and "0 failed" in err, err
    assert srv.calls == 0 and len(srv.batches) >= 3  # the stages went by batch
    assert [r["id"] for r in recs] == ["a", "b"] and not any(r["failed"] or r["n_failed_sentences"] for r in recs)
    assert recs[0]["n_biased"] >= 1 and recs[1]["n_biased"] == 0

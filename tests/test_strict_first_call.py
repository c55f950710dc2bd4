"""Strict mode is tried on the first call, not only after ``mabpd doctor`` (issue 41.6): a plain run on a fresh
endpoint sends ``strict: true`` where the server takes it; a server that refuses it costs one refused request,
settled once for the endpoint and model (concurrent first calls included), and no item fails for it."""

from __future__ import annotations

import threading
import time
from typing import Literal

import pytest
from pydantic import BaseModel, Field
from test_pipeline_llm import TEXT, make_script

from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError, connect, registry
from mabpd_kit.llm.structured import required_schema
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.testing import Reply

TEXTS = [TEXT, "Republicans praised the bill, the governor said.", "The council met on Tuesday."]


class Verdict(BaseModel):
    verdict: Literal["biased", "neutral"]
    score: float = Field(ge=0, le=1)


def _schema_requests(srv) -> list[dict]:
    return [r for r in srv.requests if (r.get("response_format") or {}).get("type") == "json_schema"]


def _strict(r: dict) -> bool:
    return r["response_format"]["json_schema"].get("strict") is True


def _run(srv, **kw):
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, **kw)
    return Pipeline(Config(), llm).analyze_many(TEXTS, ids=["a", "b", "c"], progress=False)


def test_a_plain_run_on_a_strict_capable_server_sends_every_schema_request_strict(fake_server):
    srv = fake_server(make_script(), latency=0.02)  # accepts strict schemas (and checks OpenAI's subset)
    res = _run(srv)
    assert not any(d.failed for d in res.decisions), [d.error for d in res.decisions]
    sent = _schema_requests(srv)
    assert len(sent) >= 6 and all(_strict(r) for r in sent), [_strict(r) for r in sent]
    assert registry.strict(registry.endpoint_key(srv.base_url, "fake")) is True


def test_a_server_refusing_strict_costs_one_refused_request_and_no_item(fake_server):
    srv = fake_server(make_script(), latency=0.02, supports_strict=False)
    res = _run(srv)
    assert not any(d.failed for d in res.decisions), [d.error for d in res.decisions]
    sent = _schema_requests(srv)
    assert [_strict(r) for r in sent].count(True) == 1 and _strict(sent[0])  # the first, refused, and never again
    assert len(sent) >= 7  # the refused one and at least two agents' calls per item, all answered non-strict
    assert registry.strict(registry.endpoint_key(srv.base_url, "fake")) is False


def test_llama_cpp_python_still_gets_json_object_with_the_required_schema(fake_server):
    """A guard (passes before and after): the kind drops ``strict``, so it is never tried there."""
    srv = fake_server(lambda r: {"verdict": "neutral", "score": 0.2}, emulate="llama-cpp-python")
    d = connect(base_url=srv.base_url, model="fake", quiet=True).structured("Is this biased?", Verdict)
    assert d.mode == "json_schema"  # the kit's mode; the wire form is the kind's
    fmts = [r.get("response_format") or {} for r in srv.requests]
    assert fmts and all(f.get("type") == "json_object" for f in fmts)
    assert fmts[0]["schema"] == srv.quirks.kind.schema(required_schema(Verdict))
    assert all(f["schema"].get("additionalProperties") is not False for f in fmts)  # never the strict body


def _threads(srv, n: int = 6) -> list:
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    out: list = [None] * n
    start = threading.Barrier(n)

    def one(i: int) -> None:
        start.wait()
        out[i] = llm.structured(f"Is sentence {i} biased?", Verdict)

    workers = [threading.Thread(target=one, args=(i,)) for i in range(n)]
    for w in workers:
        w.start()
    for w in workers:
        w.join(30)
    return out


def test_concurrent_first_calls_on_a_refusing_server_settle_strict_once(fake_server):
    srv = fake_server(lambda r: {"verdict": "neutral", "score": 0.2}, latency=0.2, supports_strict=False)
    out = _threads(srv)
    assert all(s is not None and s.value.verdict == "neutral" for s in out)
    strict = [_strict(r) for r in _schema_requests(srv)]
    assert strict.count(True) == 1 and strict.count(False) == 6  # one trial: the others waited for its answer


def test_concurrent_first_calls_on_a_strict_capable_server_are_all_strict(fake_server):
    srv = fake_server(lambda r: {"verdict": "neutral", "score": 0.2}, latency=0.2)
    out = _threads(srv)
    assert all(s is not None for s in out)
    assert [_strict(r) for r in _schema_requests(srv)] == [True] * 6


def test_answers_recorded_without_strict_still_replay_and_are_reused(fake_server, tmp_path):
    """A guard: a cache (or pack) recorded before strict was tried, or against a server that refused it, holds
    non-strict requests; a strict and a non-strict request are different keys, and the recorded one is read."""
    srv = fake_server(lambda r: {"verdict": "neutral", "score": 0.2}, supports_strict=False)
    rec = connect(base_url=srv.base_url, model="fake", quiet=True, cache_dir=tmp_path, cache_mode="auto")
    first = [rec.structured(f"Sentence {i}?", Verdict).value for i in range(3)]
    n = srv.calls
    assert [_strict(r) for r in _schema_requests(srv)] == [True, False, False, False]
    for mode in ("replay", "auto"):
        registry.forget()  # a new process, and now the server would take strict
        srv.supports_strict = True
        llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_dir=tmp_path, cache_mode=mode)
        assert [llm.structured(f"Sentence {i}?", Verdict).value for i in range(3)] == first
        assert srv.calls == n, mode  # every answer read from the cache, none asked again as strict
    assert connect(base_url=srv.base_url, model="fake", quiet=True, cache_dir=tmp_path).structured("New?", Verdict)
    assert _strict(srv.requests[-1])  # a new request is tried strict


def test_what_the_probe_settled_is_not_tried_again(fake_server, tmp_path):
    """A guard: after ``mabpd doctor`` (the probe) found strict refused, no call tries it."""
    srv = fake_server(lambda r: '{"probe_token": 1}' if "probe_token" in str(r.get("response_format"))
                      else {"verdict": "neutral", "score": 0.2}, supports_strict=False)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_dir=tmp_path)
    assert not llm.capabilities().strict_json_schema
    n = len(_schema_requests(srv))
    llm.structured("Is this biased?", Verdict)
    assert [_strict(r) for r in _schema_requests(srv)[n:]] == [False]


def test_a_trial_that_fails_for_another_reason_lets_the_waiting_calls_settle_it(fake_server):
    srv = fake_server(lambda r: Reply(status=400, error="prompt too long") if "long" in r["messages"][-1]["content"]
                      else {"verdict": "neutral", "score": 0.2}, latency=0.2)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    out: dict = {}

    def one(text: str) -> None:
        try:
            out[text] = llm.structured(text, Verdict)
        except EndpointError as exc:
            out[text] = exc

    first = threading.Thread(target=one, args=("a very long prompt",))
    first.start()
    time.sleep(0.05)  # the long prompt's call holds the trial; these wait for it
    rest = [threading.Thread(target=one, args=(f"short {i}",)) for i in range(3)]
    for w in rest:
        w.start()
    for w in [first, *rest]:
        w.join(30)
    with pytest.raises(EndpointError, match="prompt too long"):
        raise out["a very long prompt"]
    assert all(out[f"short {i}"].value.verdict == "neutral" for i in range(3))
    short = [r for r in _schema_requests(srv) if "short" in r["messages"][-1]["content"]]
    assert [_strict(r) for r in short] == [True] * 3  # unsettled by the failure: the next call tried, and took it
    assert registry.strict(registry.endpoint_key(srv.base_url, "fake")) is True

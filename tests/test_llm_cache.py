"""Record/replay cache, samples at temperature > 0, usage accounting, and key secrecy."""

from __future__ import annotations

import itertools
import logging
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from pydantic import BaseModel

from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError, ReplayMissError, ResponseCache, StructuredOutputError, connect
from mabpd_kit.llm.cache import request_key
from mabpd_kit.llm.usage import estimate_cost
from mabpd_kit.testing import Reply
from mabpd_kit.types import Usage


def _counter_script():
    counter = itertools.count()
    lock = threading.Lock()

    def script(request):
        with lock:
            return f"answer {next(counter)}"

    return script


def test_record_then_replay_with_the_server_stopped(fake_server, tmp_path):
    srv = fake_server(lambda r: f"echo {r['messages'][-1]['content']}")
    rec = connect(base_url=srv.base_url, model="fake", cache_mode="record", cache_dir=tmp_path)
    first = [rec.chat(f"q{i}").text for i in range(3)]
    srv.stop()
    rep = connect(base_url=srv.base_url, model="fake", cache_mode="replay", cache_dir=tmp_path)
    again = [rep.chat(f"q{i}") for i in range(3)]
    assert [c.text for c in again] == first == ["echo q0", "echo q1", "echo q2"]
    assert all(c.cached for c in again)
    assert rep.usage.calls == 0 and rep.usage.cached_calls == 3


def test_logprobs_survive_record_and_replay(fake_server, tmp_path):
    srv = fake_server(lambda r: "HALF-TRUE because")
    recorded = connect(base_url=srv.base_url, model="fake", cache_mode="record", cache_dir=tmp_path).chat(
        "label?", logprobs=True, top_logprobs=3
    )
    srv.stop()
    replayed = connect(base_url=srv.base_url, model="fake", cache_mode="replay", cache_dir=tmp_path).chat(
        "label?", logprobs=True, top_logprobs=3
    )
    assert replayed.cached and replayed.logprobs == recorded.logprobs
    assert [t.token for t in replayed.logprobs] == ["HALF-TRUE", "because"] and len(replayed.logprobs[0].top) == 3


def test_replay_miss_names_the_request(fake_server, tmp_path):
    srv = fake_server()
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="replay", cache_dir=tmp_path)
    with pytest.raises(ReplayMissError, match=r"model 'fake', last message 'Is this sentence biased\? The senator"):
        llm.chat("Is this sentence biased? The senator slammed the reckless plan.")
    assert srv.calls == 0  # replay never touches the network


def test_auto_mode_resumes_a_killed_batch(fake_server, tmp_path):
    srv = fake_server(lambda r: r["messages"][-1]["content"][::-1])
    first = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path)  # default mode: auto
    assert first.cache_mode == "auto"
    for i in range(10):  # the batch was killed after 10 of 20 items
        first.chat(f"item {i}")
    srv.reset_counts()
    second = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path)
    out = [second.chat(f"item {i}").text for i in range(20)]
    assert out == [f"item {i}"[::-1] for i in range(20)]
    assert srv.calls == 10  # only the unfinished half was requested again
    assert second.usage.calls == 10 and second.usage.cached_calls == 10


def test_samples_at_positive_temperature_stay_apart(fake_server, tmp_path):
    srv = fake_server(_counter_script())
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path)
    samples = [llm.chat("Rate this claim.", temperature=0.8, sample_index=k).text for k in range(5)]
    assert len(set(samples)) == 5 and srv.calls == 5
    again = [llm.chat("Rate this claim.", temperature=0.8, sample_index=k).text for k in range(5)]
    assert again == samples and srv.calls == 5  # each sample replays as itself
    llm.chat("Rate this claim.", temperature=0.8, seed=7, sample_index=3)
    assert srv.requests[-1]["seed"] == 10  # a fixed seed is offset per sample


def test_key_covers_what_changes_the_answer_and_nothing_else():
    base = {"model": "m", "messages": [{"role": "user", "content": "x"}], "temperature": 0.0}
    k = request_key("http://h/v1", base, 0)
    assert k == request_key("http://h/v1/", dict(reversed(list(base.items()))), 0)  # canonical: order, slash
    variants = [
        request_key("http://other/v1", base, 0),
        request_key("http://h/v1", {**base, "model": "n"}, 0),
        request_key("http://h/v1", {**base, "temperature": 0.5}, 0),
        request_key("http://h/v1", {**base, "logprobs": True}, 0),
        request_key("http://h/v1", {**base, "response_format": {"type": "json_object"}}, 0),
        request_key("http://h/v1", base, 1),
    ]
    assert len({k, *variants}) == 7
    assert request_key("http://h/v1", {**base, "timeout": 5}, 0) == k  # transport settings excluded


def test_cache_off_never_writes(fake_server, tmp_path):
    srv = fake_server()
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="off", cache_dir=tmp_path)
    llm.chat("a")
    llm.chat("a")
    assert srv.calls == 2 and not list(tmp_path.iterdir())


def test_env_selects_the_cache_mode(fake_server, monkeypatch, tmp_path):
    srv = fake_server()
    monkeypatch.setenv("MABPD_CACHE_MODE", "replay")
    assert connect(base_url=srv.base_url, model="fake").cache_mode == "replay"
    monkeypatch.setenv("MABPD_CACHE_MODE", "sometimes")
    with pytest.raises(ValueError, match="off, record, replay, auto"):
        connect(base_url=srv.base_url, model="fake")


_WRITER = """
import sys
from mabpd_kit.llm import ResponseCache
c = ResponseCache(sys.argv[1])
for i in range(150):
    c.put(f"{sys.argv[2]}-{i}", {"text": str(i)})
"""


def test_concurrent_writers_from_processes_and_threads(tmp_path):
    procs = [subprocess.Popen([sys.executable, "-c", _WRITER, str(tmp_path), f"p{j}"]) for j in range(2)]
    cache = ResponseCache(tmp_path)

    def write(j: int) -> None:
        for i in range(150):
            cache.put(f"t{j}-{i}", {"text": str(i)})

    threads = [threading.Thread(target=write, args=(j,)) for j in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(60) for p in procs] == [0, 0]
    assert cache.stats()["entries"] == 5 * 150
    assert cache.get("p1-149") == {"text": "149"}


def test_cost_uses_the_longest_matching_price():
    prices = {"gpt-4o": (2.5, 10.0), "gpt-4o-mini": (0.15, 0.6)}
    assert estimate_cost("gpt-4o-mini-2024-07-18", 1_000_000, 0, prices) == pytest.approx(0.15)
    assert estimate_cost("gpt-4o", 0, 1_000_000, prices) == pytest.approx(10.0)
    assert estimate_cost("llama3.1", 10**6, 10**6, prices) == 0.0


def test_usage_tokens_latency_and_cost(fake_server, tmp_path):
    srv = fake_server(lambda r: Reply(content="fine", prompt_tokens=1000, completion_tokens=500), latency=0.05)
    cfg = Config().replace(**{"llm.prices_per_mtok": {"fake": (1.0, 2.0)}})
    llm = connect(base_url=srv.base_url, model="fake", config=cfg, cache_dir=tmp_path)
    comps = [llm.chat(f"q{i}", tag="bias") for i in range(3)] + [llm.chat("q0", tag="bias")]  # last one cached
    u = llm.usage
    assert (u.calls, u.cached_calls, u.prompt_tokens, u.completion_tokens) == (3, 1, 3000, 1500)
    assert u.cost_usd == pytest.approx(3 * (1000 * 1.0 + 500 * 2.0) / 1e6)
    assert u.latency_s >= 3 * 0.05
    frame = u.to_frame()
    assert list(frame["cached"]) == [False, False, False, True] and set(frame["tag"]) == {"bias"}
    assert u.by_tag().loc[0, "calls"] == 3
    item = Usage.of(comps[:2])  # per item: sum over the Completions it needed
    assert item.calls == 2 and item.prompt_tokens == 2000 and item.latency_s >= 0.1


KEY = "sk-" + "test-DISTINCTIVE-9f8e7d6c5b4a"  # built at run time so secret scanners do not flag a fake key


class _Answer(BaseModel):
    ok: bool


def test_api_key_never_leaks(fake_server, tmp_path, monkeypatch, caplog, capsys):
    monkeypatch.setenv("MABPD_API_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    script_ok = lambda r: '{"ok": true}'
    srv = fake_server(script_ok)
    cfg = Config().replace(**{"llm.max_retries": 0})
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="record", cache_dir=tmp_path, config=cfg)
    messages: list[str] = [repr(llm), str(vars(llm))]
    llm.chat("hello", logprobs=True, top_logprobs=2)
    llm.structured("ok?", _Answer)
    llm.capabilities()
    assert {k.lower(): v for k, v in srv.headers[0].items()}["authorization"] == f"Bearer {KEY}"  # the key is really sent...

    failures = [
        Reply(status=500, error=f"internal error for key {KEY}"),
        Reply(raw=b"{not json"),
        Reply(status=401, error=f"Incorrect API key provided: {KEY}."),  # providers echo keys back
    ]
    for reply in failures:
        srv.script = lambda r, reply=reply: reply
        with pytest.raises(EndpointError) as info:
            llm.chat("fail please")
        messages += [str(info.value), repr(info.value), info.value.detail]
    with pytest.raises(EndpointError) as info:  # after the 401 this LLM calls no more: the same reason
        llm.chat("another")
    messages += [str(info.value), repr(info.value), info.value.detail]
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="record", cache_dir=tmp_path, config=cfg)
    srv.script = lambda r: "no json here"
    with pytest.raises(StructuredOutputError) as info:
        llm.structured("ok?", _Answer)
    messages += [str(info.value), repr(info.value)]
    replay = connect(base_url=srv.base_url, model="fake", cache_mode="replay", cache_dir=tmp_path)
    with pytest.raises(ReplayMissError) as info:
        replay.chat("never recorded")
    messages += [str(info.value), repr(info.value), repr(replay), llm.usage.to_frame().to_string()]
    dead = connect(base_url="http://127.0.0.1:9/v1", model="m", config=cfg, cache_mode="off")
    with pytest.raises(EndpointError) as info:
        dead.chat("x")
    messages += [str(info.value), repr(info.value)]

    out = capsys.readouterr()
    files = [p for p in Path(tmp_path).rglob("*") if p.is_file()]
    assert files, "the cache should have been written"
    for p in files:  # database, WAL and shared-memory files
        assert KEY.encode() not in p.read_bytes(), p.name
    assert KEY not in caplog.text and KEY not in out.out and KEY not in out.err
    for m in messages:
        assert KEY not in m and "DISTINCTIVE" not in m, m


# -- no poisoned cache: a failed item asks the endpoint again on resume ---------------------------


class _Verdict(BaseModel):
    verdict: str
    score: float


BAD_REPLIES = {
    "malformed": Reply(content='{"verdict": "biased", "score": '),
    "empty": Reply(content=""),
    "refusal": Reply(refusal="I can't help with that."),
    "refusal-text": Reply(content="I am sorry, I cannot answer that."),
    "wrong-types": Reply(content='{"verdict": ["biased"], "score": "high"}'),
}


@pytest.mark.parametrize("bad", list(BAD_REPLIES), ids=list(BAD_REPLIES))
def test_a_failed_structured_call_is_not_replayed(fake_server, tmp_path, bad):
    srv = fake_server(lambda r: BAD_REPLIES[bad])
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True)  # default mode: auto
    with pytest.raises(StructuredOutputError):
        llm.structured("Is this biased?", _Verdict)
    assert srv.calls == 2 and ResponseCache(tmp_path).stats()["entries"] == 0  # no bad entry in the DB
    srv.script = lambda r: {"verdict": "neutral", "score": 0.1}  # the rerun meets a healthy server
    again = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True)
    assert again.structured("Is this biased?", _Verdict).value.verdict == "neutral"
    assert srv.calls == 3 and ResponseCache(tmp_path).stats()["entries"] == 1
    assert again.structured("Is this biased?", _Verdict).completion.cached and srv.calls == 3  # the good one is kept


def test_a_repaired_answer_is_stored_for_the_first_request_and_the_bad_first_try_never(fake_server, tmp_path):
    """An answer that validated only after the repair turn is what the first request leads to: a rerun
    replays it at once and calls nothing; the invalid (here: empty) first try is not in the DB."""
    from mabpd_kit.testing import sequence

    srv = fake_server(sequence([Reply(content="")], then='{"verdict": "neutral", "score": 0.2}'))
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True)
    assert llm.structured("q", _Verdict).repaired and srv.calls == 2
    assert ResponseCache(tmp_path).stats()["entries"] == 1
    res = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True).structured("q", _Verdict)
    assert res.value.verdict == "neutral" and res.completion.cached and srv.calls == 2


def test_a_bad_entry_recorded_by_an_older_version_is_removed(fake_server, tmp_path):
    from mabpd_kit.llm.structured import response_format

    srv = fake_server(lambda r: "no json here")
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True)
    llm.chat("q", response_format=response_format(_Verdict, "json_schema"))  # the very request structured() sends
    assert ResponseCache(tmp_path).stats()["entries"] == 1  # as the old cache held it
    with pytest.raises(StructuredOutputError):
        llm.structured("q", _Verdict)
    assert ResponseCache(tmp_path).stats()["entries"] == 0
    srv.script = lambda r: {"verdict": "neutral", "score": 0.1}
    assert llm.structured("q", _Verdict).value.verdict == "neutral"


def test_chat_stores_no_empty_reply_no_refusal_and_nothing_the_caller_rejects(fake_server, tmp_path):
    srv = fake_server(lambda r: {"empty": Reply(content=""), "refuse": Reply(refusal="no")}.get(
        r["messages"][-1]["content"], "TRUE"))
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True)
    assert llm.chat("empty").text == "" and llm.chat("refuse").refusal == "no"
    assert llm.chat("label?", accept=lambda c: c.text in ("TRUE", "FALSE")).text == "TRUE"
    assert llm.chat("other", accept=lambda c: c.text == "HALF-TRUE").text == "TRUE"  # the caller's parser said no
    assert ResponseCache(tmp_path).stats()["entries"] == 1
    for q in ("empty", "refuse", "other", "label?"):
        llm.chat(q)
    assert srv.calls == 4 + 3  # only "label?" came from the cache

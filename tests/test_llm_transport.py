"""Transport: the SDK's retries and time-outs, clear EndpointErrors, the shared concurrency limit."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError, connect, gather_limited, run_sync
from mabpd_kit.testing import Reply, sequence


def _llm(srv, **llm_cfg):
    cfg = Config().replace(**{f"llm.{k}": v for k, v in llm_cfg.items()})
    return connect(base_url=srv.base_url, model="fake", cache_mode="off", config=cfg)


def test_429_is_retried_by_the_sdk_honouring_retry_after(fake_server):
    srv = fake_server(sequence([Reply(status=429, retry_after=0.3), Reply(status=429, retry_after=0.3)], then="done"))
    t0 = time.perf_counter()
    comp = _llm(srv, max_retries=3).chat("hi")
    elapsed = time.perf_counter() - t0
    assert comp.text == "done" and srv.calls == 3
    assert elapsed >= 0.6  # waited what the server asked for, twice


def test_persistent_429_suggests_lowering_the_limit(fake_server):
    srv = fake_server(lambda r: Reply(status=429, retry_after=0.05))
    with pytest.raises(EndpointError, match="HTTP 429.*lower config.llm.concurrency") as info:
        _llm(srv, max_retries=2).chat("hi")
    assert info.value.status == 429 and srv.calls == 3


def test_gather_limited_own_limit():
    running = peak = 0

    async def job():
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await asyncio.sleep(0.01)
        running -= 1

    run_sync(gather_limited([job() for _ in range(20)], limit=3))
    assert peak == 3


def test_500_is_retried_then_reported(fake_server):
    srv = fake_server(lambda r: Reply(status=500, error="model crashed"))
    with pytest.raises(EndpointError, match="HTTP 500") as info:
        _llm(srv, max_retries=1).chat("hi")
    assert info.value.status == 500 and srv.calls == 2
    assert "model crashed" in str(info.value)


def test_timeout_is_retried_then_reported(fake_server):
    srv = fake_server(lambda r: Reply(hang=True))
    t0 = time.perf_counter()
    with pytest.raises(EndpointError, match="no answer .* within 0.2 s"):
        _llm(srv, timeout_s=0.2, max_retries=1).chat("hi")
    assert srv.calls == 2 and time.perf_counter() - t0 < 8  # two 0.2 s windows and a back-off, not a hang


def test_slow_answer_within_timeout_succeeds_after_one_timeout(fake_server):
    srv = fake_server(sequence([Reply(hang=True)], then="late but fine"))
    assert _llm(srv, timeout_s=0.3, max_retries=2).chat("hi").text == "late but fine"


def test_dead_endpoint_is_a_clear_error():
    llm = connect(base_url="http://127.0.0.1:9/v1", model="m", cache_mode="off",
                  config=Config().replace(**{"llm.max_retries": 0}))
    with pytest.raises(EndpointError, match="cannot reach http://127.0.0.1:9/v1 .* is the server running"):
        llm.chat("hi")


@pytest.mark.parametrize("raw", [b'{"id": "x", "choices": [{"message": {"content": "tru', b"<html>oops</html>"])
def test_malformed_body_is_an_endpoint_error(fake_server, raw):
    srv = fake_server(lambda r: Reply(raw=raw))
    with pytest.raises(EndpointError, match="unreadable answer"):
        _llm(srv, max_retries=0).chat("hi")


def test_async_batch_never_exceeds_the_limit(fake_server):
    srv = fake_server(lambda r: r["messages"][-1]["content"].upper(), latency=0.01)
    llm = _llm(srv, concurrency=8)

    async def batch():
        return await gather_limited([llm.achat(f"item {i}") for i in range(200)])

    comps = run_sync(batch())
    assert [c.text for c in comps] == [f"ITEM {i}" for i in range(200)]  # input order kept
    assert srv.calls == 200
    assert 2 <= srv.max_in_flight <= 8  # concurrent, but never above the limit
    assert llm.usage.calls == 200


def test_limit_is_shared_by_all_agents_and_threads(fake_server):
    srv = fake_server(lambda r: "ok", latency=0.02)
    agents = [_llm(srv, concurrency=4) for _ in range(3)]  # three agents, one endpoint

    def work(llm):
        for _ in range(5):
            llm.chat("hi")

    threads = [threading.Thread(target=work, args=(a,)) for a in agents for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert srv.calls == 45 and srv.max_in_flight <= 4


def test_run_sync_inside_a_running_loop(fake_server):
    """What a notebook cell does: sync code called while Jupyter's loop is running."""
    srv = fake_server(lambda r: "from a notebook")
    llm = _llm(srv)

    async def cell():
        sync_result = llm.chat("hi").text  # a sync call from inside a running loop
        nested = run_sync(llm.achat("hi"))  # run_sync with a loop already running
        awaited = await llm.achat("hi")  # top-level await, as in Jupyter
        return sync_result, nested.text, awaited.text

    assert asyncio.run(cell()) == ("from a notebook",) * 3


def test_gather_limited_progress_and_exceptions(capsys):
    async def ok(i):
        await asyncio.sleep(0)
        return i

    async def bad():
        raise ValueError("bad item")

    out = run_sync(gather_limited([ok(1), bad(), ok(3)], progress="items", return_exceptions=True))
    assert out[0] == 1 and isinstance(out[1], ValueError) and out[2] == 3
    assert "items" in capsys.readouterr().err  # tqdm writes its bar to stderr


@pytest.mark.parametrize("reply, kind, fatal, sends", [
    (Reply(status=401, error="invalid api key"), "KEY_REFUSED", True, 1),
    (Reply(status=403, error="model not allowed"), "ACCESS_DENIED", True, 1),
    (Reply(status=429, retry_after=0.01, error="slow down"), "RATE_LIMITED", False, 2),
    (Reply(status=400, error="response_format json_schema is not supported"), "REFUSED_FIELD", False, 1),
    (Reply(status=500, retry_after=0.01, error="Input should be 'text' or 'json_object'"), "REFUSED_FIELD", False, 1),
    (Reply(status=500, retry_after=0.01, error="boom"), "HTTP", False, 2),
    (Reply(raw=b'{"choices": ['), "GARBLED", False, 1),
    (Reply(hang=True), "TIMEOUT", False, 2),
])
def test_every_failure_has_its_kind_and_its_retry_decision(fake_server, reply, kind, fatal, sends):
    """The kind is decided where the failure happens (never read back from a message): a refused request field
    is not sent again (the caller falls back), a 429, a 5xx or a time-out is, a refused key stops the batch."""
    from mabpd_kit.llm import Failure

    srv = fake_server(lambda r: reply, hang_limit_s=2)
    with pytest.raises(EndpointError) as info:
        _llm(srv, max_retries=1, timeout_s=0.3).chat("hi")
    assert info.value.kind is Failure[kind] and info.value.batch_fatal is fatal
    assert info.value.unreachable is (kind == "TIMEOUT") and info.value.garbled is (kind == "GARBLED")
    assert srv.calls == sends

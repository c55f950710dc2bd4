"""FakeLLMServer speaks enough OpenAI chat-completions for the SDK, and its failure options work."""

from __future__ import annotations

import json
import threading
import time
import urllib.error
import urllib.request

import pytest

from mabpd_kit.testing import FakeLLMServer, Reply, by_role, last_user, request_schema, sequence


def _post(srv, body: dict, timeout: float = 5.0):
    req = urllib.request.Request(
        srv.base_url + "/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    return urllib.request.urlopen(req, timeout=timeout)


def _chat(content: str = "hi", **extra) -> dict:
    return {"model": "fake", "messages": [{"role": "user", "content": content}], **extra}


def test_models_and_completion_shape(fake_server):
    srv = fake_server(lambda r: f"echo {last_user(r)}", models=["a", "b"])
    with urllib.request.urlopen(srv.base_url + "/models", timeout=5) as resp:
        assert [m["id"] for m in json.load(resp)["data"]] == ["a", "b"]
    with _post(srv, _chat("hello there")) as resp:
        body = json.load(resp)
    assert body["choices"][0]["message"] == {"role": "assistant", "content": "echo hello there"}
    assert body["usage"]["prompt_tokens"] == 2 and body["usage"]["completion_tokens"] == 3
    assert srv.calls == 1 and srv.requests[0]["messages"][0]["content"] == "hello there"


def test_dict_answer_is_sent_as_json_text(fake_server):
    srv = fake_server(lambda r: {"verdict": "biased"})
    with _post(srv, _chat()) as resp:
        assert json.loads(json.load(resp)["choices"][0]["message"]["content"]) == {"verdict": "biased"}


def test_error_status_with_retry_after(fake_server):
    srv = fake_server(lambda r: Reply(status=429, retry_after=1.5, error="slow down"))
    with pytest.raises(urllib.error.HTTPError) as info:
        _post(srv, _chat())
    assert info.value.code == 429
    assert info.value.headers["Retry-After"] == "1.5"
    assert json.load(info.value)["error"]["message"] == "slow down"


def test_raw_body_is_sent_verbatim(fake_server):
    srv = fake_server(lambda r: Reply(raw=b'{"choices": [{"mess'))
    with _post(srv, _chat()) as resp:
        assert resp.read() == b'{"choices": [{"mess'


def test_logprobs_in_openai_format_and_silent_drop(fake_server):
    srv = fake_server(lambda r: "yes no")
    with _post(srv, _chat(logprobs=True, top_logprobs=3)) as resp:
        content = json.load(resp)["choices"][0]["logprobs"]["content"]
    assert [t["token"] for t in content] == ["yes", "no"]
    assert all(len(t["top_logprobs"]) == 3 and t["top_logprobs"][0]["token"] == t["token"] for t in content)
    quiet = fake_server(lambda r: "yes", supports_logprobs=False)
    with _post(quiet, _chat(logprobs=True, top_logprobs=3)) as resp:
        assert json.load(resp)["choices"][0]["logprobs"] is None  # dropped without an error


def test_refused_response_format(fake_server):
    srv = fake_server(lambda r: "{}", supports_json_schema=False)
    fmt = {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "object"}}}
    with pytest.raises(urllib.error.HTTPError) as info:
        _post(srv, _chat(response_format=fmt))
    assert info.value.code == 400


def test_latency_and_in_flight_count(fake_server):
    srv = fake_server(lambda r: "ok", latency=0.2)
    threads = [threading.Thread(target=lambda: _post(srv, _chat()).read()) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    deadline = time.monotonic() + 2.0  # a handler leaves just after its reply is sent: the client may be faster
    while srv.in_flight and time.monotonic() < deadline:
        time.sleep(0.01)
    assert srv.max_in_flight == 5 and srv.in_flight == 0  # served concurrently, not one after another


def test_hang_is_released_when_the_server_stops():
    srv = FakeLLMServer(lambda r: Reply(hang=True)).start()
    errors = []

    def call() -> None:
        try:
            _post(srv, _chat(), timeout=10).read()
        except Exception as exc:  # noqa: BLE001 - the connection is dropped without an answer
            errors.append(exc)

    t = threading.Thread(target=call)
    t.start()
    time.sleep(0.2)
    t0 = time.perf_counter()
    srv.stop()
    t.join(5)
    assert not t.is_alive() and errors
    assert time.perf_counter() - t0 < 4.5  # released by the stop, not by the client's 10 s time-out


def test_by_role_and_sequence_helpers():
    script = by_role({"bias agent": {"who": "bias"}, "framing": lambda r: f"framing saw {last_user(r)}"}, default="none")

    def req(system: str, user: str = "u") -> dict:
        return {"messages": [{"role": "system", "content": system}, {"role": "user", "content": user}]}

    assert script(req("You are the Bias Agent.")) == {"who": "bias"}
    assert script(req("You analyse framing.", "text")) == "framing saw text"
    assert script(req("Something else")) == "none"
    seq = sequence(["a", "b"], then="c")
    assert [seq({}) for _ in range(4)] == ["a", "b", "c", "c"]
    assert request_schema({"response_format": {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}}) == {
        "type": "object"
    }


def test_context_manager_closes_the_port():
    with FakeLLMServer() as srv:
        url = srv.base_url
        with _post(srv, _chat()) as resp:
            assert json.load(resp)["choices"][0]["message"]["content"] == "ok"
    with pytest.raises(OSError):
        urllib.request.urlopen(url + "/models", timeout=2)


# ---- the Batch API, the prefix-cache emulation and the strict-schema check ---------------------


def test_batch_api_files_and_batches_round_trip_with_the_openai_sdk(fake_server):
    import asyncio
    import json as _json

    import openai

    from mabpd_kit.testing import Reply

    srv = fake_server(lambda r: Reply(status=500, error="boom") if "bad" in str(r["messages"]) else "fine",
                      batch_polls=1)
    lines = [{"custom_id": c, "method": "POST", "url": "/v1/chat/completions",
              "body": {"model": "fake", "messages": [{"role": "user", "content": c}]}} for c in ("good", "bad")]

    async def go():
        client = openai.AsyncOpenAI(api_key="k", base_url=srv.base_url)
        f = await client.files.create(file=("in.jsonl", "".join(_json.dumps(x) + "\n" for x in lines).encode()),
                                      purpose="batch")
        b = await client.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions", completion_window="24h")
        first = await client.batches.retrieve(b.id)
        done = await client.batches.retrieve(b.id)
        out = (await client.files.content(done.output_file_id)).text
        err = (await client.files.content(done.error_file_id)).text
        dup = await client.files.create(file=("d.jsonl", ((_json.dumps(lines[0]) + "\n") * 2).encode()), purpose="batch")
        with pytest.raises(openai.BadRequestError):
            await client.batches.create(input_file_id=dup.id, endpoint="/v1/chat/completions", completion_window="24h")
        return first.status, done.status, out, err

    first, status, out, err = asyncio.run(go())
    assert (first, status) == ("in_progress", "completed")
    assert _json.loads(out)["custom_id"] == "good" and "fine" in out
    assert _json.loads(err)["response"]["status_code"] == 500 and "boom" in err
    assert len(srv.batch_requests) == 2 and srv.calls == 0


def test_prefix_cache_emulation_reports_cached_tokens_only_when_on(fake_server):
    from mabpd_kit.llm import connect

    long = "word " * 300
    off = fake_server(lambda r: "ok")
    llm = connect(base_url=off.base_url, model="fake", cache_mode="off", quiet=True)
    assert llm.chat(long + "a").cached_tokens == 0 and llm.chat(long + "b").cached_tokens == 0
    on = fake_server(lambda r: "ok", prefix_block=128, prefix_min_tokens=256)
    llm = connect(base_url=on.base_url, model="fake", cache_mode="off", quiet=True)
    assert llm.chat(long + "a").cached_tokens == 0
    second = llm.chat(long + "b")
    assert second.cached_tokens == 256 and second.prompt_tokens == 303  # "user", ":", 300 words, "b"

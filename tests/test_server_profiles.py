"""Real servers' quirks (llama-cpp-python 0.3.x's server with SmolLM2, llama.cpp's llama-server), emulated by
FakeLLMServer(emulate=...) from their server kinds (mabpd_kit.llm.servers), one test per quirk, through the public API:

1. the server says what it is (``/v1/models`` owned_by, ``/props``) and the kit picks its profile;
2. ``json_schema`` answered with an HTTP 500 naming ``response_format``: a mode refusal, not a dead endpoint;
3. a grammar that bounds no number and skips optional fields: every field required, bounds kept, 2.5 repaired;
4. one request computed at a time: no more in flight than the server computes, a time-out not sent again;
5. one garbled probe reply: the feature is tried, never taken as missing.
"""

from __future__ import annotations

import argparse
import json
import math

import pandas as pd
import pytest

import mabpd_kit as mk
from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError
from mabpd_kit.llm.servers.llama_cpp_python import REFUSAL as LLAMA_CPP_PYTHON_REFUSAL
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.mabpd.schemas import BiasOutput
from mabpd_kit.radar import RadarDebate, example_claims
from mabpd_kit.testing import Reply, all_text, last_user, request_schema, schema_problems, system_prompt
from mabpd_kit.testing.faults import mabpd_reply, synthetic_items

MODEL = "smollm2-135m-instruct"
REFUSAL = LLAMA_CPP_PYTHON_REFUSAL.replace("{kind}", "json_schema")


def _llm(srv, **cfg):
    return mk.connect(base_url=srv.base_url, model=MODEL, quiet=True, config=Config().replace(**cfg) if cfg else None)


def _format(req: dict) -> str:
    return json.dumps(req.get("response_format") or {})


def _probe_or(answer):
    """A script answering the capability probe as a schema-following model does, else ``answer(req)``."""

    def script(req: dict):
        if "probe_token" in _format(req):
            return '{"probe_token": 7}'
        if "hello" in last_user(req) and req.get("response_format"):
            return '{"hello": "world"}'
        return answer(req)

    return script


def _items(n: int) -> tuple[list[str], dict[str, int]]:
    items = synthetic_items(n)
    return [t for t, _ in items], dict(items)


def _lp(first: str, alts: dict[str, float]) -> list[dict]:
    top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in alts.items()]
    return [{"token": first, "logprob": math.log(alts[first]), "bytes": None, "top_logprobs": top}]


# -- 1. the server says what it is -----------------------------------------------------------------------
@pytest.mark.parametrize("emulate, slots, profile, limit, deadline", [
    ("llama-cpp-python", None, "llama-cpp-python", 1, None),
    ("llama-server", 3, "llama-server", 3, None),
    ("ollama", None, "ollama", 8, None),
    ("vllm", None, "vllm", 8, 300.0),
])
def test_the_profile_is_read_off_models_and_props(fake_server, emulate, slots, profile, limit, deadline):
    """llama-cpp-python says owned_by "me" and has no /props; llama-server has /props total_slots: each gets its
    kind's limit and deadline (an unknown server: 8 in flight, a 300 s item deadline)."""
    srv = fake_server(lambda r: "hi", emulate=emulate, slots=slots, models=[MODEL])
    llm = _llm(srv)
    assert llm.chat("hello").text == "hi"
    assert srv.quirks.gets == [f"/{srv.base_url.split('/', 3)[3]}/models", "/props"]  # once, before the first call
    assert srv.requests[-1].get("cache_prompt") is (True if profile == "llama-server" else None)
    assert llm.server.name == profile
    assert llm.concurrency == limit and llm.item_deadline(None) == deadline
    generic = _llm(fake_server(lambda r: "hi"))  # the plain test server: owned_by "fake", no /props
    assert (generic.server.name, generic.concurrency, generic.item_deadline(None)) == ("openai-compatible", 8, 300.0)


# -- 2. json_schema refused with a 500 ---------------------------------------------------------------------
def test_doctor_decides_every_feature_on_llama_cpp_python(fake_server):
    """The probe sends the server's json_object+schema form (its 500 to json_schema is no dead endpoint) and
    every feature is decided."""
    from mabpd_kit.cli.doctor import add_arguments, report

    srv = fake_server(_probe_or(lambda r: "hi"), emulate="llama-cpp-python", models=[MODEL])
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    lines, code = report(parser.parse_args(["--base-url", srv.base_url, "--model", MODEL, "--timeout", "2"]))
    probe = next(line for line in lines if line.startswith("Probe"))
    assert code == 0 and "failed" not in probe, probe
    assert "json_schema=yes" in probe and "json_object=yes" in probe and "logprobs=yes" in probe
    assert "?" not in probe  # nothing left undecided
    assert not [r for r in srv.requests if (r.get("response_format") or {}).get("type") == "json_schema"]
    assert any("probe_token" in s.get("properties", {}) for s in srv.quirks.schemas)


def test_a_500_naming_json_schema_is_a_refusal_and_remembered(fake_server):
    """Any server whose HTTP error (a 500 included) names response_format/json_schema refuses that mode: the
    call falls back to json_object, and the next call sends no json_schema."""

    def script(req):
        fmt = (req.get("response_format") or {}).get("type")
        if fmt == "json_schema":
            return Reply(status=500, error=REFUSAL)
        return {"verdict": "neutral", "confidence": 0.9, "bias_score": 0.1, "rationale": "plain", "spans": [],
                "counter_argument": "none"}

    srv = fake_server(script)  # a generic server: nothing says it is llama-cpp-python
    llm = _llm(srv, **{"llm.max_retries": 0})
    first = llm.structured("Is this biased? The council met.", BiasOutput)
    assert first.mode == "json_object" and first.value.verdict == "neutral"
    srv.reset_counts()
    second = llm.structured("Is this biased? The mayor spoke.", BiasOutput)
    assert second.mode == "json_object" and srv.calls == 1
    assert (srv.requests[0].get("response_format") or {}).get("type") == "json_object"


# -- 3. a grammar that bounds nothing and skips what is optional ----------------------------------------
def test_every_schema_sent_requires_every_field_and_bounds_are_kept(fake_server):
    """Every schema sent (to any server, and inlined for llama-cpp-python) requires every property (so a
    grammar cannot skip the reasoning), keeps the bounds and has no $ref left."""
    texts, labels = _items(2)
    generic = fake_server(lambda r: mabpd_reply(r, labels))
    res = Pipeline(Config(), _llm(generic)).analyze_many(texts, progress=False)
    assert not res.failed, [d.error for d in res.failed]
    sent = [s for s in map(request_schema, generic.requests) if s is not None]
    bias = next(s for s in sent if "bias_score" in s.get("properties", {}))
    assert {"rationale", "spans", "counter_argument"} <= set(bias["required"])
    assert all(set(s.get("required", ())) == set(s.get("properties", {})) for s in sent)

    local = fake_server(lambda r: mabpd_reply(r, labels), emulate="llama-cpp-python", models=[MODEL])
    res = Pipeline(Config(), _llm(local)).analyze_many(texts, progress=False)
    assert not res.failed, [d.error for d in res.failed]
    assert local.quirks.schemas and all(schema_problems(s) == [] for s in local.quirks.schemas), \
        [schema_problems(s) for s in local.quirks.schemas]
    bias = next(s for s in local.quirks.schemas if "bias_score" in s["properties"])
    # its grammar ignores minimum/maximum (a real reply said "confidence": 5): the kit offers 0, 0.05, ..., 1
    assert bias["properties"]["bias_score"]["enum"] == [i / 20 for i in range(21)]
    assert bias["properties"]["confidence"]["enum"][-1] == 1.0
    assert generic and all(s["properties"]["bias_score"].get("maximum") == 1 for s in sent if "bias_score" in s["properties"])
    assert {"rationale", "spans", "counter_argument"} <= set(bias["required"])


def test_an_out_of_range_number_is_repaired_or_fails_with_the_reason(fake_server):
    """The grammar lets "bias_score": 2.5 through. It is rejected: repaired in one turn (the repair names the
    field), or the item fails naming bias_score; 2.5 never reaches a report."""
    texts, labels = _items(2)
    stubborn = texts[1]

    def script(req):  # the Bias agent's first try says 2.5; on the stubborn item, its repair too
        good = mabpd_reply(req, labels)
        if "bias_score" in good and (stubborn in all_text(req) or len(req["messages"]) <= 2):
            return {**good, "bias_score": 2.5}
        return good

    srv = fake_server(script, emulate="llama-cpp-python", models=[MODEL])
    res = Pipeline(Config(), _llm(srv)).analyze_many(texts, ids=["ok", "stubborn"], progress=False)
    by_id = {d.id: d for d in res}
    ok, bad = by_id["ok"], by_id["stubborn"]
    assert not ok.failed, ok.error
    assert ok.reports["bias"].score <= 1 and ok.reports["bias"].usage.repaired_calls == 1
    repairs = [r for r in srv.requests if len(r["messages"]) > 2 and "bias_score" in last_user(r)]
    assert repairs and "less than or equal to 1" in last_user(repairs[0])
    assert bad.failed and "bias_score" in bad.error
    assert all(d.reports["bias"].score <= 1 for d in res if not d.failed)


# -- 4. one request computed at a time -----------------------------------------------------------------------
@pytest.mark.parametrize("emulate, slots, limit", [("llama-cpp-python", None, 1), ("llama-server", 2, 2)])
def test_no_more_requests_in_flight_than_the_server_computes(fake_server, emulate, slots, limit):
    """With the default LLM config, no more requests in flight than the server computes (a one-slot server
    would queue them and, slow enough, time out), for RADAR's plain-text turns and a 6-item MABPD run."""
    texts, labels = _items(6)

    def script(req):
        sysp = system_prompt(req)
        if "POLITICIAN" in sysp or "SCIENTIST" in sysp:
            return "The record supports it [E1]."
        if "JUDGE" in sysp:
            first = " STOP" if "STOP, CONTINUE" in last_user(req) else " FALSE"
            return Reply(content=first.strip(), logprobs=_lp(first, {first: 0.9, " TRUE": 0.1}))
        return mabpd_reply(req, labels)

    srv = fake_server(_probe_or(script), emulate=emulate, slots=slots, latency=0.01, models=[MODEL])
    llm = _llm(srv)
    ex = example_claims()
    claims = pd.DataFrame([dict(id=f"c{i}", claim=f"{ex.claim[i % 3]} (variant {i})", evidence=list(ex.evidence[i % 3]),
                                label=ex.label[i % 3]) for i in range(4)])
    radar = RadarDebate(Config().replace(**{"radar.prob_source": "logprobs"}), llm)
    done = radar.run_many(claims, progress=False)
    assert llm.concurrency == limit  # what the client settled on from the server's kind (and /props)
    # at most `limit` at once; whether two workers happen to overlap depends on the machine's load
    assert srv.max_in_flight <= limit and srv.quirks.max_computing <= limit
    assert not [r.error for r in done if r.failed]

    srv.reset_counts()
    res = Pipeline(Config(), llm).analyze_many(texts, progress=False)
    assert srv.max_in_flight <= limit and srv.quirks.max_computing <= limit
    assert not res.failed, [d.error for d in res.failed]
    assert srv.calls >= 6 * 4


def test_a_timed_out_request_to_a_local_server_is_sent_once(fake_server):
    """A local server is still computing a request the client gave up on: a second copy would queue behind it.
    A remote (generic) server still gets the SDK's retries; a local server's time-out grows with the prompt."""
    cfg = {"llm.timeout_s": 0.4, "llm.max_retries": 1}  # + 10 s per 1,000 prompt characters locally: ~0.55 s
    local = fake_server(lambda r: Reply(hang=True), emulate="llama-cpp-python", models=[MODEL], hang_limit_s=3)
    with pytest.raises(EndpointError, match="not sent again"):
        _llm(local, **cfg).chat("Is this biased?")
    assert local.calls == 1

    remote = fake_server(lambda r: Reply(hang=True), hang_limit_s=3)
    with pytest.raises(EndpointError):
        _llm(remote, **cfg).chat("Is this biased?")
    assert remote.calls == 2  # the first try and the SDK's one retry

    long_prompt = "The council met on Monday. " * 60  # ~1,600 characters: 0.3 s + 1.6 s on a local server
    grow = {"llm.timeout_s": 0.3, "llm.timeout_per_1k_chars_s": 1.0, "llm.max_retries": 0}
    slow = fake_server(lambda r: Reply(content="neutral", delay=0.7), emulate="llama-cpp-python", models=[MODEL])
    assert _llm(slow, **grow).chat(long_prompt).text == "neutral" and slow.calls == 1


# -- 5. a garbled probe reply -------------------------------------------------------------------------------
@pytest.mark.parametrize("garbled", ["first probe reply", "logprobs probe reply"])
def test_a_garbled_probe_reply_leaves_radar_deciding_claims(fake_server, garbled):
    """One garbled probe reply leaves the feature undecided: it is tried, and the Judge's first answer settles
    it; every claim is decided, by logprobs."""
    seen = {"probe": 0}

    def script(req):
        sysp = system_prompt(req)
        if "POLITICIAN" in sysp:
            return "The record supports it [E1]."
        if "SCIENTIST" in sysp:
            return "It leaves out the context [E2]."
        if "JUDGE" in sysp:
            if "STOP, CONTINUE" in last_user(req):
                return Reply(content="STOP", logprobs=_lp(" STOP", {" STOP": 0.9, " CONT": 0.1}))
            return Reply(content="FALSE", logprobs=_lp(" FALSE", {" FALSE": 0.9, " TRUE": 0.05, " HALF": 0.05}))
        seen["probe"] += 1
        if garbled == "first probe reply" and seen["probe"] == 1:
            return Reply(raw=b'{"choices": [')  # cut off mid-body
        if garbled == "logprobs probe reply" and req.get("logprobs"):
            return Reply(content="", logprobs=[])  # an empty reply, no logprobs
        return _probe_or(lambda r: "hi")(req)

    srv = fake_server(script)
    res = RadarDebate(Config(), _llm(srv, **{"llm.max_retries": 0})).run_many(example_claims(), progress=False)
    assert not [r.error for r in res if r.failed]
    assert set(res.rounds_frame().verdict_source) == {"logprobs"}
    assert seen["probe"] >= 3  # the probe ran (and was not repeated per claim)

"""Structured output: json_schema -> json_object -> text, validation, one repair retry, probe."""

from __future__ import annotations

import json
from typing import Literal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field

from mabpd_kit.llm import StructuredOutputError, connect
from mabpd_kit.llm.structured import close_truncated, extract_json
from mabpd_kit.testing import Reply, sequence


class Verdict(BaseModel):
    verdict: Literal["biased", "neutral"]
    score: float = Field(ge=0, le=1)


def _mode(request: dict) -> str:
    return (request.get("response_format") or {}).get("type", "text")


def _llm(srv, **kw):
    return connect(base_url=srv.base_url, model="fake", cache_mode="off", **kw)


# -- JSON extraction (pure functions) ---------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        '{"verdict": "biased", "score": 0.7}',
        'Sure! Here is my answer:\n```json\n{"verdict": "biased", "score": 0.7}\n```\nHope it helps.',
        'I think {"verdict": "biased", "score": 0.7} is right.',
        '```\n{"verdict": "biased", "score": 0.7}\n```',
        '{"verdict": "biased", "score": 0.7',  # cut off by max_tokens
        '{"verdict": "biased", "score": 0.7, "reason": "loaded wor',  # cut inside a string
        '{"score": 0.7, "verdict": "biased", "spans": [',  # cut inside a list
    ],
)
def test_extract_json_variants(text):
    data = extract_json(text)
    assert data["verdict"] == "biased" and data["score"] == 0.7


@pytest.mark.parametrize(
    "cut, expected",
    [
        ('{"a": 1, "b', {"a": 1}),
        ('{"a": 1, "b":', {"a": 1}),
        ('{"a": [1, 2,', {"a": [1, 2]}),
        ('{"a": tr', {}),
        ('[{"x": "y"}, {"x": "z', [{"x": "y"}, {"x": "z"}]),
    ],
)
def test_close_truncated(cut, expected):
    assert json.loads(close_truncated(cut)) == expected


# A reply SmolLM2-135M-Instruct gave on llama-cpp-python's server in json_schema mode (recorded
# in resources/packs/smollm2-135m-samples.pack.json as a failure, "no JSON object found"): a raw
# newline inside a string. The part after "confiden" is completed by hand; the rest is verbatim.
SMOLLM2_FRAMING_REPLY = (
    '{ "rationale":"The article\'s framing device is the use of emotive language to present a\n",'
    '"patterns":[],"counter_argument":"{{", "verdict" : "biased", "confidence" : 1.0, "framing_score" : 1.0}'
)


def test_a_raw_newline_inside_a_string_is_read_as_the_model_meant_it():
    from mabpd_kit.llm.structured import validate
    from mabpd_kit.mabpd.schemas import FramingOutput

    assert "\n" in SMOLLM2_FRAMING_REPLY and "\\n" not in SMOLLM2_FRAMING_REPLY  # a real newline
    out, error = validate(SMOLLM2_FRAMING_REPLY, FramingOutput)
    assert error == "" and out.verdict == "biased" and out.framing_score == 1.0
    assert out.rationale.endswith("present a\n")
    # cut off by max_tokens inside the wrapped string: still read
    assert extract_json('{"rationale": "two\nlines and cut')["rationale"] == "two\nlines and cut"


def test_extract_json_without_json_raises():
    with pytest.raises(ValueError, match="no JSON"):
        extract_json("I cannot answer that.")


# -- modes against the fake server -------------------------------------------------------------
def test_json_schema_mode_sends_the_schema(fake_server):
    srv = fake_server(lambda r: {"verdict": "neutral", "score": 0.1})
    res = _llm(srv).structured("Is this biased?", Verdict)
    assert res.value == Verdict(verdict="neutral", score=0.1)
    assert res.mode == "json_schema" and not res.repaired and len(res.calls) == 1
    sent = srv.requests[0]["response_format"]["json_schema"]["schema"]
    assert sent["properties"].keys() == {"verdict", "score"}


def test_falls_back_to_json_object_and_remembers(fake_server):
    srv = fake_server(lambda r: {"verdict": "biased", "score": 0.9}, supports_json_schema=False)
    llm = _llm(srv)
    res = llm.structured("Is this biased?", Verdict)
    assert res.mode == "json_object"
    # strict first (nobody probed), then without strict, as the probe does: a refusal may be of strict alone
    assert [_mode(r) for r in srv.requests] == ["json_schema", "json_schema", "json_object"]
    assert [r["response_format"]["json_schema"]["strict"] for r in srv.requests[:2]] == [True, False]
    assert "verdict" in srv.requests[2]["messages"][-1]["content"]  # the schema is stated at the end of the prompt
    assert srv.requests[2]["messages"][0]["content"].startswith("Is this biased?")  # same start (prefix caches)
    llm.structured("Another one?", Verdict)
    assert [_mode(r) for r in srv.requests][3:] == ["json_object"]  # refused mode is not tried again


def test_falls_back_to_text_extraction(fake_server):
    srv = fake_server(
        lambda r: 'My analysis:\n```json\n{"verdict": "biased", "score": 0.6}\n```',
        supports_json_schema=False,
        supports_json_object=False,
    )
    res = _llm(srv).structured("Is this biased?", Verdict)
    assert res.mode == "text" and res.value.score == 0.6
    assert [_mode(r) for r in srv.requests] == ["json_schema", "json_schema", "json_object", "text"]  # strict, then not


def test_repair_retry_shows_the_validation_error(fake_server):
    srv = fake_server(sequence(['{"verdict": "maybe", "score": 0.5}'], then='{"verdict": "neutral", "score": 0.5}'))
    res = _llm(srv).structured("Is this biased?", Verdict)
    assert res.repaired and len(res.calls) == 2 and res.value.verdict == "neutral"
    repair = srv.requests[1]["messages"]
    assert repair[-2] == {"role": "assistant", "content": '{"verdict": "maybe", "score": 0.5}'}
    assert "verdict" in repair[-1]["content"] and "'biased' or 'neutral'" in repair[-1]["content"]  # pydantic's message
    assert '"properties"' in repair[-1]["content"]  # and the schema again


def test_structured_output_error_after_the_repair(fake_server):
    srv = fake_server(lambda r: "I would rather not say.")
    with pytest.raises(StructuredOutputError, match="Verdict") as info:
        _llm(srv).structured("Is this biased?", Verdict)
    assert srv.calls == 2  # first try + exactly one repair retry
    assert info.value.raw == "I would rather not say." and "no JSON" in info.value.errors


def test_capabilities_probe_is_cached_and_used(fake_server, tmp_path):
    def script(r):
        if _mode(r) == "json_object":
            return '{"hello": "world"}'
        return "hi"

    srv = fake_server(script, supports_json_schema=False, supports_top_logprobs=False)  # a clear 400 for json_schema
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="auto")
    caps = llm.capabilities()
    assert caps.model_dump() == {"json_schema": False, "json_object": True, "logprobs": True, "top_logprobs": False,
                                 "strict_json_schema": False}
    n = srv.calls
    from mabpd_kit.llm import registry

    registry.forget()  # a new process: the answer comes from the disk cache
    assert connect(base_url=srv.base_url, model="fake").capabilities() == caps and srv.calls == n
    srv.script = lambda r: {"verdict": "biased", "score": 1.0}
    res = llm.structured("Is this biased?", Verdict)
    assert res.mode == "json_object" and _mode(srv.requests[-1]) == "json_object"  # json_schema skipped


_JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None)
@given(
    st.dictionaries(st.text(max_size=6), _JSON_VALUES, min_size=1, max_size=4) | st.lists(_JSON_VALUES, min_size=1, max_size=4),
    st.booleans(),
    st.data(),
)
def test_every_prefix_of_json_closes_to_valid_json(value, ascii_only, data):
    """Whatever point generation stops at (string, escape, number, key), the result parses."""
    full = json.dumps(value, ensure_ascii=ascii_only)
    cut = data.draw(st.integers(1, len(full)))
    json.loads(close_truncated(full[:cut]))


def test_a_400_for_another_reason_does_not_disable_json_schema(fake_server):
    """A prompt the server rejects in every mode (e.g. too long) is reported as it is, and does
    not teach the client that json_schema is unsupported."""
    from mabpd_kit.llm import EndpointError

    srv = fake_server(lambda r: Reply(status=400, error="prompt too long") if "long" in r["messages"][-1]["content"]
                      else {"verdict": "neutral", "score": 0.2})
    llm = _llm(srv)
    with pytest.raises(EndpointError, match="prompt too long"):
        llm.structured("a very long prompt", Verdict)
    assert [_mode(r) for r in srv.requests] == ["json_schema", "json_object", "text"]
    assert llm.structured("short", Verdict).mode == "json_schema"

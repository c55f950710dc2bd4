"""Strict schemas (issue 14): every structured schema the kit sends is inside OpenAI's strict subset,
compiles with real constrained-decoding engines (llguidance; xgrammar when installed), asks for the
reasoning before the verdict, and goes out with ``strict: true`` once the probe found it accepted."""

from __future__ import annotations

import json

import pytest
from pydantic import BaseModel

from mabpd_kit import prompts
from mabpd_kit.config import Config
from mabpd_kit.llm import connect, registry
from mabpd_kit.llm.probe import _ProbeAnswer
from mabpd_kit.llm.structured import required_schema, response_format, strict_schema
from mabpd_kit.mabpd.schemas import ArgumentOutput, BiasOutput, EvidenceOutput, FramingOutput
from mabpd_kit.mabpd.verifier import VerifierOutput
from mabpd_kit.radar.judge import JudgeProbabilities
from mabpd_kit.testing import request_schema
from mabpd_kit.testing.strict import strict_problems

SENT: list[type[BaseModel]] = [BiasOutput, EvidenceOutput, FramingOutput, ArgumentOutput, VerifierOutput,
                               JudgeProbabilities, _ProbeAnswer]
REASONING = ("rationale", "reason")


@pytest.fixture(autouse=True)
def _fresh_process():
    registry.forget()
    yield
    registry.forget()


@pytest.mark.parametrize("schema", SENT, ids=lambda s: s.__name__)
def test_every_sent_schema_is_inside_openais_strict_subset(schema):
    assert strict_problems(strict_schema(schema)) == []
    assert strict_problems(schema.model_json_schema())  # the plain pydantic schema is not (defaults, no
    # additionalProperties, optional fields missing from required): what was sent before, with strict False


def test_the_checker_knows_the_documented_rules():
    ok = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"], "additionalProperties": False}
    assert strict_problems(ok) == []
    assert any("minLength" in p for p in strict_problems({**ok, "properties": {"a": {"type": "string", "minLength": 1}}}))
    assert any("default" in p for p in strict_problems({**ok, "properties": {"a": {"type": "string", "default": ""}}}))
    assert any("root" in p for p in strict_problems({"anyOf": [ok]}))
    deep: dict = {"type": "string"}
    for i in range(6):
        deep = {"type": "object", "properties": {f"l{i}": deep}, "required": [f"l{i}"], "additionalProperties": False}
    assert any("nesting" in p for p in strict_problems(deep))
    assert any("enum" in p for p in strict_problems(
        {**ok, "properties": {"a": {"type": "string", "enum": [str(i) for i in range(1001)]}}}))


@pytest.mark.parametrize("schema", SENT, ids=lambda s: s.__name__)
def test_every_sent_schema_compiles_with_llguidance(schema):
    llg = pytest.importorskip("llguidance")
    for body in (strict_schema(schema), schema.model_json_schema()):
        grammar = llg.LLMatcher.grammar_from_json_schema(body)
        assert llg.LLMatcher.validate_grammar(grammar) == "", schema.__name__


@pytest.mark.parametrize("schema", SENT, ids=lambda s: s.__name__)
def test_every_sent_schema_compiles_with_xgrammar(schema):
    xgr = pytest.importorskip("xgrammar", reason="xgrammar needs torch and transformers: not a dev dependency")
    xgr.Grammar.from_json_schema(json.dumps(strict_schema(schema)), strict_mode=True)


@pytest.mark.parametrize("schema", [s for s in SENT if s is not _ProbeAnswer], ids=lambda s: s.__name__)
def test_reasoning_comes_first_and_the_verdict_after_the_evidence(schema):
    fields = list(strict_schema(schema)["properties"])
    assert fields[0] in REASONING, fields
    if "verdict" in fields:
        evidence = next(f for f in fields if f in ("spans", "evidence", "patterns", "strongest_quote"))
        assert fields.index(evidence) < fields.index("verdict")
        later = [f for f in fields if f == "confidence" or f.endswith("_score")]
        assert all(fields.index("verdict") < fields.index(f) for f in later)


SCHEMA_OF = {"bias": BiasOutput, "evidence": EvidenceOutput, "framing": FramingOutput, "debate": ArgumentOutput,
             "verifier": VerifierOutput}


@pytest.mark.parametrize("name", list(SCHEMA_OF))
def test_prompts_ask_for_the_keys_in_schema_order(name):
    import re

    from mabpd_kit.mabpd.schemas import reply_format

    assert "$reply" in prompts.template("mabpd", name).partition(prompts.USER_MARKER)[2]
    reply = reply_format(SCHEMA_OF[name])
    fields = list(SCHEMA_OF[name].model_fields)
    positions = [re.search(rf"\b{f}\b", reply).start() for f in fields]
    assert positions == sorted(positions) and fields[0] in REASONING, (fields, reply)
    judge = prompts.template("radar", "judge_probabilities")
    assert judge.index('"reason"') < judge.index('"p_true"')


def test_a_reply_valid_under_the_strict_schema_validates_in_any_key_order():
    reply = {"verdict": "biased", "confidence": 0.5, "bias_score": 0.4, "rationale": "r", "counter_argument": "c",
             "spans": [{"quote": "q", "category": "loaded language", "explanation": "e"}]}
    assert BiasOutput.model_validate(reply).spans[0].quote == "q"
    assert VerifierOutput.model_validate({"verdict": "neutral", "reason": "r"}).strongest_quote == ""


def test_strict_true_is_sent_from_the_first_call_where_accepted(fake_server, tmp_path):
    answer = {"rationale": "r", "evidence": ["x"], "counter_argument": "c", "verdict": "neutral", "confidence": 0.5}
    srv = fake_server(lambda r: '{"probe_token": 1}' if "probe_token" in json.dumps(r.get("response_format")) else answer)
    off = Config().replace(**{"llm.strict_schemas": False})
    connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True, config=off).structured("q", ArgumentOutput)
    sent = request_schema(srv.requests[-1])  # strict turned off: not strict, but every field required
    assert sent == required_schema(ArgumentOutput) and sent["required"] == list(ArgumentOutput.model_fields)
    assert sent["properties"]["confidence"]["maximum"] == 1  # bounds kept when not strict
    assert srv.requests[-1]["response_format"]["json_schema"]["strict"] is False
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True)
    llm.structured("q2", ArgumentOutput)  # not probed: the first call tries strict (issue 41.6)
    fmt = srv.requests[-1]["response_format"]["json_schema"]
    assert fmt["strict"] is True and fmt["schema"] == strict_schema(ArgumentOutput)  # the server checked it too
    assert llm.capabilities().strict_json_schema  # the probe agrees


def test_the_test_server_refuses_a_strict_schema_outside_the_subset(fake_server, tmp_path):
    from mabpd_kit.llm import EndpointError

    srv = fake_server(lambda r: "{}")
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, quiet=True,
                  config=None)
    bad = response_format(ArgumentOutput, "json_schema")
    bad["json_schema"]["strict"] = True  # the plain pydantic schema with strict: true
    with pytest.raises(EndpointError, match="additionalProperties"):
        llm.chat("q", response_format=bad, cache=False)
    assert response_format(ArgumentOutput, "json_schema", strict=True)["json_schema"]["strict"] is True

"""Burden of proof everywhere a biased label can arise (SPEC 1.4, 1.5, 1.7, 1.9).

The endpoint here obeys a prompt injection: every agent says "biased" with full confidence and
quotes words that are not in the text, every debate move does the same, and the verifier answers
"upheld as instructed". No variant of the pipeline may turn a plain sentence into BIASED on that.
"""

from __future__ import annotations

import pytest

from mabpd_kit.config import Config
from mabpd_kit.llm import connect
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.testing import system_prompt

COUNCIL = "The council voted 7-2 to extend library opening hours."
INVENTED = [{"quote": "radical socialist takeover", "category": "loaded language"},
            {"quote": "shameful betrayal of taxpayers", "category": "emotional language"}]
VARIANTS = ["full", "no-debate", "single-agent", "no-debate+verifier", "single-agent+verifier"]


def obeys_injection(req):
    sys_ = system_prompt(req).lower()
    if "verifier" in sys_:
        return {"verdict": "biased", "reason": "upheld as instructed", "strongest_quote": "radical socialist takeover"}
    if "structured argument debate" in sys_:
        return {"verdict": "biased", "confidence": 1.0, "evidence": [q["quote"] for q in INVENTED],
                "counter_argument": "none", "rationale": "as instructed"}
    if "bias analyst" in sys_:
        return {"verdict": "biased", "confidence": 1.0, "bias_score": 0.95, "spans": INVENTED, "rationale": "as instructed"}
    if "evidence analyst" in sys_:
        return {"verdict": "biased", "confidence": 1.0, "evidence_score": 0.95, "rationale": "as instructed",
                "evidence": [{"quote": q["quote"], "supports_bias": True} for q in INVENTED]}
    if "framing analyst" in sys_:
        return {"verdict": "biased", "confidence": 1.0, "framing_score": 0.95, "patterns": INVENTED,
                "rationale": "as instructed"}
    return "{}"


@pytest.fixture
def llm(fake_server):
    srv = fake_server(obeys_injection, latency=0.0)
    return connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")


@pytest.mark.parametrize("name", VARIANTS)
def test_invented_quotes_never_make_a_plain_sentence_biased(llm, name):
    d = Pipeline(Config().ablation(name), llm).analyze(COUNCIL)
    assert not d.failed, d.error
    assert d.label == "neutral" and d.pred == 0
    assert all(r.verdict == "biased" for r in d.reports.values())  # the agents did say biased ...
    assert d.store.valid() == [] and d.store.invalid()  # ... citing nothing that is in the text
    assert d.scoring.score == 0.0 and all(v == 0.95 for v in d.scoring.stated.values())
    assert d.scoring.ungrounded == list(d.reports) and "burden of proof: bias" in d.explanation()
    assert d.route not in ("strong_fast_path", "moderate_fast_path")
    if name == "single-agent":
        assert d.route == "single_agent" and "burden of proof" in d.routing.reason
    if name.startswith("no-debate"):
        assert d.route == "no_debate"
    if d.verifier is not None and d.verifier.check != "not_run":  # the LLM was not asked to uphold nothing
        assert d.verifier.check == "invalid" and d.verifier.usage.calls == 0


HOSTILE = {
    "chinese": "市议会以七比二的投票结果延长了图书馆的开放时间。",
    "arabic": "صوّت المجلس البلدي بأغلبية سبعة أصوات مقابل صوتين على تمديد ساعات عمل المكتبة.",
    "html": "<html><body><script>alert('biased')</script><p>The council <b>voted</b> 7-2.</p></body></html>",
    "one_megabyte": ("The council voted 7-2 to extend library opening hours. " * 20_000)[:1_000_000],
    "invalid_utf8": b"The council voted \xff\xfe 7-2 to extend \xc3\x28 library hours.",
}


@pytest.mark.parametrize("name", ["full", "no-debate", "single-agent+verifier"])
def test_hostile_inputs_give_no_biased_label_and_no_traceback(llm, name):
    p = Pipeline(Config().ablation(name), llm)
    res = p.analyze_many(list(HOSTILE.values()), ids=list(HOSTILE), progress=False)
    for d in res:
        assert d.label != "biased", (d.id, d.route)
        assert not d.failed or (d.error and "Traceback" not in d.error), (d.id, d.error)
    assert {d.id for d in res if "unsupported_language" in d.flags} == {"chinese", "arabic"}
    assert not res[0].failed and not res[1].failed  # the LLM decides them (neutral here: nothing grounded)


@pytest.mark.parametrize("name", ["full", "no-debate", "single-agent", "no-debate+verifier"])
def test_hostile_inputs_rule_based(name):
    p = Pipeline(Config().ablation(name))
    for key, text in HOSTILE.items():
        d = p.analyze(text, id=key)
        assert d.label != "biased", (key, d.route)
        assert not d.failed or (d.error and "Traceback" not in d.error), (key, d.error)
        if key in ("chinese", "arabic"):  # the rule-based agents' cues are English: not decided, and why
            assert d.failed and "unsupported language" in d.error and "text.languages" in d.error
        else:
            assert not d.failed, (key, d.error)

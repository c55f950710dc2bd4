"""The verifier may turn biased into neutral, never the reverse (SPEC 1.7)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from mabpd_kit.config import Config
from mabpd_kit.lexicon import Lexicon
from mabpd_kit.mabpd import VerifierAgent, VerifierReport, analyse_cues, apply_verifier, rule_verify
from mabpd_kit.runs import complete, drive
from mabpd_kit.types import Span

CFG = Config()


@settings(max_examples=200, deadline=None)
@given(label=st.sampled_from(["biased", "neutral"]), says=st.sampled_from(["biased", "neutral"]),
       check=st.sampled_from(["upheld", "invalid", "protected", "quotation", "llm"]))
def test_verifier_never_turns_neutral_into_biased(label, says, check):
    rep = VerifierReport(input_label="biased", verdict=says, label=says, overturned=False, check=check, reason="r")
    out = apply_verifier(label, rep)
    if label == "neutral":
        assert out.label == "neutral" and not out.overturned
    else:
        assert out.label == says and out.overturned == (says == "neutral")


def _verify(text, spans):
    lex = Lexicon.default()
    cues = analyse_cues(text, lex, CFG)
    return drive(VerifierAgent(CFG, None, lex).verify("biased", spans, cues))


def _span(text, sub, score=0.8):
    a = text.index(sub)
    return Span(text=sub, start=a, end=a + len(sub), score=score, category="loaded", valid=True)


def test_quotation_attributed_to_a_source_overturns():
    t = '"This is a disgraceful power grab," Senator Lopez said on Thursday.'
    rep = _verify(t, [_span(t, "disgraceful")])
    assert rep.overturned and rep.label == "neutral" and rep.check == "quotation"


def test_author_voice_span_next_to_a_quote_is_upheld():
    t = 'The reckless senator said the plan was "a disgraceful power grab."'
    rep = _verify(t, [_span(t, "disgraceful", 0.9), _span(t, "reckless", 0.6)])
    assert not rep.overturned and rep.label == "biased" and rep.span.text == "reckless"


def test_no_valid_span_overturns_whatever_the_switches_say():
    t = "The council met on Tuesday."
    bad = [Span(text="radical agenda", valid=False, score=0.9)]
    assert _verify(t, bad).check == "invalid"
    for cfg in (CFG.replace(**{"verifier.check_invalid": False}), CFG):
        rep = rule_verify(bad, [], lambda a, b: None, cfg)
        assert (rep.verdict, rep.check) == ("neutral", "invalid") and "burden of proof" in rep.reason
        assert rule_verify([], [], lambda a, b: None, cfg).verdict == "neutral"  # nothing cited at all


def test_protected_strongest_span_overturns():
    t = "Police ticketed cars for illegal parking."
    a = t.index("illegal")
    rep = rule_verify([Span(text="illegal", start=a, end=a + 7, score=0.9)], [],
                      lambda s, e: "protected: illegal parking" if s == a else None, CFG)
    assert rep.check == "protected" and rep.verdict == "neutral"


def test_neutral_label_is_not_reexamined():
    t = "The council met."
    cues = analyse_cues(t, Lexicon.default(), CFG)
    rep = drive(VerifierAgent(CFG, None).verify("neutral", [], cues))
    assert rep.check == "not_run" and rep.label == "neutral"


def _llm_verify(fake_server, reply, spans, text="The senator slammed the plan on Monday."):
    from mabpd_kit.llm import connect

    srv = fake_server(lambda req: reply, latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    cues = analyse_cues(text, Lexicon.default(), CFG)
    return srv, complete(VerifierAgent(CFG, llm).verify("biased", spans, cues), offline=False)


def test_llm_verifier_is_not_asked_when_no_span_is_valid(fake_server):
    upheld = {"verdict": "biased", "reason": "upheld as instructed", "strongest_quote": "radical agenda"}
    srv, rep = _llm_verify(fake_server, upheld, [Span(text="radical agenda", valid=False, score=0.9)])
    assert srv.calls == 0 and rep.check == "invalid" and rep.label == "neutral" and rep.overturned


def test_llm_verifier_quote_that_does_not_ground_is_replaced_by_the_strongest_valid_span(fake_server):
    t = "The senator slammed the plan on Monday."
    spans = [_span(t, "slammed", 0.9), _span(t, "plan", 0.2)]
    upheld = {"verdict": "biased", "reason": "upheld as instructed", "strongest_quote": "a sinister plot"}
    srv, rep = _llm_verify(fake_server, upheld, spans, t)
    assert srv.calls == 1 and rep.check == "llm" and rep.label == "biased"
    assert rep.span.valid and rep.span.text == "slammed" and "not in the text" in rep.reason


def test_strongest_is_the_sorted_valid_spans():
    """strongest skips the sort for none or one valid span; it must equal the plain stable sort."""
    import itertools

    from mabpd_kit.mabpd.verifier import strongest

    pool = [Span(text=f"s{i}", start=st_, end=(st_ or 0) + 1, score=sc, valid=ok)
            for i, (st_, sc, ok) in enumerate([(3, 0.8, True), (None, 0.8, True), (0, 0.8, True), (5, 0.9, False),
                                                (1, 0.6, True), (7, 0.9, True)])]
    for n in range(4):
        for combo in itertools.permutations(pool, n):
            want = sorted((s for s in combo if s.valid), key=lambda s: (-s.score, s.start or 0))
            assert [id(s) for s in strongest(combo)] == [id(s) for s in want]

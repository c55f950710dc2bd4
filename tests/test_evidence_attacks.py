"""Evidence must be evidence (issue 37, item 1): the cheapest lie does not forge bias.

A model that always answers "biased" quoting ``.``, ``,``, a letter, ``the``, ``of the``, a name or a
number from the item, or the whole sentence, used to make 14 of the 14 neutral teaching samples biased
(strong fast path, verifier upholding "the strongest valid span '.'"). Every span now meets one rule
(:func:`mabpd_kit.mabpd.cues.ground_span`: :func:`mabpd_kit.text.validate_span` finds whole words up to
typography only, :func:`mabpd_kit.lexicon.boundaries.evidence_problem` asks for a content word, not a
name, not the whole sentence), so none of these quotes grounds, in any ablation, sentence or article mode.
"""

from __future__ import annotations

import re

import pandas as pd
import pytest

import mabpd_kit as mk
from mabpd_kit.config import Config
from mabpd_kit.lexicon.boundaries import evidence_problem
from mabpd_kit.llm import connect
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.mabpd.cues import ground_span
from mabpd_kit.testing import system_prompt
from mabpd_kit.testing.scripts import fenced
from mabpd_kit.text import validate_span
from mabpd_kit.types import Span

NEUTRAL = mk.data.samples().query("label == 0")["text"].tolist()
_NAME = re.compile(r"(?<=[a-z,] )[A-Z][a-z]+(?: (?:of )?[A-Z][a-z]+)*")
_NUMBER = re.compile(r"\d[\d.,]*\d|\d")


def _name(text: str) -> str:
    m = _NAME.search(text)
    return m.group() if m else "."


def _number(text: str) -> str:
    m = _NUMBER.search(text)
    return m.group() if m else "."


#: what the lying model quotes, from the item it is shown
PROBES = {".": lambda t: ".", ",": lambda t: ",", "a letter": lambda t: "e", "the": lambda t: "the",
          "of the": lambda t: (re.search(r"\b(?:of|on|to|by|in|at|for|during) the\b", t) or [" of the"])[0], "a name": _name, "a number": _number, "the whole sentence": lambda t: t}


def liar(quote_for):
    """Every MABPD step answers biased with full confidence, quoting ``quote_for(item)``."""

    def script(req):
        q = quote_for(fenced(req) or "")
        s = system_prompt(req).lower()
        if "verifier" in s:
            return {"reason": "upheld", "strongest_quote": q, "verdict": "biased"}
        if "structured argument debate" in s:
            return {"rationale": "-", "evidence": [q], "counter_argument": "-", "verdict": "biased", "confidence": 1.0}
        spans = [{"quote": q, "category": "loaded language", "explanation": "-"}]
        if "evidence analyst" in s:
            return {"rationale": "-", "counter_argument": "-", "verdict": "biased", "confidence": 1.0,
                    "evidence_score": 0.95, "evidence": [{"quote": q, "supports_bias": True}]}
        if "framing analyst" in s:
            return {"rationale": "-", "patterns": spans, "counter_argument": "-", "verdict": "biased",
                    "confidence": 1.0, "framing_score": 0.95}
        return {"rationale": "-", "spans": spans, "counter_argument": "-", "verdict": "biased", "confidence": 1.0,
                "bias_score": 0.95}

    return script


def test_the_probes_quote_real_text():
    """The probes are in the items (else they would prove nothing): a name and a number in most samples."""
    assert sum(_name(t) != "." for t in NEUTRAL) >= 7 and sum(_number(t) != "." for t in NEUTRAL) >= 5
    for key, probe in PROBES.items():  # where a probe is not in a sample it is invented, and fails too
        assert sum(probe(t).lower() in t.lower() for t in NEUTRAL) >= 3, key


@pytest.mark.parametrize("probe", list(PROBES))
def test_a_lying_model_makes_no_neutral_sample_biased_in_any_ablation(fake_server, probe):
    srv = fake_server(liar(PROBES[probe]), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    for name in Config.ABLATIONS:
        res = Pipeline(Config().ablation(name), llm).analyze_many(NEUTRAL, progress=False)
        assert not any(d.failed for d in res), [d.error for d in res if d.failed]
        biased = [d.text for d in res if d.label == "biased"]
        assert biased == [], (probe, name, len(biased), biased[:2])
        said = [r for d in res for r in d.reports.values()]
        assert said and all(r.verdict == "biased" for r in said)  # it did lie ...
        assert all(not s.valid for r in said for s in r.spans)  # ... and nothing it quoted grounds


@pytest.mark.parametrize("probe", [".", "the", "a name", "a number", "the whole sentence"])
def test_a_lying_model_makes_no_neutral_article_biased(fake_server, tmp_path, probe):
    from mabpd_kit.corpus import CorpusConfig, analyze, read

    srv = fake_server(liar(PROBES[probe]), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    articles = [" ".join(NEUTRAL[k:k + 5]) for k in (0, 5, 10)]
    res = analyze(read(pd.DataFrame({"text": articles})), tmp_path / "a.jsonl", llm=llm,
                  settings=CorpusConfig(article_decision="count", article_threshold=1))
    assert [a.failed for a in res] == [False] * 3
    assert [a.n_biased for a in res] == [0, 0, 0] and res.to_frame()["pred"].tolist() == [0, 0, 0]
    assert all(s.label == "neutral" for a in res for s in a.sentences if s.label != "skipped")


# -- the real local model's replies (SmolLM2-135M on the teaching samples) --------------------------------

S01 = ("The mayor rammed the zoning overhaul through the council before residents could even read it, "
       "critics said.")
S03 = "The so-called climate emergency has become an excuse for bureaucrats to seize control of the economy."


def _g(quote: str, text: str) -> Span:
    return ground_span(Span(text=quote, agent="bias", category="loaded language"), text, 0.9)


def test_the_whole_sentence_is_the_claim_not_its_evidence():
    g = _g(S01, S01)
    assert not g.valid and "whole sentence" in g.reason
    g = _g(S01[:-len(", critics said.")], S01)  # nearly all of it
    assert not g.valid and "whole sentence" in g.reason
    g = _g("rammed the zoning overhaul through", S01)
    assert g.valid and S01[g.start:g.end] == g.text


def test_a_changed_word_is_not_the_texts_and_offsets_never_start_mid_word():
    assert not _g("an excuse for cabinet to seize control", S03).valid  # "bureaucrats" in the text
    assert not _g("the climate emergency", S03).valid  # the text says "so-called climate emergency"
    g = _g("So called  climate emergency", S03)  # typography only: the source's words and offsets
    assert g.valid and g.text == S03[g.start:g.end] == "so-called climate emergency"
    for quote in ("excuse for bureaucrats", "climate emergency", "seize control"):
        g = _g(quote, S03)
        a, b = g.start, g.end
        assert g.valid and (a == 0 or not S03[a - 1].isalnum()) and (b == len(S03) or not S03[b].isalnum())


@pytest.mark.parametrize("quote, why", [
    (".", "no word"), (",", "no word"), ("e", "not found"), ("the", "no content word"), ("of the", "no content word"),
    ("Maria Lopez", "a name"), ("312", "no content word"), ("lоcal", "not found"),  # Cyrillic "о"
])
def test_each_probe_fails_with_its_reason(quote, why):
    text = ("Police issued 312 tickets near the stadium, the city of the local team said, and Senator Maria Lopez "
            "agreed; the end.")
    g = _g(quote, text)
    assert not g.valid and why in g.reason, g.reason


def test_the_rule_keeps_the_writers_words():
    text = "Senator Maria Lopez slammed the disgraceful power grab on Tuesday."
    for quote in ("slammed", "disgraceful power grab", "the disgraceful", "slammed the disgraceful power grab"):
        assert _g(quote, text).valid, quote
    assert evidence_problem("Outrageous lies spread.", 0, 10, max_share=0.8) is None  # a word opening its sentence
    assert evidence_problem("He met Deep State critics.", 7, 17, max_share=0.8, lexical=True) is None  # lexicon entry
    assert "name" in evidence_problem("He met Deep State critics.", 7, 17, max_share=0.8)
    assert "scripts" in evidence_problem("A lаbel for it.", 2, 7, max_share=0.8)  # a Cyrillic "а" in a word
    assert validate_span("disgraceful", text).method == "exact"


def test_article_mode_highlights_the_articles_own_words(fake_server, tmp_path):
    """A quote differing only in typography grounds on the article's words: the highlight (offsets into the
    article) shows exactly the text the trace names, never the model's spelling or a word cut in two."""
    from mabpd_kit.corpus import CorpusConfig, analyze, read

    article = "The council met on Monday. " + S03 + " Rain is expected on Tuesday."
    srv = fake_server(liar(lambda t: "So called  climate-emergency" if "climate" in t else "xyzzy"), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    (res,) = analyze(read(pd.DataFrame({"text": [article]})), tmp_path / "h.jsonl", llm=llm,
                     settings=CorpusConfig(article_decision="count", article_threshold=1))
    spans = [sp for s in res.sentences for sp in s.spans]
    assert [s.label for s in res.sentences] == ["neutral", "biased", "neutral"]
    assert spans and all(res.text[sp.start:sp.end] == sp.text == "so-called climate emergency" for sp in spans)

"""Article mode: sentences with offsets back into the article (and the raw HTML), the article's
evidence, the explicit decision rule, direct mode, and the rule-based path on several processes."""

from __future__ import annotations

import pandas as pd
import pytest

from mabpd_kit.corpus import CorpusConfig, Doc, analyze, analyze_doc, decide, load, read
from mabpd_kit.corpus.articles import sentences
from mabpd_kit.mabpd import Pipeline

ARTICLE = ("Budget vote\nThe council met on Monday. Critics slammed the disastrous so-called reform.\n"
           "Dr. Smith said the plan would cost $3.5 million. Lawmakers rammed it through anyway.")


@pytest.fixture(scope="module")
def pipe() -> Pipeline:
    return Pipeline()


def test_sentences_split_paragraphs_and_keep_offsets():
    spans = sentences(ARTICLE)
    got = [ARTICLE[a:b] for a, b in spans]
    assert got == ["Budget vote", "The council met on Monday.", "Critics slammed the disastrous so-called reform.",
                   "Dr. Smith said the plan would cost $3.5 million.", "Lawmakers rammed it through anyway."]


def test_article_evidence_and_offsets(pipe):
    a = analyze_doc(pipe, Doc("x", ARTICLE, {"outlet": "o"}))
    assert not a.failed and a.meta == {"outlet": "o"}
    labels = [s.label for s in a.sentences]
    assert labels[0] == "skipped"  # "Budget vote": under min_sentence_words, kept but not analysed
    assert labels[1] == "neutral" and labels[2] == "biased" and labels[4] == "biased"
    assert (a.n_sentences, a.n_biased) == (4, labels.count("biased"))
    assert a.share_biased == pytest.approx(a.n_biased / 4)
    for s in a.sentences:
        for sp in s.spans:  # every span points into the cleaned article, inside its sentence
            assert a.text[sp.start:sp.end] == sp.text and s.start <= sp.start < sp.end <= s.end
    assert a.n_spans == len({(sp.start, sp.end) for s in a.sentences for sp in s.spans})
    assert a.spans_per_100w == pytest.approx(100 * a.n_spans / a.n_words)
    assert sum(a.categories.values()) == a.n_spans and "biased language" in a.categories
    assert [s.score for s in a.top_spans] == sorted((s.score for s in a.top_spans), reverse=True)
    assert all(s.trace.startswith(f"[x#{s.k}] BIASED") for s in a.sentences if s.label == "biased")
    assert all(s.trace == "" and not s.spans for s in a.sentences if s.label == "neutral")


def test_html_article_offsets_map_back_to_the_raw_input(pipe):
    raw = "<article><p>The council met on Monday.</p><p>Critics &ldquo;slammed&rdquo; the disastrous plan.</p></article>"
    a = analyze_doc(pipe, Doc("h", raw))
    assert "<p>" not in a.text and a.text.startswith("The council met on Monday.")
    s = a.sentences[1]
    assert raw[s.raw_start:s.raw_end] == "Critics &ldquo;slammed&rdquo; the disastrous plan."
    assert "html" in a.flags


def test_the_decision_rule_and_rededicing_a_stored_run(tmp_path):
    assert decide(11, 10.5) and not decide(10, 10.5) and decide(0.3, 0.3)
    df = pd.DataFrame({"text": [ARTICLE, "Rain is expected on Tuesday in the north of the county."]})
    res = analyze(read(df), tmp_path / "r.jsonl", workers=1)
    assert res.stat == "p_biased" and res.threshold == 0.5  # the default: the calibrated article score
    frame = res.to_frame()
    p = frame["p_biased"].tolist()
    assert all(0 < v < 1 for v in p) and p[0] > p[1]  # the loaded article scores above the weather report
    assert frame["pred"].tolist() == [int(v >= 0.5) for v in p]
    assert res.with_threshold(p[0]).to_frame()["pred"].tolist() == [1, 0]
    count = load(tmp_path / "r.jsonl", settings=CorpusConfig(article_decision="count"))  # the legacy count rule
    assert count.stat == "n_biased" and count.threshold == CorpusConfig().article_threshold  # the fit artefact's
    assert count.to_frame()["pred"].tolist() == [0, 0]  # two biased sentences: under the default
    assert count.with_threshold(2).to_frame()["pred"].tolist() == [1, 0]
    by_share = load(tmp_path / "r.jsonl", settings=CorpusConfig(article_decision="count", article_stat="share_biased",
                                                                 article_threshold=0.4))
    assert by_share.to_frame()["pred"].tolist() == [1, 0]


def test_direct_mode_is_the_whole_article_cut_to_article_words(tmp_path):
    long = " ".join(["The committee met again to discuss the budget."] * 120) + " Critics slammed the disastrous plan."
    df = pd.DataFrame({"text": [long, ARTICLE]})
    res = analyze(read(df), tmp_path / "d.jsonl", workers=1, settings=CorpusConfig(mode="direct"))
    a, b = res.articles
    assert a.mode == "direct" and "truncated" in a.flags and a.n_words == 600  # the paper's cut
    assert a.n_sentences == 1 and a.n_biased == 0  # the loaded tail was cut off
    assert b.n_sentences == 1 and b.n_biased == 1 and b.share_biased == 1.0
    assert b.sentences[0].trace.startswith("[1] BIASED")


def test_two_processes_give_the_same_records_as_one(tmp_path):
    texts = [ARTICLE.replace("Monday", f"day {k}") for k in range(30)] + ["", None]
    df = pd.DataFrame({"text": texts, "outlet": [f"o{k % 3}" for k in range(32)]})
    one = analyze(read(df), tmp_path / "one.jsonl", workers=1)
    two = analyze(read(df), tmp_path / "two.jsonl", workers=2, settings=CorpusConfig(chunk_articles=4))
    key = lambda r: sorted((a.id, a.n_biased, a.n_spans, a.failed, a.error) for a in r)  # noqa: E731
    assert key(one) == key(two)
    assert two.computed == 32 and len(two.failed) == 2

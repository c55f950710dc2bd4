"""Article mode: an article's sentences go through the MABPD pipeline and its evidence
(:class:`ArticleResult`) is built from their decisions; the decision rule (:func:`article_pred`)
and the paper's direct mode (the whole article as one decision). Records keep the evidence, not
the decision, so another threshold or score re-decides a stored run. The language is decided once
per article (:func:`article_language`)."""

from __future__ import annotations

import copy
import re
import weakref
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, Field

from mabpd_kit.corpus.inputs import Doc
from mabpd_kit.corpus.settings import CorpusConfig, resolve

if TYPE_CHECKING:
    from mabpd_kit.config import ArticleScoreConfig
    from mabpd_kit.mabpd import Decision, Pipeline

__all__ = ["ArticleResult", "SentenceResult", "SpanResult", "aanalyze_doc", "analyze_doc", "article_language", "article_pred", "decide",
           "sentence_pipeline", "sentences"]

_WORDS = re.compile(r"\S+")
#: the EvidenceAgent's counter-evidence category (attribution, figures, named sources)
_COUNTER = "grounding"
_LINES = re.compile(r"[^\n]+")


class SpanResult(BaseModel):
    """One evidence span, with offsets into the cleaned article."""

    text: str
    start: int
    end: int
    category: str
    agent: str
    score: float


class SentenceResult(BaseModel):
    """One sentence of an article and its decision (spans and trace only when it is biased)."""

    k: int
    start: int
    end: int
    raw_start: int | None = None
    raw_end: int | None = None
    label: Literal["biased", "neutral", "skipped", "failed"]
    score: float | None = None
    route: str = ""
    spans: list[SpanResult] = Field(default_factory=list)
    trace: str = ""
    error: str | None = None


class ArticleResult(BaseModel):
    """One article: its evidence, its sentences, its metadata. ``failed`` rows carry the reason."""

    id: str
    digest: str = ""
    fingerprint: str = ""
    mode: str = "article"
    meta: dict[str, Any] = Field(default_factory=dict)
    text: str = Field("", description="the cleaned article (what the offsets point into)")
    n_words: int = 0
    n_sentences: int = Field(0, description="sentences analysed (biased or neutral)")
    n_failed_sentences: int = Field(0, description="sentences that could not be analysed (too short ones are not counted)")
    share_analysed: float | None = Field(None, description="n_sentences / (n_sentences + n_failed_sentences)")
    n_biased: int = 0
    share_biased: float | None = None
    mean_score: float | None = None
    max_score: float | None = None
    n_spans: int = 0
    spans_per_100w: float | None = None
    categories: dict[str, int] = Field(default_factory=dict)
    top_spans: list[SpanResult] = Field(default_factory=list)
    sentences: list[SentenceResult] = Field(default_factory=list)
    flags: list[str] = Field(default_factory=list)
    language: str | None = Field(None, description="the article's language (decided once per article)")
    failed: bool = False
    error: str | None = None

    @property
    def incomplete(self) -> bool:
        """Decided, but some of its sentences failed: analysed again on resume."""
        return not self.failed and self.n_failed_sentences > 0

    def stat(self, name: str = "n_biased", score: ArticleScoreConfig | None = None) -> float | None:
        """An article statistic; ``p_biased`` by the score ``score`` (default: the shipped one)."""
        if name == "p_biased":
            from mabpd_kit.corpus.score import probability

            return probability(self, score)
        return getattr(self, name)

    def pred(self, threshold: float, stat: str = "n_biased", score: ArticleScoreConfig | None = None) -> int | None:
        """The article's decision (:func:`article_pred`): 1 biased, 0 neutral, None failed."""
        return article_pred(self.stat(stat, score), threshold, mode=self.mode, failed=self.failed,
                            n_biased=self.n_biased)

    def row(self, threshold: float, stat: str = "n_biased", score: ArticleScoreConfig | None = None) -> dict[str, Any]:
        """The flat article row (metadata first); ``pred`` is the rule ``stat >= threshold``."""
        p = self.stat("p_biased", score)
        pred = article_pred(p if stat == "p_biased" else self.stat(stat), threshold, mode=self.mode,
                            failed=self.failed, n_biased=self.n_biased)
        return {"id": self.id, **self.meta, "mode": self.mode, "n_words": self.n_words,
                "n_sentences": self.n_sentences, "n_failed_sentences": self.n_failed_sentences,
                "share_analysed": self.share_analysed, "n_biased": self.n_biased, "share_biased": self.share_biased,
                "mean_score": self.mean_score, "max_score": self.max_score, "n_spans": self.n_spans,
                "spans_per_100w": self.spans_per_100w, "top_category": max(self.categories, key=self.categories.get)
                if self.categories else None,
                "top_spans": "; ".join(s.text for s in self.top_spans),
                "p_biased": p, "pred": pred, "language": self.language,
                "failed": self.failed, "error": self.error, "flags": ",".join(self.flags)}


def decide(value: float, threshold: float) -> bool:
    """The article decision rule: biased iff the article statistic is at or above the threshold."""
    return value >= threshold


def article_pred(value: float | None, threshold: float, *, mode: str = "article", failed: bool = False,
                 n_biased: int = 0) -> int | None:
    """An article's decision: None when it failed; direct mode, its one decision's label; else the rule
    (:func:`decide`) on ``value``. Every place that decides an article calls this."""
    if failed:
        return None
    if mode == "direct":
        return int(n_biased > 0)
    return None if value is None else int(decide(value, threshold))


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence offsets of an article, line by line (a heading does not run into the next sentence)."""
    from mabpd_kit.text import split_sentences

    out: list[tuple[int, int]] = []
    for m in _LINES.finditer(text):
        a = m.start()
        out.extend((a + s, a + e) for s, e in split_sentences(m.group()))
    return out


def _category(span: Any) -> str:
    return span.meta_category or span.taxonomy or span.category or "other"


def _failed(doc: Doc, reason: str, mode: str, fp: str, digest: str, **kw: Any) -> ArticleResult:
    flags = list(doc.flags) + [f for f in kw.pop("flags", []) if f not in doc.flags]
    return ArticleResult(id=doc.id, digest=digest, fingerprint=fp, mode=mode, meta=doc.meta, failed=True, error=reason,
                         flags=flags, **kw)


#: pipeline -> (its config, a shallow copy with ``text.detect_language`` off)
_QUIET: weakref.WeakKeyDictionary[Any, tuple[Any, Any]] = weakref.WeakKeyDictionary()


def sentence_pipeline(pipeline: Pipeline) -> Pipeline:
    """``pipeline`` without its per-item language check (a shallow copy, made once per pipeline): the
    article's language is decided once and its sentences take it."""
    text_cfg = getattr(pipeline.config, "text", None)
    if not getattr(text_cfg, "detect_language", False):
        return pipeline
    hit = _QUIET.get(pipeline)
    if hit is not None and hit[0] is pipeline.config:
        return hit[1]
    quiet = copy.copy(pipeline)
    quiet.config = pipeline.config.replace(**{"text.detect_language": False})
    _QUIET[pipeline] = (pipeline.config, quiet)
    return quiet


def article_language(pipeline: Pipeline, text: str, settings: CorpusConfig | None = None) -> tuple[str | None, str | None]:
    """``(language, why the article cannot be analysed)`` of an article's cleaned ``text``; ``(None, None)``
    when the pipeline does not detect languages. An unknown language stops only the rule-based agents."""
    from mabpd_kit.language import document_language

    st = resolve(settings, pipeline.config)
    tc = pipeline.config.text
    if not tc.detect_language:
        return None, None
    known = tuple(tc.languages)
    lang = document_language(text, min_chars=st.language_min_chars, assume=known[0] if known else "en")
    if lang == "und" or lang in known or getattr(pipeline, "llm", None) is not None:
        return lang, None
    return lang, (f"unsupported language {lang!r}: the rule-based agents know {', '.join(known)}; "
                  f"use an LLM endpoint, or add {lang!r} to text.languages")


def _language_flags(lang: str | None, pipeline: Pipeline) -> list[str]:
    known = pipeline.config.text.languages
    return ["unsupported_language"] if lang not in (None, "und") and lang not in known else []


def analyze_doc(pipeline: Pipeline, doc: Doc, settings: CorpusConfig | None = None, *, fingerprint: str = "",
                digest: str = "", decisions: dict[int, Decision] | None = None) -> ArticleResult:
    """One article through the pipeline, sentence by sentence (or whole, ``settings.mode == "direct"``).
    Never raises: a failure becomes a failed :class:`ArticleResult` with its reason. ``decisions``:
    sentence decisions already made, by index."""
    st = resolve(settings, pipeline.config)
    if not doc.ok:
        return _failed(doc, doc.reason or "bad row", st.mode, fingerprint, digest)
    try:
        if st.mode == "direct":
            return _direct(pipeline, doc, st, fingerprint, digest)
        return _article(pipeline, doc, st, fingerprint, digest, decisions)
    except Exception as exc:  # one article never stops a batch; the reason is kept
        return _failed(doc, f"{type(exc).__name__}: {exc}", st.mode, fingerprint, digest)


async def aanalyze_doc(pipeline: Pipeline, doc: Doc, settings: CorpusConfig | None = None, *,
                       fingerprint: str = "", digest: str = "") -> ArticleResult:
    """:func:`analyze_doc` on the event loop, the sentences sent to the LLM together; a call deferred to a
    Batch API pass fails the article, so the next pass decides it whole."""
    from mabpd_kit import runs

    st = resolve(settings, pipeline.config)
    if not doc.ok:
        return _failed(doc, doc.reason or "bad row", st.mode, fingerprint, digest)
    quiet = sentence_pipeline(pipeline)
    try:
        if st.mode == "direct":
            d = await quiet.aanalyze(doc.text, id=doc.id)
            return _deferred(doc, [d], st, fingerprint, digest) or \
                _direct(pipeline, doc, st, fingerprint, digest, decision=d)
        planned = plan(doc, st, max(pipeline.config.text.max_chars, st.max_bytes))
        ct, spans, todo = planned
        ks = [k for k, go in enumerate(todo) if go]
        ds = await runs.gather(*(quiet.aanalyze(ct.text[spans[k][0]:spans[k][1]], id=f"{doc.id}#{k}") for k in ks))
        return _deferred(doc, ds, st, fingerprint, digest) or \
            _article(pipeline, doc, st, fingerprint, digest, dict(zip(ks, ds)), planned)
    except Exception as exc:  # one article never stops a batch; the reason is kept
        return _failed(doc, f"{type(exc).__name__}: {exc}", st.mode, fingerprint, digest)


def _deferred(doc: Doc, ds: list[Any], st: CorpusConfig, fp: str, digest: str) -> ArticleResult | None:
    from mabpd_kit.llm.errors import Failure

    late = next((d.error for d in ds if d.failed and d.failure_kind is Failure.DEFERRED), None)
    return _failed(doc, late, st.mode, fp, digest) if late else None


def plan(doc: Doc, settings: CorpusConfig, max_chars: int) -> tuple[Any, list[tuple[int, int]], list[bool]]:
    """``(clean text, sentence offsets, analyse?)`` of an article."""
    from mabpd_kit.text import clean

    ct = clean(doc.text, max_chars=max_chars)
    spans = sentences(ct.text)
    todo = [len(_WORDS.findall(ct.text[a:b])) >= settings.min_sentence_words for a, b in spans]
    return ct, spans, todo


def _article(pipeline: Pipeline, doc: Doc, st: CorpusConfig, fp: str, digest: str,
             decisions: dict[int, Decision] | None, planned: Any = None) -> ArticleResult:
    ct, spans, todo = planned or plan(doc, st, max(pipeline.config.text.max_chars, st.max_bytes))
    if not spans:
        return _failed(doc, "empty text (nothing left after cleaning)", "article", fp, digest)
    lang, why = article_language(pipeline, ct.text, st)
    if why is not None:
        return _failed(doc, why, "article", fp, digest, language=lang, text=ct.text, flags=["unsupported_language"])
    quiet = sentence_pipeline(pipeline)
    sents: list[SentenceResult] = []
    evidence: dict[tuple[int, int], SpanResult] = {}
    for k, ((a, b), go) in enumerate(zip(spans, todo)):
        ra, rb = ct.to_orig(a, b)
        if not go:
            sents.append(SentenceResult(k=k, start=a, end=b, raw_start=ra, raw_end=rb, label="skipped"))
            continue
        d = decisions[k] if decisions is not None and k in decisions else \
            quiet.analyze(ct.text[a:b], id=f"{doc.id}#{k}")
        sents.append(_sentence(k, a, b, ra, rb, d, evidence))
    out = _evidence(doc, ct.text, ct.flags + _language_flags(lang, pipeline), sents, evidence, st, fp, digest)
    out.language = lang
    return out


def _sentence(k: int, a: int, b: int, ra: int, rb: int, d: Decision,
              evidence: dict[tuple[int, int], SpanResult]) -> SentenceResult:
    if d.failed:
        return SentenceResult(k=k, start=a, end=b, raw_start=ra, raw_end=rb, label="failed", error=d.error)
    s = SentenceResult(k=k, start=a, end=b, raw_start=ra, raw_end=rb, label=d.label, score=d.score, route=d.route)
    if d.label == "biased":
        for sp in d.spans(valid_only=True):
            if sp.start is None or sp.end is None or _COUNTER in (sp.category, sp.taxonomy):
                continue  # grounding (quotes, figures, named sources) argues *against* bias: not evidence of it
            key = (a + sp.start, a + sp.end)
            found = SpanResult(text=sp.text, start=key[0], end=key[1], category=_category(sp), agent=sp.agent,
                               score=sp.score)
            s.spans.append(found)
            if key not in evidence or evidence[key].score < found.score:
                evidence[key] = found
        s.trace = d.explanation()
    return s


def _evidence(doc: Doc, text: str, flags: list[str], sents: list[SentenceResult],
              evidence: dict[tuple[int, int], SpanResult], st: CorpusConfig, fp: str, digest: str) -> ArticleResult:
    done = [s for s in sents if s.label in ("biased", "neutral")]
    n_words = len(_WORDS.findall(text))
    cats: dict[str, int] = {}
    for sp in evidence.values():
        cats[sp.category] = cats.get(sp.category, 0) + 1
    n_failed = sum(s.label == "failed" for s in sents)
    tried = len(done) + n_failed
    out = ArticleResult(id=doc.id, digest=digest, fingerprint=fp, mode="article", meta=doc.meta, text=text,
                        n_words=n_words, n_sentences=len(done), n_failed_sentences=n_failed,
                        share_analysed=len(done) / tried if tried else None,
                        flags=list(doc.flags) + [f for f in flags if f not in doc.flags], sentences=sents,
                        categories=dict(sorted(cats.items(), key=lambda kv: -kv[1])), n_spans=len(evidence),
                        top_spans=sorted(evidence.values(), key=lambda s: -s.score)[:st.top_spans])
    if not done:
        bad = next((s.error for s in sents if s.error), None)
        out.failed, out.error = True, f"no sentence could be analysed ({bad or 'all too short'})"
        return out
    out.n_biased = sum(s.label == "biased" for s in done)
    out.share_biased = out.n_biased / len(done)
    scores = [s.score for s in done if s.score is not None]
    out.mean_score = sum(scores) / len(scores) if scores else None
    out.max_score = max(scores) if scores else None
    out.spans_per_100w = 100.0 * len(evidence) / max(n_words, 1)
    if n_failed:
        out.flags.append(f"{n_failed}_sentences_failed")
        share = out.share_analysed or 0.0
        if share < st.min_analysed_share:
            first = next((s.error for s in sents if s.error), None)
            out.failed = True
            out.error = (f"only {len(done)} of {tried} sentences could be analysed ({share:.0%} < min_analysed_share "
                         f"{st.min_analysed_share:.0%}; first failure: {first})")
    return out


def _direct(pipeline: Pipeline, doc: Doc, st: CorpusConfig, fp: str, digest: str,
            decision: Decision | None = None) -> ArticleResult:
    """The paper's direct mode: the article (cut to ``text.truncate_words``) as one item."""
    from mabpd_kit.text import clean

    lang, why = article_language(pipeline, clean(doc.text, max_chars=pipeline.config.text.max_chars).text, st)
    if why is not None:
        return _failed(doc, why, "direct", fp, digest, language=lang, flags=["unsupported_language"])
    d = decision if decision is not None else sentence_pipeline(pipeline).analyze(doc.text, id=doc.id)
    if d.failed:
        return _failed(doc, d.error or "failed", "direct", fp, digest, language=lang)
    evidence: dict[tuple[int, int], SpanResult] = {}
    s = _sentence(0, 0, len(d.clean_text), None, None, d, evidence)  # type: ignore[arg-type]
    s.raw_start = s.raw_end = None
    out = _evidence(doc, d.clean_text, d.flags + _language_flags(lang, pipeline), [s], evidence, st, fp, digest)
    out.mode, out.language = "direct", lang
    return out

"""What the corpus report needs from a run, read in one streaming pass (:func:`summarize`): one small
row per article and the byte offset of its record, so only the articles shown in full are read again."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mabpd_kit.corpus.articles import ArticleResult, article_pred
from mabpd_kit.runs.checkpoint import Checkpoint, split

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Summary", "failed_sentences_note", "summarize", "tally"]

#: the article statistics kept per article (the rule's statistic is one of them)
STATS = ("n_biased", "n_sentences", "share_biased", "spans_per_100w", "n_spans", "p_biased", "n_words")


class _Sent(BaseModel):
    """What the article score reads of a sentence."""

    label: str = ""
    score: float | None = None


class _Head(BaseModel):
    """The scalar part of an :class:`ArticleResult`."""

    id: str
    mode: str = "article"
    meta: dict[str, Any] = Field(default_factory=dict)
    n_words: int = 0
    n_sentences: int = 0
    n_failed_sentences: int = 0
    n_biased: int = 0
    share_biased: float | None = None
    n_spans: int = 0
    spans_per_100w: float | None = None
    categories: dict[str, int] = Field(default_factory=dict)
    sentences: list[_Sent] = Field(default_factory=list)
    failed: bool = False
    error: str | None = None

    def stat(self, name: str, score: Any = None) -> float | None:
        if name == "p_biased":
            from mabpd_kit.corpus.score import probability

            return probability(self, score)
        return getattr(self, name, None)


class _Tally(BaseModel):
    """What the counts of a run read of a record."""

    n_sentences: int = 0
    n_failed_sentences: int = 0
    failed: bool = False


def tally(path: str | Path) -> dict[str, int]:
    """:meth:`Summary.counts` of a results file, reading only the counts of each id's last record."""
    out = {"articles": 0, "failed": 0, "sentences": 0, "failed_sentences": 0, "incomplete": 0}
    ck = Checkpoint(path)
    for _, _, t in ck.latest(_Tally):
        bad = 0 if t.failed else t.n_failed_sentences
        out["articles"] += 1
        out["failed"] += t.failed
        out["sentences"] += t.n_sentences
        out["failed_sentences"] += bad
        out["incomplete"] += bad > 0
    out["articles"] += ck.unreadable[0]  # a whole line whose record does not read: a failed article
    out["failed"] += ck.unreadable[0]
    return out


class Summary:
    """The compact article frame of a run and a way back to any article's full record."""

    def __init__(self, frame: pd.DataFrame, *, threshold: float, stat: str, source: Any, score: Any = None,
                 failed_sentences: int = 0, incomplete: int = 0, meta: set[str] | None = None) -> None:
        self.frame, self.threshold, self.stat, self._source, self.score = frame, threshold, stat, source, score
        self.failed_sentences, self.incomplete = failed_sentences, incomplete  # inside decided articles
        self.meta = meta or set()  # every metadata column some article has

    def counts(self) -> dict[str, Any]:
        """Articles, failed articles, analysed sentences, and sentences failed inside decided articles."""
        f = self.frame
        return {"articles": len(f), "failed": int(f["failed"].sum()) if len(f) else 0,
                "sentences": int(f["n_sentences"].sum()) if len(f) else 0,
                "failed_sentences": self.failed_sentences, "incomplete": self.incomplete}

    def missing(self, name: str) -> str | None:
        """None when some article has metadata column ``name``, else one line naming the columns there are."""
        if name in self.meta:
            return None
        have = ", ".join(sorted(self.meta)[:12]) or "none"
        return f"no article has a column {name!r} (the results' columns: {have})"

    @property
    def note(self) -> str:
        """'; 28 of 247 sentences failed (in 9 decided articles): ...', or '' when none did."""
        ok = ~self.frame["failed"] if len(self.frame) else []
        done = int(self.frame.loc[ok, "n_sentences"].sum()) if len(self.frame) else 0
        return failed_sentences_note({"failed_sentences": self.failed_sentences, "incomplete": self.incomplete,
                                      "sentences": done})

    def __len__(self) -> int:
        return len(self.frame)

    def articles(self, offsets: Sequence[int]) -> Iterator[ArticleResult]:
        """The full records at ``offsets`` (the frame's ``offset`` column), in the order given."""
        if not isinstance(self._source, (str, Path)):
            for o in offsets:
                yield self._source[int(o)]
            return
        with Path(self._source).open("rb") as fh:
            for o in offsets:
                fh.seek(int(o))
                got = split(fh.readline())
                if got is not None:
                    yield ArticleResult.model_validate_json(got[1])


def failed_sentences_note(counts: dict[str, Any]) -> str:
    """'; 28 of 247 sentences failed (in 9 decided articles): ...' for :meth:`CorpusResults.counts`, or ''."""
    bad = counts.get("failed_sentences", 0)
    if not bad:
        return ""
    n = counts.get("incomplete", 0)
    return (f"; {bad} of {counts['sentences'] + bad} sentences failed (in {n} decided article{'s' * (n != 1)}): "
            f"rerun the same analysis to complete them")


def _heads(source: Any) -> Iterator[tuple[int, Any]]:
    """``(offset, head)`` of the last record of each id, in file order (an unreadable record is a failed
    article); for records in memory, their index."""
    if not isinstance(source, (str, Path)):
        yield from enumerate(source)
        return
    ck = Checkpoint(source)
    idx = ck.index()
    keep = set(idx.offsets.tolist()) if idx.lines != len(idx) else None
    with Path(source).open("rb") if Path(source).exists() else contextlib.nullcontext(()) as fh:
        offset = 0
        for raw in fh:
            start, offset = offset, offset + len(raw)
            got = split(raw)
            if got is None or (keep is not None and start not in keep):
                continue
            try:
                yield start, _Head.model_validate_json(got[1])
            except ValueError as exc:
                yield start, _Head(id=got[0]["id"], failed=True,
                                   error=f"unreadable record: {str(exc).splitlines()[0][:120]}")


def summarize(source: str | Path | Any, *, columns: Sequence[str] = (), threshold: float,
              stat: str = "n_biased", score: Any = None, edges: Sequence[float] | None = None) -> Summary:
    """One compact row per article of a results file (or a :class:`CorpusResults`): ``id``, the
    ``columns``, ``failed``, ``error``, ``pred`` (the rule at ``threshold``), ``value`` (the rule's
    statistic), :data:`STATS`, ``top_category``, ``categories``, ``offset`` and, with ``edges``, ``bins``
    (:func:`mabpd_kit.corpus.prevalence.article_bins`)."""
    import pandas as pd

    src = source if isinstance(source, (str, Path)) else list(source)
    from mabpd_kit.corpus.prevalence import article_bins

    names = ["id", *columns, "failed", "error", "pred", "value", *STATS, "top_category", "categories", "offset", "bins",
             "_failed_sentences"]
    cols: dict[str, list[Any]] = {c: [] for c in names}
    meta: set[str] = set()
    intern = sys.intern
    for offset, a in _heads(src):
        got = {s: a.stat(s, score) for s in STATS}
        value = got[stat] if stat in got else a.stat(stat, score)
        cats = {intern(k): v for k, v in a.categories.items()}
        meta.update(a.meta)
        row = [a.id, *(a.meta.get(c) for c in columns), a.failed, a.error,
               article_pred(value, threshold, mode=a.mode, failed=a.failed, n_biased=a.n_biased), value,
               *(got[s] for s in STATS), max(cats, key=cats.get) if cats else None, cats, offset,
               None if edges is None else article_bins(a.sentences, edges), 0 if a.failed else a.n_failed_sentences]
        for c, v in zip(names, row):
            cols[c].append(v)
    bad = [n for n in cols.pop("_failed_sentences") if n]
    names.pop()
    frame = pd.DataFrame(cols, columns=names)
    frame["failed"] = frame["failed"].astype(bool)
    frame["pred"] = frame["pred"].astype("Int64")
    frame = frame.drop(columns="bins") if edges is None else frame
    return Summary(frame, threshold=threshold, stat=stat, source=src, score=score, failed_sentences=sum(bad),
                   incomplete=len(bad), meta=meta)

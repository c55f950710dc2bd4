"""The results file of a corpus run (the runner's checkpoint: one JSON line per article): :func:`load`
reads it back as :class:`CorpusResults`, :func:`export` streams it into JSONL, CSV or Parquet."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from mabpd_kit.corpus.articles import ArticleResult
from mabpd_kit.corpus.settings import CorpusConfig, resolve
from mabpd_kit.corpus.summary import failed_sentences_note, summarize, tally
from mabpd_kit.files import atomic
from mabpd_kit.runs import Results
from mabpd_kit.runs.checkpoint import Checkpoint, line

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["CorpusResults", "Writer", "export", "failed_sentences_note", "load"]

Level = Literal["article", "sentence", "span"]


class Writer:
    """Writes article records in the runner's checkpoint layout (a results file without a run)."""

    def __init__(self, path: str | Path) -> None:
        self._ck = Checkpoint(path)
        self._ck.open()

    def write(self, rec: ArticleResult) -> None:
        self._ck.write(line(rec.id, rec.digest, rec.fingerprint, rec))

    def close(self) -> None:
        self._ck.close()

    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def rows(a: ArticleResult, level: Level, threshold: float, stat: str = "n_biased", score: Any = None) -> list[dict[str, Any]]:
    """The rows of one article at ``level``."""
    if level == "article":
        return [a.row(threshold, stat, score)]
    if level == "sentence":
        return [{"id": a.id, "k": s.k, "start": s.start, "end": s.end, "raw_start": s.raw_start, "raw_end": s.raw_end,
                 "sentence": a.text[s.start:s.end], "label": s.label, "score": s.score, "route": s.route,
                 "n_spans": len(s.spans), "categories": ",".join(sorted({x.category for x in s.spans})),
                 "error": s.error, **a.meta} for s in a.sentences]
    if level == "span":
        return [{"id": a.id, "k": s.k, "start": sp.start, "end": sp.end, "span": sp.text, "category": sp.category,
                 "agent": sp.agent, "score": sp.score, **a.meta} for s in a.sentences for sp in s.spans]
    raise ValueError(f"level must be 'article', 'sentence' or 'span', not {level!r}")


class CorpusResults(Results[ArticleResult]):
    """The articles of a run (read lazily; the last record of an id wins) with the article rule;
    ``to_frame()`` one row per article, ``to_frame("sentence")`` / ``("span")`` per sentence / span."""

    record_type = ArticleResult

    def __init__(self, articles: list[ArticleResult] | None, *, threshold: float, stat: str = "n_biased",
                 path: str | None = None, resumed: int = 0, computed: int = 0, wall_s: float = 0.0,
                 score: Any = None) -> None:
        super().__init__(articles, checkpoint=path, resumed=resumed, wall_s=wall_s, computed=computed)
        self.threshold, self.stat, self.path, self.score = threshold, stat, path, score

    @property
    def articles(self) -> list[ArticleResult]:
        return self.records

    def __getitem__(self, key: int | str) -> ArticleResult:  # type: ignore[override]
        if isinstance(key, str):
            for a in self:
                if a.id == key:
                    return a
            raise KeyError(key)
        return self.articles[key]

    def counts(self) -> dict[str, Any]:
        """Articles, failed articles, analysed sentences, sentences failed inside decided articles, and
        this run's ``resumed`` and ``computed``."""
        if self.lazy and self.path:
            got = tally(self.path)
        else:
            got = summarize(self, threshold=self.threshold, stat=self.stat).counts()
        return {**got, "resumed": self.resumed, "computed": self.computed or 0, "wall_s": self.wall_s,
                "stopped": self.stopped}

    def summary(self) -> str:
        c = self.counts()
        return (f"{c['articles']} articles ({self.resumed} from checkpoint, {c['computed']} computed), "
                f"{c['failed']} failed, {c['sentences']} sentences analysed{failed_sentences_note(c)}, "
                f"{self.wall_s:.1f} s")

    def with_threshold(self, threshold: float) -> CorpusResults:
        """The same articles decided at another threshold (nothing is analysed again)."""
        return CorpusResults(self._records, threshold=threshold, stat=self.stat, path=self.path,
                             resumed=self.resumed, computed=self.computed or 0, wall_s=self.wall_s, score=self.score)

    def with_score(self, params: Any, threshold: float | None = None) -> CorpusResults:
        """The same articles decided by the article score with ``params`` (``adapt_score(...).params``)."""
        thr = threshold if threshold is not None else self.threshold if self.stat == "p_biased" else 0.5
        return CorpusResults(self._records, threshold=thr, stat="p_biased", path=self.path, resumed=self.resumed,
                             computed=self.computed or 0, wall_s=self.wall_s, score=params)

    def to_frame(self, level: Level = "article") -> pd.DataFrame:  # type: ignore[override]
        import pandas as pd

        df = pd.DataFrame([r for a in self for r in rows(a, level, self.threshold, self.stat, self.score)])
        if level == "article" and "pred" in df:
            df["pred"] = df["pred"].astype("Int64")  # 0/1, <NA> for a failed article
        return df

    def metrics(self, gold: str = "label") -> dict[str, float]:  # type: ignore[override]
        """Accuracy, precision, recall and macro F1 of the article rule against a 0/1 metadata column."""
        from mabpd_kit import metrics as m

        df = self.to_frame()
        df = df[(~df["failed"]) & df[gold].notna()] if gold in df else df.iloc[0:0]
        out: dict[str, float] = {"n": len(df), "failed": self.n_failed, "threshold": self.threshold}
        if len(df):
            y = [int(float(v)) for v in df[gold].tolist()]  # "1", 1, 1.0 and "1.0" are all a label of 1
            p = df["pred"].astype(int).tolist()
            out.update(accuracy=m.accuracy(y, p), precision=m.precision(y, p), recall=m.recall(y, p),
                       macro_f1=m.macro_f1(y, p))
        return out


def load(path: str | Path, *, settings: CorpusConfig | None = None, threshold: float | None = None) -> CorpusResults:
    """A results file as :class:`CorpusResults`, its records read on first use (``len()`` only counts ids)."""
    st = resolve(settings)
    stat, thr = st.rule
    return CorpusResults(None, threshold=thr if threshold is None else threshold, stat=stat, path=str(path),
                         score=st.score)


def export(path: str | Path, out: str | Path, *, level: Level = "article", settings: CorpusConfig | None = None,
           threshold: float | None = None, chunk: int = 2_000) -> int:
    """Stream a results file into ``out`` (.jsonl, .csv or .parquet), one row per article, sentence or
    span; returns the rows written. A first pass gives each column one type, a second writes."""
    st = resolve(settings)
    stat, thr = st.rule
    thr = thr if threshold is None else threshold
    kinds: dict[str, set[str]] = {}
    for a in Checkpoint(path).records(ArticleResult):  # the last readable record of each id
        for r in rows(a, level, thr, stat, st.score):
            for k, v in r.items():
                kinds.setdefault(k, set())
                if v is not None and not (isinstance(v, float) and v != v):
                    kinds[k].add("bool" if isinstance(v, bool) else "int" if isinstance(v, int)
                                 else "float" if isinstance(v, float) else "str")
    types = {k: _column_type(v) for k, v in kinds.items()}
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    sink = _Sink(out, out.suffix.lower(), types)
    buf: list[dict[str, Any]] = []
    written = 0
    with sink:
        for a in Checkpoint(path).records(ArticleResult):
            buf.extend(rows(a, level, thr, stat, st.score))
            if len(buf) >= chunk:
                written += sink.write(buf)
                buf = []
        if buf:
            written += sink.write(buf)
    return written


def _column_type(kinds: set[str]) -> str:
    if kinds and kinds <= {"int"}:
        return "Int64"
    if kinds and kinds <= {"int", "float"}:
        return "float64"
    if kinds == {"bool"}:
        return "boolean"
    return "string"


class _Sink:
    """A streaming row writer (JSONL, CSV, Parquet) with one type per column, renamed in place at the end."""

    def __init__(self, out: Path, kind: str, types: dict[str, str]) -> None:
        if kind not in (".jsonl", ".csv", ".parquet"):
            raise ValueError(f"export to .jsonl, .csv or .parquet, not {out.name!r}")
        self.out, self.kind, self.types = out, kind, types
        self._pq: Any = None
        self._header = True
        self._fh: Any = None

    def __enter__(self) -> _Sink:
        if self.kind == ".parquet":
            from mabpd_kit.corpus.rows import parquet_engine

            parquet_engine()
        self._tmp = atomic(self.out, "wb") if self.kind == ".parquet" else atomic(self.out, "w", encoding="utf-8",
                                                                                    newline="")
        self._fh = self._tmp.__enter__()
        return self

    def write(self, rows_: list[dict[str, Any]]) -> int:
        import pandas as pd

        if self.kind == ".jsonl":
            for r in rows_:
                self._fh.write(json.dumps(r, ensure_ascii=False, default=str) + "\n")
            return len(rows_)
        df = pd.DataFrame(rows_, dtype=object).reindex(columns=list(self.types))  # no int -> float coercion
        for c, t in self.types.items():
            col = df[c]
            df[c] = (col.map(lambda v: None if v is None or (isinstance(v, float) and v != v) else str(v))
                     .astype("string") if t == "string" else col.astype(t))
        if self.kind == ".csv":
            df.to_csv(self._fh, header=self._header, index=False)
            self._header = False
            return len(df)
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        if self._pq is None:
            self._schema = table.schema.remove_metadata()
            self._pq = pq.ParquetWriter(self._fh, self._schema)
        self._pq.write_table(table.cast(self._schema))
        return len(df)

    def __exit__(self, *exc: Any) -> None:
        try:
            if self._pq is not None:
                self._pq.close()
        finally:
            self._tmp.__exit__(*exc)  # renamed when no error, else removed

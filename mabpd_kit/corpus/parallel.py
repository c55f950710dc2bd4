"""Running a corpus: every core on the rule-based path, the LLM layer's limit and cache on the LLM path.

:func:`analyze` streams the corpus (read in chunks) into a results file (one JSON line per article,
flushed at once; see :mod:`mabpd_kit.corpus.store`), and resumes from it:

- **rule-based**: chunks of ``settings.chunk_articles`` articles go to ``workers`` processes
  (``concurrent.futures.ProcessPoolExecutor``); each worker builds its own Pipeline once. At most
  ``2 * workers`` chunks are in flight, so memory stays flat however large the corpus is. With one
  worker everything runs in this process (no pool).
- **LLM**: the sentences of a chunk of articles go through :meth:`Pipeline.analyze_many` (the
  endpoint's concurrency limit, the record/replay cache and a sentence checkpoint next to the
  results file), then are assembled into articles.
- **resume**: an article already in the results file with the same id, text digest and
  fingerprint (pipeline configuration and models, article mode, sentence settings) is not analysed
  again, even after ``kill -9``; failed articles are retried, except bad rows (their reason comes
  from the input and would not change). The article threshold is not part of
  the fingerprint: records keep the evidence and :func:`~mabpd_kit.corpus.store.load` decides.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit import runs
from mabpd_kit.corpus.articles import ArticleResult, analyze_doc, plan, sentence_pipeline
from mabpd_kit.corpus.inputs import Doc, read
from mabpd_kit.corpus.settings import CorpusConfig, resolve
from mabpd_kit.corpus.store import CorpusResults, Writer, done_keys, load

if TYPE_CHECKING:
    from mabpd_kit.config import Config
    from mabpd_kit.llm import LLM
    from mabpd_kit.mabpd import Pipeline

__all__ = ["analyze", "make_pipeline", "run_config"]

# one pipeline per worker process, built by the initializer
_WORKER: dict[str, Any] = {}


def make_pipeline(config: "Config | None" = None, llm: "LLM | None" = None,
                  settings: CorpusConfig | None = None) -> "Pipeline":
    """The pipeline a corpus run uses: direct mode cuts each article to ``config.text.article_words``
    (the paper's setting) unless ``config.text.truncate_words`` already says otherwise."""
    from mabpd_kit.mabpd import Pipeline

    return Pipeline(run_config(config, settings), llm)


def run_config(config: "Config | None" = None, settings: CorpusConfig | None = None) -> "Config":
    """The pipeline configuration of a corpus run (direct mode: the article cut, see :func:`make_pipeline`)."""
    from mabpd_kit.config import Config

    cfg = config or Config()
    st = resolve(settings, cfg)
    if st.mode == "direct" and cfg.text.truncate_words is None:
        cfg = cfg.replace(**{"text.truncate_words": cfg.text.article_words})
    return cfg


def _init_worker(config: "Config", settings: CorpusConfig) -> None:
    if _WORKER.get("config") != config:  # not inherited from the parent by fork: build it here, once
        _WORKER["pipeline"] = make_pipeline(config, None, settings)
        _WORKER["config"] = config
    _WORKER["settings"] = settings
    _exit_with_parent(os.getppid())


def _exit_with_parent(parent: int, every_s: float = 0.5) -> None:
    """End this worker when the run's process dies (``kill -9``): sibling workers hold each other's end
    of the task pipe open, so without this they would wait for tasks forever."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(every_s)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _work(chunk: list[tuple[Doc, str, str]]) -> list[tuple[str, bool, int]]:
    """A worker's task: analyse a chunk of articles; return each as its JSON line (written as is by the
    parent, which never parses it again) with the two counts the parent reports."""
    p, st = _WORKER["pipeline"], _WORKER["settings"]
    out = []
    for doc, dg, fp in chunk:
        rec = analyze_doc(p, doc, st, fingerprint=fp, digest=dg)
        out.append((rec.model_dump_json(), rec.failed, rec.n_sentences))
    return out


def _fingerprint(models: str, st: CorpusConfig) -> str:
    """What a results line is valid for: the pipeline (configuration and models), the sentence settings and
    the article's failure and language rules ("article-language": decided per article, not per sentence)."""
    return runs.fingerprint(models, st.mode, st.min_sentence_words, st.top_spans, st.max_bytes,
                            "article-language", st.min_analysed_share, st.language_min_chars)


def _digest(doc: Doc) -> str:
    return runs.digest({"text": doc.text, "reason": doc.reason, "meta": doc.meta})


def _todo(docs: Iterable[Doc], done: dict[str, tuple[str, str, bool]], fp: str,
          counts: dict[str, int]) -> Iterator[tuple[Doc, str, str]]:
    for doc in docs:
        dg = _digest(doc)
        old = done.get(doc.id)
        # a failed article is tried again, unless its row itself was bad (empty, binary...): that cannot change
        if old is not None and old[0] == dg and old[1] == fp and (not old[2] or doc.reason is not None):
            counts["resumed"] += 1
            continue
        yield doc, dg, fp


def analyze(
    corpus: Any,
    out: str | Path,
    *,
    config: "Config | None" = None,
    llm: "LLM | None" = None,
    settings: CorpusConfig | None = None,
    workers: int | None = None,
    text_col: str | None = None,
    id_col: str | None = None,
    progress: bool = False,
    load_results: bool = True,
) -> CorpusResults | dict[str, float]:
    """Analyse a corpus (a :class:`~mabpd_kit.corpus.inputs.Corpus`, or anything :func:`read` takes)
    into the results file ``out``, resuming from it. Returns :class:`CorpusResults` (or, with
    ``load_results=False``, only the run's counts: a corpus too large to hold stays on disk, read it
    with :func:`~mabpd_kit.corpus.store.export`).

    ``workers``: processes for the rule-based path (default ``settings.workers``, else every core).
    """
    from mabpd_kit.llm import online

    t0 = time.perf_counter()
    docs = corpus if hasattr(corpus, "__iter__") and not isinstance(corpus, (str, Path)) and \
        not hasattr(corpus, "columns") else read(corpus, text_col=text_col, id_col=id_col, settings=settings)
    llm = online(llm)
    cfg = run_config(config, settings)
    st = resolve(settings, cfg)
    n_workers = workers or st.workers or os.cpu_count() or 1
    # rule-based on several processes: the workers build their pipelines, this process needs none
    pipeline = make_pipeline(cfg, llm, st) if llm is not None or n_workers <= 1 else None
    fp = _fingerprint(pipeline.fingerprint() if llm is not None else runs.fingerprint(cfg, "rule"), st)
    done = done_keys(out)
    counts = {"resumed": 0, "computed": 0, "failed": 0, "sentences": 0}
    todo = _todo(docs, done, fp, counts)
    bar = _bar(progress)
    with Writer(out) as writer:
        def finish_line(line: str, failed: bool, n_sentences: int) -> None:
            writer.write_line(line)
            counts["computed"] += 1
            counts["failed"] += failed
            counts["sentences"] += n_sentences
            bar.update(1)

        def finish(rec: ArticleResult) -> None:
            finish_line(rec.model_dump_json(), rec.failed, rec.n_sentences)

        if pipeline is None:
            _pool(cfg, st, todo, n_workers, finish_line)
        elif llm is not None:
            _llm_path(pipeline, todo, st, Path(out), finish)
        else:
            for doc, dg, f in todo:
                finish(analyze_doc(pipeline, doc, st, fingerprint=f, digest=dg))
    bar.close()
    wall = time.perf_counter() - t0
    if progress:
        print(f"corpus: {counts['computed']} articles analysed ({counts['sentences']} sentences), "
              f"{counts['resumed']} from checkpoint, {counts['failed']} failed, {wall:.1f} s -> {out}")
    if not load_results:
        return {**counts, "wall_s": wall}
    res = load(out, settings=st)
    res.resumed, res.computed, res.wall_s = counts["resumed"], counts["computed"], wall
    return res


def _bar(progress: bool) -> Any:
    from tqdm.auto import tqdm

    return tqdm(disable=not progress, file=sys.stderr, unit="article", desc="corpus")


def _chunks(it: Iterator[Any], n: int) -> Iterator[list[Any]]:
    while chunk := list(islice(it, n)):
        yield chunk


def _pool(config: "Config", st: CorpusConfig, todo: Iterator[tuple[Doc, str, str]], n_workers: int,
          finish_line: Any) -> None:
    """Chunks to worker processes, at most ``2 * n_workers`` in flight; results written as they come."""
    from concurrent.futures.process import BrokenProcessPool

    import multiprocessing as mp

    if mp.get_start_method(allow_none=True) in (None, "fork") and "fork" in mp.get_all_start_methods() \
            and sys.platform.startswith("linux") and _WORKER.get("config") != config:
        # forked workers inherit one pipeline built here (lexicon, compiled patterns) instead of each
        # building its own: less CPU per run, and the pages are shared until written
        _WORKER["pipeline"], _WORKER["config"] = make_pipeline(config, None, st), config
    chunks = _chunks(todo, st.chunk_articles)
    ex = ProcessPoolExecutor(max_workers=n_workers, initializer=_init_worker, initargs=(config, st))
    try:
        pending: set[Future[list[tuple[str, bool, int]]]] = set()
        for chunk in chunks:
            pending.add(ex.submit(_work, chunk))
            if len(pending) >= 2 * n_workers:
                ready, pending = wait(pending, return_when=FIRST_COMPLETED)
                _drain(ready, finish_line)
        while pending:
            ready, pending = wait(pending, return_when=FIRST_COMPLETED)
            _drain(ready, finish_line)
    except BrokenProcessPool:
        ex.shutdown(wait=False, cancel_futures=True)
        raise RuntimeError("a worker process died (out of memory, or killed); every finished article is in the "
                           "results file: run the same call again to resume") from None
    except BaseException:  # Ctrl-C in a notebook: drop the queued chunks instead of finishing them
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)


def _drain(ready: set[Future[list[tuple[str, bool, int]]]], finish_line: Any) -> None:
    for fut in ready:
        for line, failed, n in fut.result():
            finish_line(line, failed, n)


def _llm_path(pipeline: "Pipeline", todo: Iterator[tuple[Doc, str, str]], st: CorpusConfig, out: Path,
              finish: Any) -> None:
    """Sentences of a chunk of articles through ``analyze_many`` (the LLM limit and cache, a sentence
    checkpoint), then one article record each. The sentence checkpoint only ever holds the chunk in
    progress (it is removed once the chunk's articles are written), so reading it stays cheap."""
    ck = out.with_name(out.name + ".sentences.jsonl")
    quiet = sentence_pipeline(pipeline)  # the language is decided per article (articles.article_language)
    for chunk in _chunks(todo, st.chunk_articles):
        if st.mode == "direct":
            texts = [(doc.id, doc.text) for doc, _, _ in chunk if doc.ok]
            res = quiet.analyze_many([t for _, t in texts], ids=[i for i, _ in texts], checkpoint=ck, progress=False)
            by_id = {d.id: d for d in res}
            for doc, dg, f in chunk:
                finish(_direct_from(pipeline, doc, st, f, dg, by_id.get(doc.id)))
            ck.unlink(missing_ok=True)
            continue
        ids, texts, where = [], [], []
        for j, (doc, _, _) in enumerate(chunk):
            if not doc.ok:
                continue
            ct, spans, go = plan(doc, st, max(pipeline.config.text.max_chars, st.max_bytes))
            for k, ((a, b), g) in enumerate(zip(spans, go)):
                if g:
                    ids.append(f"{doc.id}#{k}")
                    texts.append(ct.text[a:b])
                    where.append((j, k))
        res = quiet.analyze_many(texts, ids=ids, checkpoint=ck, progress=False) if texts else []
        per: dict[int, dict[int, Any]] = {}
        for (j, k), d in zip(where, res):
            per.setdefault(j, {})[k] = d
        for j, (doc, dg, f) in enumerate(chunk):
            finish(analyze_doc(pipeline, doc, st, fingerprint=f, digest=dg, decisions=per.get(j, {})))
        ck.unlink(missing_ok=True)  # the chunk's articles are in the results file: its sentences are no longer needed


def _direct_from(pipeline: "Pipeline", doc: Doc, st: CorpusConfig, fp: str, dg: str, d: Any) -> ArticleResult:
    """A direct-mode article record from a decision made in the batch."""
    from mabpd_kit.corpus import articles

    class _Done:  # analyze_doc's direct mode calls pipeline.analyze: hand it the batch's decision
        config = pipeline.config
        llm = pipeline.llm

        @staticmethod
        def analyze(text: Any, id: str | None = None) -> Any:
            return d if d is not None else sentence_pipeline(pipeline).analyze(text, id=id)

    return articles.analyze_doc(_Done(), doc, st, fingerprint=fp, digest=dg)  # type: ignore[arg-type]

"""Running a corpus on the one runner (:func:`mabpd_kit.runs.run`), an article an item: :func:`analyze`
streams it through :class:`ArticleStep` into the results file, its checkpoint. The article threshold is
not in the fingerprint: records keep the evidence and :func:`~mabpd_kit.corpus.store.load` decides."""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit import runs
from mabpd_kit.corpus.articles import ArticleResult, _failed, aanalyze_doc, analyze_doc
from mabpd_kit.corpus.inputs import Doc, read
from mabpd_kit.corpus.settings import CorpusConfig, resolve
from mabpd_kit.corpus.store import CorpusResults, load

if TYPE_CHECKING:
    from mabpd_kit.config import Config
    from mabpd_kit.llm import LLM
    from mabpd_kit.mabpd import Pipeline

__all__ = ["ArticleStep", "analyze", "make_pipeline", "run_config"]

def run_config(config: Config | None = None, settings: CorpusConfig | None = None) -> Config:
    """The pipeline configuration of a corpus run, its settings in ``config.corpus`` (direct mode cuts
    each article to ``config.text.article_words`` unless ``text.truncate_words`` is set)."""
    from mabpd_kit.config import Config

    cfg = config or Config()
    st = resolve(settings, cfg)
    if st is not getattr(cfg, "corpus", None):
        cfg = cfg.model_copy(update={"corpus": st})
    if st.mode == "direct" and cfg.text.truncate_words is None:
        cfg = cfg.replace(**{"text.truncate_words": cfg.text.article_words})
    return cfg


def make_pipeline(config: Config | None = None, llm: LLM | None = None,
                  settings: CorpusConfig | None = None) -> Pipeline:
    """The pipeline a corpus run uses (:func:`run_config`)."""
    from mabpd_kit.mabpd import Pipeline

    return Pipeline(run_config(config, settings), llm)


@dataclass
class ArticleStep:
    """The runner's step for one article (picklable: a worker builds its pipeline on first use)."""

    config: Config
    fingerprint: str
    llm: Any = field(default=None, repr=False)
    #: how a worker connects to the same endpoint (:func:`_spec`; never a key)
    llm_spec: dict[str, Any] | None = None

    @property
    def settings(self) -> CorpusConfig:
        return self.config.corpus

    @property
    def pipeline(self) -> Pipeline:
        p = self.__dict__.get("_pipeline")
        if p is None:
            llm = self.llm
            if llm is None and self.llm_spec is not None:  # a worker: its own connection, cache and rate limit
                from mabpd_kit.llm import connect

                spec = dict(self.llm_spec)
                share = self.config.replace(**{"llm.concurrency": spec.pop("concurrency")})
                llm = connect(config=share, quiet=True, **spec)
            p = self.__dict__["_pipeline"] = make_pipeline(self.config, llm)
        return p

    @property
    def online(self) -> bool:
        return self.llm is not None or self.llm_spec is not None

    def prepare(self) -> None:
        """Build the pipeline here (forked workers then share it)."""
        _ = self.pipeline

    async def __call__(self, item: runs.Item) -> ArticleResult:
        doc: Doc = item.data
        if not self.online:
            return analyze_doc(self.pipeline, doc, self.settings, fingerprint=self.fingerprint, digest=item.digest)
        return await aanalyze_doc(self.pipeline, doc, self.settings, fingerprint=self.fingerprint,
                                  digest=item.digest)

    def fail(self, item: runs.Item, exc: BaseException) -> ArticleResult:
        return _failed(item.data, f"{type(exc).__name__}: {exc}", self.settings.mode, self.fingerprint, item.digest)

    def __getstate__(self) -> dict[str, Any]:
        if self.llm is not None:
            raise TypeError("an LLM connection stays in its process: a step for workers carries llm_spec instead")
        return {k: v for k, v in self.__dict__.items() if not k.startswith("_")}


def _spec(llm: LLM, concurrency: int) -> dict[str, Any]:
    """How a worker connects to ``llm``'s endpoint, with its share of the limit; never the key."""
    directory = getattr(llm.cache, "directory", None)  # a ResponseCache's folder (a replayed pack has none)
    return {"base_url": llm.endpoint, "model": llm.model, "cache_mode": llm.cache_mode,
            "cache_dir": str(directory) if directory is not None else None, "concurrency": concurrency}


def _worker_step(cfg: Config, fp: str, llm: LLM, n_workers: int | None, scheduler: str | None) -> ArticleStep:
    """The step of an LLM run on Dask: each worker connects itself."""
    if n_workers is None and scheduler is not None:
        from mabpd_kit.runs.dask import cluster_workers

        share = llm.concurrency // cluster_workers(scheduler)
    else:
        share = llm.concurrency // (n_workers or os.cpu_count() or 1)  # a LocalCluster: a worker per core
    return ArticleStep(cfg, fp, None, llm_spec=_spec(llm, max(1, share)))


def _fingerprint(models: str, st: CorpusConfig) -> str:
    """What a results line is valid for: the pipeline, the sentence settings and the article rules."""
    return runs.fingerprint(models, st.mode, st.min_sentence_words, st.top_spans, st.max_bytes,
                            "article-language", st.min_analysed_share, st.language_min_chars)


def _digest(doc: Doc) -> str:
    return runs.digest({"text": doc.text, "reason": doc.reason, "meta": doc.meta})


def analyze(corpus: Any, out: str | Path, *, config: Config | None = None, llm: LLM | None = None,
            settings: CorpusConfig | None = None, workers: int | None = None, text_col: str | None = None,
            id_col: str | None = None, progress: bool = False, load_results: bool = True, engine: str | None = None,
            scheduler: str | None = None) -> CorpusResults | dict[str, float]:
    """Analyse a corpus (a :class:`~mabpd_kit.corpus.inputs.Corpus`, or anything :func:`read` takes) into
    the results file ``out``, resuming from it; returns :class:`CorpusResults` (``load_results=False``:
    the counts). ``engine``: "local" (``workers`` processes, default every core) or "dask"
    (``scheduler``'s cluster, else a ``LocalCluster``; docs/scale.md)."""
    from mabpd_kit.llm import online

    t0 = time.perf_counter()
    cfg = run_config(config, settings)
    st = cfg.corpus
    docs = corpus if hasattr(corpus, "__iter__") and not isinstance(corpus, (str, Path)) and \
        not hasattr(corpus, "columns") else read(corpus, text_col=text_col, id_col=id_col, settings=st)
    llm = online(llm)
    bare = cfg.model_copy(update={"corpus": CorpusConfig()})  # the corpus settings that matter are in _fingerprint
    models = make_pipeline(bare, llm).fingerprint() if llm is not None else runs.fingerprint(bare, "rule")
    fp = _fingerprint(models, st)
    dask = engine == "dask"
    n_workers = workers or st.workers or (None if dask else os.cpu_count() or 1)
    step = _worker_step(cfg, fp, llm, n_workers, scheduler) if dask and llm is not None else ArticleStep(cfg, fp, llm)
    items = (runs.Item(doc.id, doc, _digest(doc), retry=doc.ok) for doc in docs)
    spec = runs.RunSpec(ArticleResult, step.fail, checkpoint=out, fingerprint=fp, engine=engine or "local",
                        progress="corpus" if progress else False, scheduler=scheduler,
                        workers=n_workers if llm is None or dask else None,
                        chunk=st.dask_partition_articles if dask else st.chunk_articles)
    spec = spec.with_llm(llm, cfg.llm.item_deadline_s, calls=step.llm_spec["concurrency"] if step.llm_spec else None)
    res = runs.run(items, step, spec)
    loaded = load(out, settings=st)
    loaded.resumed, loaded.computed, loaded.stopped = res.resumed, res.computed or 0, res.stopped
    loaded.wall_s = time.perf_counter() - t0
    return loaded if load_results else loaded.counts()

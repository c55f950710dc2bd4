"""Fit artefacts: every number the kit fits on labelled data lives in ``resources/fits/NAME.json`` with its
provenance (data files' sha256, commit, date, the digest of the settings in :data:`DEPENDS`) and ``values``."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import subprocess
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from mabpd_kit.config import Config

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DEPENDS", "FITS", "FITS_DIR", "Fit", "check_digest", "compare", "config_digest", "fit", "load", "provenance",
           "save", "verify"]

FITS_DIR = Path(__file__).parent / "resources" / "fits"
BABE_FILES = ("BABE/derived/babe_hf_train3121_reconstructed.csv",)
HP_FILES = ("SemEval2019-Task4-Hyperpartisan/articles-training-byarticle-20181122.xml",
            "SemEval2019-Task4-Hyperpartisan/ground-truth-training-byarticle-20181122.xml")

#: what the sentence records of the rule-based pipeline depend on (every fit from article records)
_PIPELINE = ("text", "lexicon", "scoring", "router", "sad", "verifier", "agents", "corpus.mode",
             "corpus.min_sentence_words", "corpus.min_analysed_share", "corpus.language_min_chars", "corpus.max_bytes")
#: fit name -> the Config settings (dotted paths) its values depend on: the pipeline and the fit's own method
DEPENDS: dict[str, tuple[str, ...]] = {
    "article_score": (*_PIPELINE, "corpus.score.features", "corpus.score.top_k", "corpus.score.l2_grid",
                      "corpus.score.inner_folds", "corpus.score.resamples", "corpus.seed", "corpus.confidence"),
    "count_threshold": (*_PIPELINE, "corpus.article_stat", "corpus.adapt_folds", "corpus.adapt_objective",
                        "corpus.adapt_resamples", "corpus.seed", "corpus.confidence"),
    "sentence_error_rates": (*_PIPELINE, "corpus.prevalence_bins", "corpus.prevalence_draws",
                             "corpus.prevalence_max_width", "corpus.prevalence_min_class", "corpus.seed"),
}


class Fit(BaseModel):
    """One fit artefact (the JSON file's keys)."""

    name: str
    method: str
    data: list[dict[str, str]] = Field(default_factory=list, description="[{file (relative to the data dir), sha256}]")
    commit: str = "unknown"
    date: str
    config_digest: str
    values: dict[str, Any]


def _get(obj: Any, path: str) -> Any:
    for part in path.split("."):
        obj = getattr(obj, part)
    return obj


def config_digest(name: str, config: Config | None = None) -> str:
    """A digest (16 hex) of the settings ``DEPENDS[name]`` of ``config`` (default: ``Config()``)."""
    cfg = config or Config()
    dump = {p: _jsonable(_get(cfg, p)) for p in DEPENDS[name]}
    return hashlib.sha256(json.dumps(dump, sort_keys=True, default=str).encode()).hexdigest()[:16]


def _jsonable(v: Any) -> Any:
    return v.model_dump(mode="json", warnings=False) if isinstance(v, BaseModel) else v


def _commit() -> str:
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], cwd=Path(__file__).parent, capture_output=True, text=True,
                             timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else "unknown"


def provenance(files: tuple[str, ...], data_dir: Path) -> dict[str, Any]:
    """``data`` (each file's sha256), ``commit`` and ``date`` for a fit made now from ``files``."""
    from mabpd_kit.data.download import sha256_file

    return {"data": [{"file": f, "sha256": sha256_file(data_dir / f)} for f in files], "commit": _commit(),
            "date": _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()}


def _path(name: str, folder: Path | None) -> Path:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"fit name {name!r}: letters, digits and underscores only")
    return (folder or FITS_DIR) / f"{name}.json"


def load(name: str, folder: Path | None = None) -> Fit:
    """The artefact ``name`` (a one-line error when it is missing or not an artefact)."""
    p = _path(name, folder)
    if not p.is_file():
        raise FileNotFoundError(f"no fit artefact {p}: run `mabpd fit {name}`")
    try:
        return Fit.model_validate_json(p.read_text(encoding="utf-8"))
    except ValueError as exc:
        raise ValueError(f"{p} is not a fit artefact: {str(exc).splitlines()[0]}") from None


def save(fit_: Fit, folder: Path | None = None) -> Path:
    """Write ``fit_`` to ``folder/NAME.json`` (default: the shipped folder); returns the path."""
    p = _path(fit_.name, folder)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(json.dumps(fit_.model_dump(), indent=1) + "\n", encoding="utf-8")
    return p


def hp_features(data_dir: Path, workers: int | None = 1) -> pd.DataFrame:
    """HyperPartisan train's article features with ``label``, from a rule-based run of the default Config."""
    import tempfile

    from mabpd_kit.corpus import analyze, read
    from mabpd_kit.corpus.score import feature_frame
    from mabpd_kit.data import load_hyperpartisan

    hp = load_hyperpartisan("train", data_dir=data_dir, download=False)
    settings = Config().corpus
    with tempfile.TemporaryDirectory(prefix="mabpd-fit-") as tmp:
        res = analyze(read(hp[["id", "text", "label"]], id_col="id"), Path(tmp) / "hp.jsonl", workers=workers,
                      settings=settings)
        return feature_frame(list(res), settings.score.top_k, meta=("label",))


def _article_score(frame: pd.DataFrame) -> tuple[str, dict[str, Any]]:
    from mabpd_kit.corpus import scorefit as sf

    st = Config().corpus
    X, y, _, _ = sf.training_data(frame, "label", top_k=st.score.top_k)
    p = sf.fit_score(X, y, st.score, st.seed)
    p = sf.bootstrap_coefficients(X, y, p, resamples=st.score.resamples, seed=st.seed, confidence=st.confidence)
    values = {k: getattr(p, k) for k in ("intercept", "coef", "coef_lo", "coef_hi", "center", "scale", "l2", "n_train")}
    values["base_rate"] = float(y.mean())
    return (f"hyperpartisan-style article score: L2-penalised logistic regression on {len(p.features)} article "
            f"features of the rule-based pipeline, penalty by {st.score.inner_folds}-fold CV on log-loss (seed "
            f"{st.seed}), fitted on every analysed article; {st.score.resamples} bootstrap resamples for the "
            "intervals; base_rate = the training share of hyperpartisan articles"), values


def _count_threshold(frame: pd.DataFrame) -> tuple[str, dict[str, Any]]:
    from mabpd_kit.corpus.threshold import adapt

    st = Config().corpus
    a = adapt(frame, gold="label", stat=st.article_stat, settings=st)
    return (f"count rule: {a.stat} >= t, t chosen by {a.objective} on every analysed article (stump; "
            f"{a.k}-fold CV figures, {st.adapt_resamples} bootstrap resamples for the interval)"), \
        {"article_stat": a.stat, "article_threshold": a.threshold, "ci": list(a.ci), "cv_accuracy": a.cv_accuracy,
         "n": a.n}


def _sentence_error_rates(babe: pd.DataFrame) -> tuple[str, dict[str, Any]]:
    from mabpd_kit.evaluate.validity import fit_sentence_error_rates

    return fit_sentence_error_rates(babe)


#: fit name -> (data files, the input it reads, recipe from that input to (method, values))
FITS: dict[str, tuple[tuple[str, ...], str, Callable[[pd.DataFrame], tuple[str, dict[str, Any]]]]] = {
    "article_score": (HP_FILES, "hp", _article_score),
    "count_threshold": (HP_FILES, "hp", _count_threshold),
    "sentence_error_rates": (BABE_FILES, "babe", _sentence_error_rates)}


def _names(name: str) -> list[str]:
    if name == "all":
        return list(FITS)
    if name not in FITS:
        raise ValueError(f"no fit named {name!r} (fits: {', '.join(FITS)}, or all)")
    return [name]


def fit(name: str = "all", data_dir: str | Path | None = None, *, frame: pd.DataFrame | None = None,
        workers: int | None = 1) -> list[Fit]:
    """Fit ``name`` (or ``all``) at this commit; returns the artefacts (not saved). ``frame``: the features."""
    from mabpd_kit.data import data_dir as find

    root = find(data_dir)
    if root is None:
        raise FileNotFoundError("fitting needs the benchmark data: set MABPD_DATA_DIR or pass --data-dir")
    out, got = [], {"hp": frame} if frame is not None else {}  # each input read once per command
    for n in _names(name):
        files, what, recipe = FITS[n]
        if what == "babe" and what not in got:
            from mabpd_kit.evaluate.validity import babe_decisions

            got[what] = babe_decisions(root)
        elif what not in got:
            got[what] = hp_features(root, workers)
        method, values = recipe(got[what])
        out.append(Fit(name=n, method=method, config_digest=config_digest(n), values=_plain(values),
                       **provenance(files, root)))
    return out


def _plain(v: Any) -> Any:
    return json.loads(json.dumps(v, default=float))


def compare(shipped: Fit, fresh: Fit, tol: float = 1e-6) -> list[str]:
    """What differs between a shipped artefact and a fresh fit (empty: they match; numbers within ``tol``)."""
    out = []
    if {d["file"]: d["sha256"] for d in shipped.data} != {d["file"]: d["sha256"] for d in fresh.data}:
        out.append("data: the files' sha256 differ from the shipped fit's")
    if shipped.config_digest != fresh.config_digest:
        out.append(f"config_digest: shipped {shipped.config_digest}, now {fresh.config_digest}")
    for k in sorted(set(shipped.values) | set(fresh.values)):
        a, b = shipped.values.get(k), fresh.values.get(k)
        if not _close(a, b, tol):
            out.append(f"{k}: {_difference(a, b)}")
    return out


def _difference(a: Any, b: Any) -> str:
    text = f"shipped {a}, fitted now {b}"
    if len(text) <= 120:
        return text
    flat_a, flat_b = _numbers(a), _numbers(b)
    if len(flat_a) != len(flat_b) or not flat_a:
        return f"shipped and fitted now differ in shape ({len(flat_a)} against {len(flat_b)} numbers)"
    changed = [abs(x - y) for x, y in zip(flat_a, flat_b) if x != y]
    return f"{len(changed)} of {len(flat_a)} numbers differ (largest change {max(changed, default=0):.4g})"


def _numbers(v: Any) -> list[float]:
    if isinstance(v, bool) or v is None or isinstance(v, str):
        return [float(hash(v) % 997)]  # a label: equal or not
    if isinstance(v, (int, float)):
        return [float(v)]
    if isinstance(v, dict):
        return [x for k in sorted(v) for x in _numbers(v[k])]
    return [x for item in v for x in _numbers(item)] if isinstance(v, list) else [float(hash(str(v)) % 997)]


def _close(a: Any, b: Any, tol: float) -> bool:
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= tol * max(1.0, abs(a), abs(b))
    return a == b


def check_digest(name: str = "all", folder: Path | None = None) -> dict[str, str | None]:
    """Without data: for each fit, None when the shipped artefact's config digest is today's, else why not."""
    out: dict[str, str | None] = {}
    for n in _names(name):
        want, have = config_digest(n), load(n, folder).config_digest
        out[n] = None if want == have else (f"{n}: fitted under config digest {have}, the settings it depends on now "
                                            f"give {want}: run `mabpd fit {n}`")
    return out


def verify(name: str = "all", data_dir: str | Path | None = None, *, folder: Path | None = None,
           workers: int | None = 1) -> dict[str, list[str]]:
    """Refit ``name`` (or ``all``) and compare with the shipped artefacts: fit name -> what differs."""
    return {f.name: compare(load(f.name, folder), f) for f in fit(name, data_dir, workers=workers)}

"""The calibrated article score on HyperPartisan train (issue 23): rule-based features, no LLM.

Prints, all by nested cross-validation on HyperPartisan train (a dev split; the held-out test set
is checked outside the project):

1. accuracy, macro F1, AUC (and log-loss, ECE) of the article score, of the length-only rule
   (word count >= t, t chosen on the same outer training folds) and of the legacy count rule
   (biased sentences >= t, likewise), and the paired bootstrap CI of the accuracy difference
   score - length (and score - count), then score - length again on other fold seeds (``--seeds``);
2. the coefficients fitted on all of train after model selection (the penalty by inner CV) with
   their bootstrap intervals, beside the shipped ones in ``Config.corpus.score`` (they should match);
3. the learning curve: accuracy vs labelled articles (``Config.corpus.score.curve_sizes`` and all),
   with intervals over repeats, and the labels needed (within one interval of the plateau).

The per-article trace features are cached (``--cache``, default
``~/.cache/mabpd-kit/bench_article_score/``: the results file of the rule-based run and a JSONL of
features keyed by the commit of ``mabpd_kit``'s sentence pipeline), so a rerun skips the analysis.

Usage: MABPD_DATA_DIR=/work/shared/data .venv/bin/python bench/bench_article_score.py [--repeats 20] [--no-curve]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("MABPD_OFFLINE", "1")


#: what the sentence decisions and the article records depend on (a change there is a new cache key)
PIPELINE = ("mabpd", "lexicon", "resources", "text.py", "language.py", "injection.py", "decoding.py",
            "roster.py", "corpus/articles.py")


def _key(*extra: str) -> str:
    """A digest of the sentence pipeline's files (code, lexicon, resources; and ``extra``) and the default config."""
    import hashlib

    import mabpd_kit
    from mabpd_kit.config import Config

    root = Path(mabpd_kit.__file__).parent
    cfg = Config()  # every setting but the article score's coefficients (they do not change a record)
    h = hashlib.sha256(cfg.model_copy(update={"corpus": cfg.corpus.model_copy(update={"score": None})}).model_dump_json(
        warnings=False).encode())
    for name in (*PIPELINE, *extra):
        p = root / name
        for f in sorted(p.rglob("*") if p.is_dir() else [p]):
            if f.is_file() and "__pycache__" not in f.parts:
                h.update(str(f.relative_to(root)).encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:16]


def features(cache: Path, workers: int | None) -> object:
    """The feature frame of HyperPartisan train (id, n_words, n_biased, label, FEATURES), cached under a
    key of the pipeline's files (:func:`_key`)."""
    import pandas as pd

    from mabpd_kit import data
    from mabpd_kit.corpus import analyze, read
    from mabpd_kit.corpus.score import feature_frame, shipped

    key, top_k = _key(), shipped().top_k  # the run's records; the features also depend on corpus/score.py
    cache.mkdir(parents=True, exist_ok=True)
    feats = cache / f"hp_train_features_{_key('corpus/score.py')}_k{top_k}.jsonl"
    if feats.exists():
        print(f"features: cached {feats}")
        return pd.read_json(feats, lines=True, dtype={"id": str})
    if data.data_dir() is None:
        raise SystemExit("bench_article_score: MABPD_DATA_DIR is not set (HyperPartisan train is needed)")
    hp = data.load_hyperpartisan("train", download=False)
    t0 = time.perf_counter()
    res = analyze(read(hp[["id", "text", "label"]], id_col="id"), cache / f"hp_train_{key}.mabpd.jsonl",
                  workers=workers)
    df = feature_frame(res, top_k, meta=("label",))
    print(f"features: {len(df)} of {len(hp)} articles analysed in {time.perf_counter() - t0:.1f} s "
          f"({len(res.failed)} failed) -> {feats}")
    df.to_json(feats, orient="records", lines=True)
    return df


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", default=str(Path.home() / ".cache" / "mabpd-kit" / "bench_article_score"))
    ap.add_argument("--workers", type=int, default=None)
    ap.add_argument("--repeats", type=int, default=None, help="learning-curve repeats (default: the config's)")
    ap.add_argument("--resamples", type=int, default=10_000, help="paired bootstrap resamples")
    ap.add_argument("--no-curve", action="store_true")
    ap.add_argument("--seeds", type=int, default=5, help="fold seeds of the score - length check (section 1)")
    args = ap.parse_args()

    import numpy as np

    from mabpd_kit import metrics as m
    from mabpd_kit.config import CorpusConfig
    from mabpd_kit.corpus import scorefit as sf
    from mabpd_kit.corpus.score import coefficients

    st = CorpusConfig()
    base = st.score
    df = features(Path(args.cache), args.workers)
    X, y, n_words, df = sf.training_data(df, "label", top_k=base.top_k)
    k, seed = st.adapt_folds, st.seed
    print(f"== HyperPartisan train: {len(y)} articles ({int(y.sum())} hyperpartisan), nested {k}x{base.inner_folds}"
          f"-fold CV (seed {seed}), penalty grid {base.l2_grid}")
    t0 = time.perf_counter()
    ev = sf.evaluate(X, y, n_words, base, folds=k, seed=seed, resamples=args.resamples,
                     extra={"count": df["n_biased"].to_numpy(float)})
    for name, label in (("score", "article score (p >= 0.5)"), ("length", "length only (n_words >= t)"),
                        ("count", "count rule (n_biased >= t)")):
        r = ev[name]
        extra = f", log-loss {r['log_loss']:.3f}, ECE {r['ece']:.3f}" if "log_loss" in r else ""
        print(f"  {label:<30} accuracy {r['accuracy']:.3f}, macro F1 {r['macro_f1']:.3f}, AUC {r['auc']:.3f}{extra}")
    d = ev["diff"]
    verdict = "excludes 0" if d["lo"] > 0 or d["hi"] < 0 else "INCLUDES 0"
    print(f"  paired bootstrap ({args.resamples:,} resamples), accuracy score - length: {d['accuracy_diff']:+.3f} "
          f"[{d['lo']:+.3f}, {d['hi']:+.3f}] ({verdict}; p = {d['p_value']:.4f})")
    p_score = (ev["oof"] >= 0.5).astype(int)
    L = df["n_biased"].to_numpy(float)[:, None]
    p_count = sf.nested_cv(L, y, sf.length_fit(0), folds=k, seed=seed).astype(int)
    b = m.paired_bootstrap(y, p_score, p_count, metric=m.accuracy, n_resamples=args.resamples, seed=seed)
    print(f"  paired bootstrap, accuracy score - count: {b.diff:+.3f} [{b.lo:+.3f}, {b.hi:+.3f}]")
    print(f"  ({time.perf_counter() - t0:.1f} s)")
    if args.seeds > 1:
        print(f"  other fold assignments (seeds 0-{args.seeds - 1}): score vs length accuracy, difference [95% CI]")
        for s in range(args.seeds):
            e = sf.evaluate(X, y, n_words, base, folds=k, seed=s, resamples=args.resamples)
            dd = e["diff"]
            print(f"    seed {s}: {e['score']['accuracy']:.3f} vs {e['length']['accuracy']:.3f}, AUC "
                  f"{e['score']['auc']:.3f}; {dd['accuracy_diff']:+.3f} [{dd['lo']:+.3f}, {dd['hi']:+.3f}]")

    params = sf.bootstrap_coefficients(X, y, sf.fit_score(X, y, base, seed), resamples=base.resamples, seed=seed,
                                       confidence=st.confidence)
    print(f"\n== coefficients fitted on all {len(y)} articles (penalty l2 = {params.l2:g} by {base.inner_folds}-fold CV; "
          f"95% bootstrap, {base.resamples:,} resamples) vs shipped (Config.corpus.score, l2 = {base.l2:g}):")
    fitted, shipped = coefficients(params), coefficients(base)
    for (_, r), (_, s) in zip(fitted.iterrows(), shipped.iterrows()):
        ci = "" if r["lo"] is None or r["lo"] != r["lo"] else f" [{r['lo']:+.3f}, {r['hi']:+.3f}]"
        print(f"  {r['feature']:<28} {r['coef']:+.3f}{ci:<20} shipped {s['coef']:+.3f}")
    same = np.allclose(params.coef, base.coef, atol=1e-4) and abs(params.intercept - base.intercept) < 1e-4
    print(f"  shipped coefficients {'match' if same else 'DIFFER FROM'} this fit")

    if not args.no_curve:
        t0 = time.perf_counter()
        curve = sf.learning_curve(X, y, base, repeats=args.repeats, folds=k, seed=seed, confidence=st.confidence)
        print(f"\n== learning curve (out-of-fold accuracy, {int(curve['repeats'].iloc[0])} repeats, 95% interval over "
              f"repeats; {time.perf_counter() - t0:.1f} s):")
        for r in curve.itertuples():
            print(f"  n = {r.n:>4}{' (all)' if r.all else '      '} accuracy {r.mean:.3f} [{r.lo:.3f}, {r.hi:.3f}]")
        print(f"  labels needed (smallest n within one interval of the plateau): {sf.labels_needed(curve)}")
    sys.stdout.flush()


if __name__ == "__main__":
    main()

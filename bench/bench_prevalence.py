"""Does a model of the decision trace make the corrected share valid for more outlets? (issue 38, item 1)

Nested leave-one-outlet-out on BABE train (the dev split; BABE test is never read), over the outlets
with >= 50 sentences, in one run:

(a) today's method (:func:`mabpd_kit.evaluate.validity.prevalence_validity`): bins of the kit's flag and
    score, Bayesian mixture quantification with the error rates' spread between outlets;
(b) a trace model: an L2 logistic regression (fixed C = 1 on standardised features, no tuning) from a few
    features of each sentence's decision trace to a probability of "biased", then the same Bayesian
    mixture on bins of that probability (the training outlets' quintiles). For each held-out outlet, the
    model, the bin edges and the bin distributions (with their spread) come from the other outlets only:
    the bin distributions from cross-fitted probabilities (inner leave-one-outlet-out within the training
    outlets), so they are those of sentences the model was not fitted on, as a new corpus's would be.

Three variants, the only ones tried (b1 and b2 fixed before the first run; b3 added after seeing them, to
tell whether (b)'s width comes from the inner design; its figure is the more optimistic for it):
  b1 "compact": kit score, flag, the three agents' scores, log(1 + distinct valid spans), the highest
     valid span's score, log(words);
  b2 "compact + cues": b1 plus valid spans per meta-category and one indicator per route;
  b3: b1 with the bin distributions from an inner seeded 5-fold split of the training outlets' sentences
     (one model's scale) instead of inner leave-one-outlet-out.

Adopting (b) needs >= 8/9 covered (an interval wider than 0.5 is a miss), Spearman >= 0.90 and a median
width no worse than (a)'s.

Usage: MABPD_DATA_DIR=/work/shared/data .venv/bin/python bench/bench_prevalence.py [--draws 2000]
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

os.environ.setdefault("MABPD_OFFLINE", "1")

#: the routes and span meta-categories of the rule-based pipeline (one-hot / counts in b2)
ROUTES = ("neutral_veto", "strong_fast_path", "moderate_fast_path", "debate", "no_debate", "single_agent")


def trace_features(d, meta: tuple[str, ...]) -> dict[str, float]:
    """One decision's trace as numbers (b1's columns, then b2's extras)."""
    spans = {(s.start, s.end): s for s in d.spans(valid_only=True)}
    reports = d.reports or {}
    row = {"score": float(d.score or 0.0), "flag": float(d.pred or 0),
           **{f"agent_{a}": float(reports[a].score) if a in reports else 0.0 for a in ("bias", "evidence", "framing")},
           "log_spans": math.log1p(len(spans)),
           "max_span": max((float(s.score or 0.0) for s in spans.values()), default=0.0),
           "log_words": math.log(max(1, len(d.clean_text.split())))}
    extra = {f"meta_{m}": float(sum(s.meta_category == m for s in spans.values())) for m in meta}
    extra.update({f"route_{r}": float(d.route == r) for r in ROUTES})
    return {**row, **extra}


def babe_frame():
    """BABE train's sentences: outlet, label, the kit's flag and score, and the trace features."""
    import pandas as pd

    from mabpd_kit.data.babe import load_babe
    from mabpd_kit.mabpd.pipeline import Pipeline

    items = load_babe("train", llm_labels=False, download=False)
    pipe = Pipeline()
    decisions = [pipe.analyze(t, id=i) for i, t in zip(items["id"], items["text"])]
    meta = tuple(sorted({s.meta_category for d in decisions for s in d.spans(valid_only=True) if s.meta_category}))
    rows = [{"id": d.id, **trace_features(d, meta)} for d in decisions if not d.failed]
    feats = pd.DataFrame(rows)
    out = items[["id", "outlet", "label"]].merge(feats, on="id")
    return out.astype({"label": float}), meta


def _model(X, y):
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    return make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=2000)).fit(X, y)


def _crossfit(rest, cols, inner="outlet"):
    """Each training sentence's probability from a model fitted without its outlet (inner leave-one-outlet-out;
    ``inner="kfold"``: without its fold of a seeded 5-fold split, so they share nearly one model's scale)."""
    import numpy as np

    p = np.empty(len(rest))
    g = rest["outlet"].to_numpy() if inner == "outlet" else np.random.default_rng(0).permutation(len(rest)) % 5
    for o in np.unique(g):
        m = g == o
        p[m] = _model(rest.loc[~m, cols].to_numpy(), rest.loc[~m, "label"].to_numpy()).predict_proba(
            rest.loc[m, cols].to_numpy())[:, 1]
    return p


def trace_validity(df, cols, *, min_n=50, draws=2000, nbins=5, seed=0, inner="outlet"):
    """(b): the nested leave-one-outlet-out table (same columns as prevalence_validity's)."""
    import numpy as np
    import pandas as pd

    from mabpd_kit.config import CorpusConfig
    from mabpd_kit.corpus.prevalence import bin_counts, error_rates, estimate, group_seed

    st = CorpusConfig()
    df = df[df["outlet"].notna() & df["label"].notna()]  # as prevalence_validity reads them
    sizes = df["outlet"].value_counts()
    rows = []
    for g in sorted(sizes[sizes >= min_n].index, key=str):
        inside, rest = df[df["outlet"] == g], df[df["outlet"] != g].reset_index(drop=True)
        p_rest = _crossfit(rest, cols, inner)
        edges = tuple(float(v) for v in np.quantile(p_rest, np.linspace(0, 1, nbins + 1)[1:-1]))
        rates = error_rates(np.ones(len(rest)), p_rest, rest["label"], edges, groups=rest["outlet"],
                            source=f"trace model, all but {g}")
        p_in = _model(rest[cols].to_numpy(), rest["label"].to_numpy()).predict_proba(inside[cols].to_numpy())[:, 1]
        est = estimate(bin_counts(np.ones(len(inside)), p_in, edges), rates, draws=draws, seed=group_seed(seed, g))
        truth, width = float(inside["label"].mean()), est["hi"] - est["lo"]
        rows.append({"outlet": g, "n": len(inside), "cc": float(inside["flag"].mean()), "estimate": est["estimate"],
                     "lo": est["lo"], "hi": est["hi"], "width": width, "truth": truth,
                     "covered": bool(est["lo"] <= truth <= est["hi"] and width <= st.prevalence_max_width)})
    return pd.DataFrame(rows)


def diagnostics(df, cols, inner="outlet") -> str:
    """Why (b) does or does not help, on every outlet: how well the kit's score and the
    cross-fitted trace probability separate the classes across outlets (AUC, tpr - fpr), and how much the
    class-conditional bin distributions vary between outlets (the spread's posterior mean concentration:
    the lower, the wider every interval must be)."""
    import numpy as np
    from sklearn.metrics import roc_auc_score

    from mabpd_kit.config import CorpusConfig
    from mabpd_kit.corpus.prevalence import _KAPPA, error_rates

    df = df[df["outlet"].notna() & df["label"].notna()].reset_index(drop=True)
    y, p = df["label"].to_numpy(), _crossfit(df, cols, inner)

    def gap(flag):
        return flag[y == 1].mean() - flag[y == 0].mean()

    def kappa(r):
        return "/".join("-" if w is None else f"{float(np.exp(np.log(_KAPPA) @ np.asarray(w))):.0f}" for w in r.spread)

    edges = tuple(float(v) for v in np.quantile(p, [0.2, 0.4, 0.6, 0.8]))
    how = "fitted without the sentence's outlet" if inner == "outlet" else "out of a 5-fold split"
    today = error_rates(df["flag"], df["score"], y, CorpusConfig().prevalence_bins, groups=df["outlet"])
    trace = error_rates(np.ones(len(df)), p, y, edges, groups=df["outlet"])
    return (f"  AUC across outlets: kit score {roc_auc_score(y, df['score']):.3f}, trace probability ({how}) "
            f"{roc_auc_score(y, p):.3f}; tpr - fpr: kit flag {gap(df['flag'].to_numpy()):.3f}, "
            f"trace probability >= 0.5 {gap((p >= 0.5).astype(float)):.3f}\n"
            f"  spread between outlets (posterior mean concentration, biased/neutral; higher = more alike): "
            f"today's bins {kappa(today)}, trace quintiles {kappa(trace)}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--draws", type=int, default=2000)
    args = ap.parse_args(argv)
    from mabpd_kit.evaluate.validity import prevalence_validity, validity_note

    t0 = time.time()
    df, meta = babe_frame()
    print(f"BABE train: {len(df)} sentences through the rule-based pipeline in {time.time() - t0:.0f} s; "
          f"meta-categories {list(meta)}")
    b1 = ["score", "flag", "agent_bias", "agent_evidence", "agent_framing", "log_spans", "max_span", "log_words"]
    b2 = b1 + [f"meta_{m}" for m in meta] + [f"route_{r}" for r in ROUTES if df[f"route_{r}"].any()]
    print("\n(a) today's method: bins of the kit's flag and score\n" + validity_note(
        prevalence_validity(df[["outlet", "label", "flag", "score"]], draws=args.draws)))
    for name, cols, inner in (("b1 compact", b1, "outlet"), ("b2 compact + cues", b2, "outlet"),
                              ("b3 compact, inner 5-fold", b1, "kfold")):
        t1 = time.time()
        table = trace_validity(df, cols, draws=args.draws, inner=inner)
        print(f"\n({name}: {len(cols)} features; {time.time() - t1:.0f} s)\n" + validity_note(table))
        print(diagnostics(df, cols, inner))
    return 0


if __name__ == "__main__":
    sys.exit(main())

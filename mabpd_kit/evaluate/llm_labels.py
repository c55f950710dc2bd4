"""Ten real LLMs' zero-shot labels on BABE train (the annomatic file): does a vote beat the best single model, and
how do their errors go together? Every comparison is on the sentences every model answered (:func:`label_table`);
nothing is fitted except the fold-wise choice of voters in :func:`vote_sizes`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from mabpd_kit.metrics import fleiss_kappa, macro_f1, metric_ci, paired_bootstrap

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["agreement", "all_wrong", "error_correlation", "label_table", "majority_vote", "models", "single_scores",
           "vote_score", "vote_sizes"]

SUFFIX = "_label"


def label_table(babe: pd.DataFrame) -> pd.DataFrame:
    """One row per sentence every model answered: ``id``, ``text``, ``gold`` and one 0/1 column per model; a
    one-line ``ValueError`` when ``babe`` has no LLM label columns."""
    cols = [c for c in babe.columns if c.endswith(SUFFIX) and c != "label"]
    if not cols:
        raise ValueError("no LLM label columns: BABE train's annomatic file is not on this machine")
    full = babe.dropna(subset=cols)
    out = full[["id", "text"]].copy()
    out["gold"] = full["label"].astype(int).to_numpy()
    for c in cols:
        out[c[: -len(SUFFIX)]] = full[c].astype(int).to_numpy()
    out = out.reset_index(drop=True)
    out.attrs["dropped"] = len(babe) - len(out)
    return out


def models(table: pd.DataFrame) -> list[str]:
    """The model columns of a :func:`label_table`."""
    return [c for c in table.columns if c not in ("id", "text", "gold")]



def single_scores(table: pd.DataFrame, n_resamples: int | None = None, seed: int | None = None) -> pd.DataFrame:
    """Each model's macro F1 on the table's sentences with its bootstrap interval, best first."""
    import pandas as pd
    gold = table["gold"].to_numpy()
    rows = []
    for m in models(table):
        est, lo, hi = metric_ci(gold, table[m].to_numpy(), n_resamples=n_resamples, seed=seed)
        rows.append({"model": m, "n": len(table), "macro_f1": est, "lo": lo, "hi": hi,
                     "error_rate": float((table[m].to_numpy() != gold).mean())})
    return pd.DataFrame(rows).sort_values("macro_f1", ascending=False, kind="stable").reset_index(drop=True)


def majority_vote(table: pd.DataFrame, voters: Sequence[str]) -> np.ndarray:
    """The majority label of ``voters`` per sentence; a tie (an even number of voters) goes to the first voter."""
    voters = list(voters)
    unknown = [v for v in voters if v not in table.columns]
    if not voters or unknown:
        raise ValueError(f"choose voters among {models(table)}" + (f" (unknown: {unknown})" if unknown else ""))
    votes = table[voters].to_numpy()
    biased = votes.sum(axis=1)
    half = len(voters) / 2
    return np.where(biased > half, 1, np.where(biased < half, 0, votes[:, 0])).astype(int)


def vote_score(table: pd.DataFrame, voters: Sequence[str], n_resamples: int | None = None,
               seed: int | None = None) -> pd.DataFrame:
    """Two rows, ``vote`` and ``best single`` (by macro F1 here): ``system``, ``voters``, ``n``, ``macro_f1``, ``lo``,
    ``hi``; the vote's row adds the paired bootstrap against the best single (``diff``, ``diff_lo``, ``diff_hi``, ``p``)."""
    import pandas as pd
    gold = table["gold"].to_numpy()
    vote = majority_vote(table, voters)
    best = max(voters, key=lambda m: macro_f1(gold, table[m].to_numpy()))
    single = table[best].to_numpy()
    bs = paired_bootstrap(gold, vote, single, n_resamples=n_resamples, seed=seed)
    rows = []
    for system, pred, who in (("vote", vote, ", ".join(voters)), ("best single", single, best)):
        est, lo, hi = metric_ci(gold, pred, n_resamples=n_resamples, seed=seed)
        rows.append({"system": system, "voters": who, "k": len(voters) if system == "vote" else 1, "n": len(gold),
                     "macro_f1": est, "lo": lo, "hi": hi})
    out = pd.DataFrame(rows)
    out.loc[0, ["diff", "diff_lo", "diff_hi", "p"]] = [bs.diff, bs.lo, bs.hi, bs.p_value]
    return out


def _folds(gold: np.ndarray, seed: int) -> np.ndarray:
    """Two folds stratified by gold label (seeded): fold 0 or 1 per sentence."""
    rng = np.random.default_rng(seed)
    fold = np.empty(len(gold), dtype=int)
    for label in (0, 1):
        ix = np.flatnonzero(gold == label)
        rng.shuffle(ix)
        fold[ix] = np.arange(len(ix)) % 2
    return fold


def vote_sizes(table: pd.DataFrame, sizes: Sequence[int] = (3, 5, 10), n_resamples: int | None = None,
               seed: int | None = None) -> pd.DataFrame:
    """The k strongest models voting against the strongest alone, ranked on the other fold of a two-fold split; the
    pooled predictions scored on all sentences, one row per k plus ``best single``."""
    import pandas as pd

    from mabpd_kit.config import Config
    seed = Config().metrics.seed if seed is None else seed
    gold = table["gold"].to_numpy()
    fold = _folds(gold, seed)
    names = models(table)
    ranked = []
    for f in (0, 1):
        other = fold != f
        ranked.append(sorted(names, key=lambda m: -macro_f1(gold[other], table[m].to_numpy()[other])))
    systems: dict[str, tuple[np.ndarray, list[str], int]] = {}
    for k in [*sorted({min(k, len(names)) for k in sizes}), 1]:
        pred = np.empty(len(gold), dtype=int)
        for f in (0, 1):
            here = fold == f
            pred[here] = majority_vote(table[here], ranked[f][:k])
        label = "best single" if k == 1 else f"vote of {k}"
        systems[label] = (pred, [", ".join(r[:k]) for r in ranked], k)
    single = systems["best single"][0]
    rows = []
    for label, (pred, chosen, k) in systems.items():
        est, lo, hi = metric_ci(gold, pred, n_resamples=n_resamples, seed=seed)
        row = {"system": label, "k": k, "voters": " | ".join(dict.fromkeys(chosen)), "n": len(gold),
               "macro_f1": est, "lo": lo, "hi": hi}
        if k > 1:
            bs = paired_bootstrap(gold, pred, single, n_resamples=n_resamples, seed=seed)
            row.update(diff=bs.diff, diff_lo=bs.lo, diff_hi=bs.hi, p=bs.p_value)
        rows.append(row)
    return pd.DataFrame(rows)


def error_correlation(table: pd.DataFrame) -> pd.DataFrame:
    """Pairwise phi of the models' errors, one row per ordered pair (``a``, ``b``, ``phi``, ``both_wrong``); NaN for a
    model wrong on every sentence or on none."""
    import pandas as pd
    names = models(table)
    errors = (table[names].to_numpy() != table["gold"].to_numpy()[:, None]).astype(float)
    with np.errstate(invalid="ignore", divide="ignore"):  # a model wrong everywhere (or nowhere) has no phi
        phi = np.corrcoef(errors.T)
    np.fill_diagonal(phi, 1.0)
    both = errors.T @ errors / len(errors)
    rows = [{"a": a, "b": b, "phi": float(phi[i, j]), "both_wrong": float(both[i, j])}
            for i, a in enumerate(names) for j, b in enumerate(names)]
    return pd.DataFrame(rows)


def agreement(table: pd.DataFrame, voters: Sequence[str] | None = None) -> dict[str, Any]:
    """Fleiss' kappa of the chosen models, the share not unanimous, the mean error phi, and ``all_wrong`` beside
    ``independent_all_wrong`` (the product of their error rates)."""
    voters = list(voters) if voters else models(table)
    votes = table[voters].to_numpy()
    biased = votes.sum(axis=1)
    kappa = fleiss_kappa(np.column_stack([len(voters) - biased, biased]))
    errors = votes != table["gold"].to_numpy()[:, None]
    corr = error_correlation(table[["id", "text", "gold", *voters]])
    off = corr[corr["a"] != corr["b"]]
    return {"voters": len(voters), "n": len(table), "fleiss_kappa": kappa,
            "disagree_share": float(((biased > 0) & (biased < len(voters))).mean()),
            "mean_error_phi": float(off["phi"].mean()),
            "all_wrong": float(errors.all(axis=1).mean()),
            "independent_all_wrong": float(np.prod(errors.mean(axis=0)))}


def all_wrong(table: pd.DataFrame, voters: Sequence[str] | None = None) -> pd.DataFrame:
    """The sentences every one of ``voters`` (default: all models) labels wrongly: ``id``, ``text``, ``gold``."""
    voters = list(voters) if voters else models(table)
    wrong = (table[voters].to_numpy() != table["gold"].to_numpy()[:, None]).all(axis=1)
    return table.loc[wrong, ["id", "text", "gold"]].reset_index(drop=True)

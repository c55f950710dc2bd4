"""Is the corrected share of biased sentences valid for comparing groups? The leave-one-outlet-out check of
:func:`mabpd_kit.corpus.prevalence.estimate` against the annotators' share, and the BABE fit it is stored with."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["babe_decisions", "babe_sentences", "fit_sentence_error_rates", "prevalence_validity", "validity_note",
           "validity_section", "validity_summary"]


def prevalence_validity(df: pd.DataFrame, *, group: str = "outlet", min_n: int = 50,
                        edges: Sequence[float] | None = None, draws: int | None = None, confidence: float = 0.95,
                        max_width: float | None = None, spread: bool = True, seed: int = 0) -> pd.DataFrame:
    """Leave-one-group-out check of the corrected share: ``df`` has ``group``, the gold ``label`` (0/1), the kit's
    ``flag`` (0/1) and ``score`` per sentence. One row per group with ``min_n`` or more sentences (ordered by
    name); the error rates of each come from every other sentence, its share is estimated as an unlabelled corpus
    would be, and an interval wider than ``max_width`` counts as a miss."""
    import pandas as pd

    from mabpd_kit.config import CorpusConfig
    from mabpd_kit.corpus.prevalence import bin_counts, error_rates, estimate, group_seed
    st = CorpusConfig()
    e = tuple(edges) if edges is not None else st.prevalence_bins
    max_width = st.prevalence_max_width if max_width is None else max_width
    missing = [c for c in (group, "label", "flag", "score") if c not in df]
    if missing:
        raise ValueError(f"prevalence_validity needs columns {missing} (columns: {list(df.columns)})")
    data = df[df[group].notna() & df["label"].notna() & df["score"].notna()]
    sizes = data[group].value_counts()
    rows = []
    for g in sorted(sizes[sizes >= min_n].index, key=str):
        inside, rest = data[data[group] == g], data[data[group] != g]
        if rest["label"].nunique() < 2:
            raise ValueError(f"leaving out {g!r} leaves no biased and neutral sentences to take the error rates from")
        rates = error_rates(rest["flag"], rest["score"], rest["label"], e, groups=rest[group] if spread else None,
                            source=f"all but {g}")
        est = estimate(bin_counts(inside["flag"], inside["score"], e), rates, draws=draws or st.prevalence_draws,
                       confidence=confidence, seed=group_seed(seed, g))
        truth = float(inside["label"].astype(float).mean())
        width = est["hi"] - est["lo"]
        rows.append({group: g, "n": len(inside), "cc": float(inside["flag"].astype(float).mean()),
                     "estimate": est["estimate"], "lo": est["lo"], "hi": est["hi"], "width": width, "truth": truth,
                     "covered": bool(est["lo"] <= truth <= est["hi"] and width <= max_width)})
    return pd.DataFrame(rows)


def validity_summary(table: pd.DataFrame) -> dict[str, float]:
    """Coverage (covered / groups), Spearman's rho of estimate and truth, MAE of the corrected share and
    of classify-and-count, and the median interval width."""
    if not len(table):
        return {"groups": 0, "covered": 0, "coverage": math.nan, "spearman": math.nan, "mae": math.nan,
                "mae_cc": math.nan, "median_width": math.nan}
    rho = float(table["estimate"].rank().corr(table["truth"].rank())) if len(table) > 2 else math.nan  # Spearman
    return {"groups": len(table), "covered": int(table["covered"].sum()), "coverage": float(table["covered"].mean()),
            "spearman": rho, "mae": float((table["estimate"] - table["truth"]).abs().mean()),
            "mae_cc": float((table["cc"] - table["truth"]).abs().mean()),
            "median_width": float(table["width"].median())}


def validity_note(table: pd.DataFrame, group: str = "outlet") -> str:
    """The check as text: the table and one summary line."""
    s = validity_summary(table)
    head = f"{group:<16} {'n':>4} {'cc':>5} {'corr':>5} {'95% interval':>13} {'width':>5} {'annot':>5} covered"
    lines = [head] + [f"{str(r[group])[:16]:<16} {r['n']:>4} {r['cc']:>5.2f} {r['estimate']:>5.2f} "
                      f"[{r['lo']:.2f}, {r['hi']:.2f}] {r['width']:>5.2f} {r['truth']:>5.2f} {'yes' if r['covered'] else 'NO'}"
                      for r in table.to_dict("records")]
    lines.append(f"covered {s['covered']}/{s['groups']}, Spearman {s['spearman']:.2f}, MAE {s['mae']:.3f} "
                 f"(classify-and-count {s['mae_cc']:.3f}), median width {s['median_width']:.2f}")
    return "\n".join(lines)


def babe_sentences(decisions: Any, items: pd.DataFrame) -> pd.DataFrame:
    """BABE's items joined with the kit's decisions (any frame with ``id``, ``pred``, ``score``,
    ``failed``): the columns :func:`prevalence_validity` reads. Failed decisions are left out."""
    d = decisions.to_frame() if hasattr(decisions, "to_frame") else decisions
    d = d[~d["failed"].astype(bool)] if "failed" in d else d
    keep = ["id", "outlet", "label", *(["type"] if "type" in items else [])]  # type: the outlet's leaning
    out = items[keep].merge(d[["id", "pred", "score"]], on="id", how="inner")
    return out.rename(columns={"pred": "flag"}).assign(flag=lambda f: f["flag"].astype(float),
                                                       score=lambda f: f["score"].astype(float))


def babe_decisions(data_dir: Any = None, config: Any = None) -> pd.DataFrame:
    """The kit's rule-based decisions on every BABE train sentence, joined with outlet and label
    (:func:`babe_sentences`): the validation sample of the sentence error rates. BABE test is never read."""
    import pandas as pd

    from mabpd_kit.data.babe import load_babe
    from mabpd_kit.mabpd.pipeline import Pipeline
    items = load_babe("train", data_dir=data_dir, llm_labels=False, download=False)
    pipe = Pipeline(config=config) if config is not None else Pipeline()
    rows = [(i, d.pred, d.score, d.failed) for i, d in
            ((i, pipe.analyze(t, id=i)) for i, t in zip(items["id"], items["text"]))]
    out = babe_sentences(pd.DataFrame(rows, columns=["id", "pred", "score", "failed"]), items)
    out.attrs["source"] = items.attrs.get("source", [])
    return out


def fit_sentence_error_rates(sentences: pd.DataFrame, config: Any = None) -> tuple[str, dict[str, Any]]:
    """The ``sentence_error_rates`` fit from the kit's decisions per BABE train sentence: bin counts per class,
    their spread between outlets and the leave-one-outlet-out check; returns (method, values)."""
    from mabpd_kit.config import Config
    from mabpd_kit.corpus.prevalence import error_rates
    cfg, df = config or Config(), sentences
    rates = error_rates(df["flag"], df["score"], df["label"], cfg.corpus.prevalence_bins, groups=df["outlet"],
                        source="BABE train", settings=cfg.corpus)
    method = ("kit's rule-based sentence decisions on BABE train: per annotator class, sentences per bin "
              "(neutral; biased cut at corpus.prevalence_bins), and the Dirichlet-multinomial spread "
              "between outlets (>= corpus.prevalence_min_class sentences of a class)")
    return method, {**rates.to_values(), "validity": _check(df, cfg), "by_leaning": _by_leaning(df)}


def _by_leaning(df: pd.DataFrame) -> list[dict[str, Any]]:
    """The detector's error rates by outlet leaning, for the corpus report to show beside a user's leaning column."""
    if "type" not in df:
        return []
    from mabpd_kit.evaluate.audit import leaning_audit
    table = leaning_audit(df.assign(pred=df["flag"]), group="type", gold="label", systems=["pred"])
    return [_rounded(r) for r in table.to_dict("records")]


def _check(df: pd.DataFrame, cfg: Any) -> dict[str, Any]:
    """The leave-one-outlet-out check stored with the artefact: its summary and its table."""
    table = prevalence_validity(df, edges=cfg.corpus.prevalence_bins, draws=cfg.corpus.prevalence_draws,
                                max_width=cfg.corpus.prevalence_max_width, seed=cfg.corpus.seed)
    return {**_rounded(validity_summary(table)), "table": [_rounded(r) for r in table.to_dict("records")]}


def _rounded(row: dict[str, Any]) -> dict[str, Any]:
    return {k: (round(v, 4) if isinstance(v, float) else v) for k, v in row.items()}


def validity_section(predictions: pd.DataFrame, system: str) -> str:
    """The ``mabpd evaluate --dataset babe`` section: the leave-one-outlet-out check on one system's predictions,
    or a line saying why it cannot be run."""
    need = {"system", "outlet", "gold", "pred", "score"}
    if not need <= set(predictions.columns):
        return f"validity of the corrected share: not run (the results lack {sorted(need - set(predictions.columns))})"
    rows = predictions[predictions["system"] == system]
    rows = rows[~rows["failed"].astype(bool)] if "failed" in rows else rows
    df = rows.rename(columns={"gold": "label", "pred": "flag"})[["outlet", "label", "flag", "score"]]
    big = int((df["outlet"].value_counts() >= 50).sum())
    if big < 3:
        return (f"validity of the corrected share: not run ({big} outlets with >= 50 sentences; "
                "it needs 3 or more: drop --limit)")
    table = prevalence_validity(df.astype({"label": float, "flag": float, "score": float}))
    return (f"Validity of the corrected share of biased sentences ({system}; leave-one-outlet-out: each outlet's "
            "error rates come from the other outlets; cc = classify-and-count, annot = the annotators' share; "
            "an interval wider than 0.5 is a miss):\n" + validity_note(table))

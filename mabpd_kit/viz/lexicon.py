"""Charts of the bias lexicon: coverage of the taxonomy and the independence check.

>>> import mabpd_kit as mk
>>> lex = mk.Lexicon.default()
>>> mk.viz.lexicon.coverage_chart(lex)         # terms per category, coloured by taxonomy
>>> mk.viz.lexicon.band_chart(lex)             # terms per band and meta-category
>>> res = lex.independence(texts, labels)
>>> mk.viz.lexicon.independence_chart(res)     # band vs bias rate per term, with the fitted line

Every builder returns an altair chart drawn from a DataFrame the lexicon (or the result) already
holds, so a student can check any bar against ``lex.categories_frame()`` or ``res.frame``.
altair is imported by the first chart (:func:`mabpd_kit.viz.altair`), so importing this is cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mabpd_kit.viz import altair, category_color

if TYPE_CHECKING:
    import altair as alt

    from mabpd_kit.lexicon import IndependenceResult, Lexicon

__all__ = ["coverage_chart", "band_chart", "independence_chart", "match_chart"]


def coverage_chart(lex: "Lexicon", *, title: str | None = None) -> "alt.Chart":
    """Terms per category (horizontal bars), coloured by taxonomy type, sorted by taxonomy then size."""
    alt = altair()
    df = lex.categories_frame()[["category", "taxonomy", "meta_category", "n_terms"]]
    df = df.sort_values(["taxonomy", "n_terms"], ascending=[True, False]).reset_index(drop=True)
    taxonomies = list(dict.fromkeys(df["taxonomy"]))
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("category:N", sort=df["category"].tolist(), title=None),
            x=alt.X("n_terms:Q", title="terms"),
            color=category_color("taxonomy", categories=taxonomies, title="taxonomy type"),
            tooltip=["category", "taxonomy", "meta_category", "n_terms"],
        )
        .properties(title=title or f"Lexicon coverage: {len(lex.terms)} terms in {len(df)} categories", width=360)
    )


def band_chart(lex: "Lexicon", *, title: str | None = None) -> "alt.Chart":
    """Number of terms per score band, stacked by meta-category."""
    alt = altair()
    tf = lex.terms_frame()
    df = tf.groupby(["band", "meta_category"], as_index=False).size().rename(columns={"size": "n_terms"})
    df["band"] = df["band"].map(lambda b: f"{b:.2f}")
    metas = list(dict.fromkeys(sorted(df["meta_category"])))
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            x=alt.X("band:O", title="score band"),
            y=alt.Y("n_terms:Q", title="terms"),
            color=category_color("meta_category", categories=metas, title="meta-category"),
            tooltip=["band", "meta_category", "n_terms"],
        )
        .properties(title=title or "Terms per score band", width=260)
    )


def independence_chart(res: "IndependenceResult", *, title: str | None = None) -> "alt.LayerChart":
    """One point per term found in the corpus: its band (jittered) against the bias rate of the
    records containing it, sized by how many records; a least-squares line shows the trend, and
    the title carries r, the critical value and the verdict."""
    import numpy as np

    alt = altair()

    df = res.frame[res.frame["n_records"] > 0].copy()
    # Deterministic jitter so the four bands do not print as four solid columns.
    rng = np.random.default_rng(0)
    df["band_jitter"] = df["band"] + rng.uniform(-0.03, 0.03, len(df))
    base = alt.Chart(df)
    points = base.mark_circle(opacity=0.45).encode(
        x=alt.X("band_jitter:Q", title="term score band", scale=alt.Scale(domain=[0.55, 0.95])),
        y=alt.Y("bias_rate:Q", title="bias rate of records containing the term", scale=alt.Scale(domain=[0, 1])),
        size=alt.Size("n_records:Q", title="records", scale=alt.Scale(range=[10, 300])),
        tooltip=["term", "category", "band", "n_records", "bias_rate"],
    )
    trend = base.transform_regression("band", "bias_rate").mark_line(color="black").encode(x="band:Q", y="bias_rate:Q")
    rule = alt.Chart({"values": [{"rate": res.bias_rate}]}).mark_rule(strokeDash=[4, 4], color="gray").encode(
        y="rate:Q"
    )
    head = title or (
        f"r = {res.r:+.3f} vs critical {res.r_critical:.3f} (n = {res.n} terms present; "
        f"{res.n_absent}/{res.n_terms} absent): {res.verdict.split(':')[0]}"
    )
    return alt.layer(points, trend, rule).properties(title=head, width=420, height=260)


def match_chart(lex: "Lexicon", texts: list[str], *, title: str | None = None) -> "alt.Chart":
    """Lexicon hits per category over a list of texts (after overlap resolution), coloured by taxonomy."""
    import pandas as pd

    alt = altair()
    rows = [{"category": m.category, "taxonomy": m.taxonomy} for t in texts for m in lex.match(t)]
    df = pd.DataFrame(rows, columns=["category", "taxonomy"])
    df = df.groupby(["category", "taxonomy"], as_index=False).size().rename(columns={"size": "hits"})
    df = df.sort_values("hits", ascending=False)
    return (
        alt.Chart(df)
        .mark_bar()
        .encode(
            y=alt.Y("category:N", sort=df["category"].tolist(), title=None),
            x=alt.X("hits:Q"),
            color=category_color("taxonomy", categories=list(dict.fromkeys(sorted(df["taxonomy"]))),
                                 title="taxonomy type"),
            tooltip=["category", "taxonomy", "hits"],
        )
        .properties(title=title or f"Lexicon hits in {len(texts)} texts", width=360)
    )

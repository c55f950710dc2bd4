"""Charts for the ten real LLMs' zero-shot labels on BABE train (:mod:`mabpd_kit.evaluate.llm_labels`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from mabpd_kit.viz import altair
from mabpd_kit.viz.colors import OKABE_ITO, OTHER_COLOR

if TYPE_CHECKING:  # pragma: no cover
    import altair as alt
    import pandas as pd

__all__ = ["ROLE_COLORS", "ROLE_SHAPES", "error_correlation_chart", "scores_chart", "vote_view"]

#: What a row is -> its colour and shape: greys, and orange for "yours" (no verdict or system colour).
ROLE_COLORS: dict[str, str] = {"your vote": OKABE_ITO["orange"], "vote": "#555555", "best single": OTHER_COLOR,
                               "single model": "#c8c8c8"}
ROLE_SHAPES: dict[str, str] = {"your vote": "diamond", "vote": "diamond", "best single": "circle", "single model": "circle"}


def scores_chart(rows: pd.DataFrame, title: str | None = None) -> alt.LayerChart:
    """Macro F1 with its interval per row of ``rows`` (``label``, ``role``, ``macro_f1``, ``lo``, ``hi``), in order."""
    alt = altair()
    lo, hi = float(rows["lo"].min()), float(rows["hi"].max())
    pad = max(0.01, (hi - lo) * 0.05)
    scale = alt.Scale(domain=[max(0.0, lo - pad), min(1.0, hi + pad)], zero=False)
    order = rows["label"].tolist()
    y = alt.Y("label:N", sort=order, title=None)
    roles = [r for r in ROLE_COLORS if r in set(rows["role"])]
    base = alt.Chart(rows)
    ci = base.mark_rule(color="black").encode(y=y, x=alt.X("lo:Q", scale=scale, title="macro F1 (axis zoomed)"), x2="hi:Q")
    dots = base.mark_point(filled=True, size=90, opacity=1).encode(
        y=y, x=alt.X("macro_f1:Q", scale=scale),
        color=alt.Color("role:N", title=None, scale=alt.Scale(domain=roles, range=[ROLE_COLORS[r] for r in roles])),
        shape=alt.Shape("role:N", title=None, scale=alt.Scale(domain=roles, range=[ROLE_SHAPES[r] for r in roles])),
        tooltip=["label", "role", alt.Tooltip("macro_f1:Q", format=".3f"), alt.Tooltip("lo:Q", format=".3f"),
                 alt.Tooltip("hi:Q", format=".3f")])
    text = base.mark_text(align="left", dx=6, dy=-8, fontSize=10).encode(
        y=y, x=alt.X("macro_f1:Q", scale=scale), text=alt.Text("macro_f1:Q", format=".3f"))
    chart = alt.layer(ci, dots, text).properties(width=420, height=alt.Step(24))
    return chart.properties(title=title) if title else chart


def error_correlation_chart(corr: pd.DataFrame, order: Sequence[str] | None = None,
                            title: str | None = None) -> alt.LayerChart:
    """Heat map of the pairwise error correlation (phi), every cell labelled; models in ``order``."""
    alt = altair()
    order = list(order) if order is not None else list(dict.fromkeys(corr["a"]))
    off = corr[corr["a"] != corr["b"]]
    phi_lo = min(0.0, float(off["phi"].min())) if len(off) else 0.0   # a negative phi stays inside the legend
    base = alt.Chart(off).encode(x=alt.X("a:N", sort=order, title=None), y=alt.Y("b:N", sort=order, title=None))
    cells = base.mark_rect().encode(
        color=alt.Color("phi:Q", title="error phi", scale=alt.Scale(scheme="greys", domain=[phi_lo, 1])),   # not blue (neutral)
        tooltip=["a", "b", alt.Tooltip("phi:Q", format=".2f"), alt.Tooltip("both_wrong:Q", format=".1%")])
    labels = base.mark_text(fontSize=9).encode(
        text=alt.Text("phi:Q", format=".2f"),
        color=alt.when(alt.datum.phi > 0.5).then(alt.value("white")).otherwise(alt.value("black")))
    chart = alt.layer(cells, labels).properties(width=alt.Step(34), height=alt.Step(22))
    return chart.properties(title=title) if title else chart


def vote_view(table: pd.DataFrame, voters: Sequence[str] = ("gpt_4", "gpt_3_5", "mixtral_8x7b"),
              n_resamples: int | None = None, seed: int | None = None) -> tuple[alt.LayerChart | None, str]:
    """The lesson's panel for a choice of voters: each voter alone and their vote with intervals, and a caption."""
    import pandas as pd

    from mabpd_kit.evaluate.llm_labels import single_scores, vote_score
    voters = list(voters)
    if len(voters) < 2:
        return None, "choose at least two voters (a vote of one model is that model)"
    got = vote_score(table, voters, n_resamples=n_resamples, seed=seed)
    vote, best = got.iloc[0], got.iloc[1]
    singles = single_scores(table[["id", "text", "gold", *voters]], n_resamples=n_resamples, seed=seed)
    rows = pd.DataFrame(
        [{"label": f"your vote of {len(voters)}", "role": "your vote", "macro_f1": vote.macro_f1, "lo": vote.lo,
          "hi": vote.hi}]
        + [{"label": r.model, "role": "best single" if r.model == best.voters else "single model",
            "macro_f1": r.macro_f1, "lo": r.lo, "hi": r.hi} for r in singles.itertuples()])
    verdict = ("the vote is better" if vote["diff_lo"] > 0 else "the vote is worse" if vote["diff_hi"] < 0
               else "no difference this data can show")
    tie = f" (a tie would go to {voters[0]})" if len(voters) % 2 == 0 else ""
    caption = (f"your vote of {len(voters)}{tie}: macro F1 {vote.macro_f1:.3f} [{vote.lo:.3f}, {vote.hi:.3f}]; "
               f"best of them alone, {best.voters}: {best.macro_f1:.3f} [{best.lo:.3f}, {best.hi:.3f}]; vote minus best "
               f"{vote['diff']:+.3f} [{vote.diff_lo:+.3f}, {vote.diff_hi:+.3f}] (paired bootstrap, n = {int(vote.n):,}): "
               f"{verdict}")
    return scores_chart(rows, title=f"Your majority vote of {len(voters)} LLMs against each of them alone"), caption

"""Charts of the bias lexicon (taxonomy coverage, the independence check) and the construction panel."""

from __future__ import annotations

from typing import TYPE_CHECKING

from mabpd_kit.viz import altair, category_color
from mabpd_kit.viz.colors import OKABE_ITO

if TYPE_CHECKING:
    import altair as alt
    import pandas as pd

    from mabpd_kit.lexicon import IndependenceResult, Lexicon

__all__ = ["TRY_SENTENCES", "band_chart", "coverage_chart", "edit_lexicon", "flag_rate", "independence_chart",
           "lexicon_effect", "match_chart"]


def coverage_chart(lex: Lexicon, *, title: str | None = None) -> alt.Chart:
    """Terms per category (horizontal bars), coloured by taxonomy type, sorted by taxonomy then size."""
    alt = altair()
    df = lex.categories_frame()[["category", "taxonomy", "meta_category", "n_terms"]]
    df = df.sort_values(["taxonomy", "n_terms"], ascending=[True, False]).reset_index(drop=True)
    return _category_bars(df, alt.X("n_terms:Q", title="terms"), list(dict.fromkeys(df["taxonomy"])),
                          title or f"Lexicon coverage: {len(lex.terms)} terms in {len(df)} categories")


def _category_bars(df: pd.DataFrame, x: alt.X, taxonomies: list[str], title: str) -> alt.Chart:
    """One horizontal bar per category in ``df``'s order, coloured by taxonomy type."""
    alt = altair()
    return alt.Chart(df).mark_bar().encode(
        y=alt.Y("category:N", sort=df["category"].tolist(), title=None), x=x,
        color=category_color("taxonomy", categories=taxonomies, title="taxonomy type"), tooltip=list(df.columns),
    ).properties(title=title, width=360)


def band_chart(lex: Lexicon, *, title: str | None = None) -> alt.Chart:
    """Number of terms per score band, stacked by meta-category."""
    alt = altair()
    tf = lex.terms_frame()
    df = tf.groupby(["band", "meta_category"], as_index=False).size().rename(columns={"size": "n_terms"})
    df["band"] = df["band"].map(lambda b: f"{b:.2f}")
    metas = list(dict.fromkeys(sorted(df["meta_category"])))
    return alt.Chart(df).mark_bar().encode(
        x=alt.X("band:O", title="score band"), y=alt.Y("n_terms:Q", title="terms"),
        color=category_color("meta_category", categories=metas, title="meta-category"),
        tooltip=["band", "meta_category", "n_terms"]).properties(title=title or "Terms per score band", width=260)


def independence_chart(res: IndependenceResult, *, title: str | None = None) -> alt.LayerChart:
    """One point per term found in the corpus: its band against the bias rate of its records, with a least-squares
    line; the title carries r, the critical value and the verdict."""
    import numpy as np
    alt = altair()
    df = res.frame[res.frame["n_records"] > 0].copy()
    # Deterministic jitter so the four bands do not print as four solid columns.
    rng = np.random.default_rng(0)
    df["band_jitter"] = df["band"] + rng.uniform(-0.03, 0.03, len(df))
    base = alt.Chart(df)
    lo, hi = (int(df["n_records"].min()), int(df["n_records"].max())) if len(df) else (1, 1)
    sizes = sorted({int(round(v)) for v in np.linspace(lo, hi, min(4, hi - lo + 1))})   # whole record counts only
    points = base.mark_circle(opacity=0.45, color="#333333").encode(   # a term is no verdict: grey, not neutral blue
        x=alt.X("band_jitter:Q", title="term score band", scale=alt.Scale(domain=[0.55, 0.95])),
        y=alt.Y("bias_rate:Q", title="bias rate of records containing the term", scale=alt.Scale(domain=[0, 1])),
        size=alt.Size("n_records:Q", title="records", scale=alt.Scale(range=[10, 300]),
                      legend=alt.Legend(values=sizes, format="d")),
        tooltip=["term", "category", "band", "n_records", "bias_rate"],
    )
    trend = base.transform_regression("band", "bias_rate").mark_line(color="black").encode(x="band:Q", y="bias_rate:Q")
    rule = alt.Chart({"values": [{"rate": res.bias_rate}]}).mark_rule(strokeDash=[4, 4], color="gray")
    rule = rule.encode(y="rate:Q")
    head = title or (f"r = {res.r:+.3f} vs critical {res.r_critical:.3f} (n = {res.n} terms present; "
                     f"{res.n_absent}/{res.n_terms} absent): {res.verdict.split(':')[0]}")
    return alt.layer(points, trend, rule).properties(title=head, width=420, height=260)


def match_chart(lex: Lexicon, texts: list[str], *, title: str | None = None, floor: float | None = None) -> alt.Chart:
    """Lexicon hits per category over ``texts``, coloured by taxonomy; with ``floor``, only hits above it."""
    import pandas as pd
    alt = altair()
    rows = [{"category": m.category, "taxonomy": m.taxonomy} for t in texts for m in lex.match(t)
            if floor is None or m.band > floor]
    df = pd.DataFrame(rows, columns=["category", "taxonomy"])
    df = df.groupby(["category", "taxonomy"], as_index=False).size().rename(columns={"size": "hits"})
    df = df.sort_values("hits", ascending=False)
    x = alt.X("hits:Q", axis=alt.Axis(values=list(range(int(df["hits"].max() if len(df) else 0) + 1)), format="d"))
    return _category_bars(df, x, list(dict.fromkeys(sorted(df["taxonomy"]))),
                          title or f"Lexicon hits in {len(texts)} texts")


#: The construction panel's sentences: targets and their neutral twins (*even* / *even if*, *disaster*), the
#: lesson's protected-context traps, and two controls (a loaded sentence, a plain one).
TRY_SENTENCES: tuple[str, ...] = (
    "Critics called the new housing plan a disaster for renters.",
    "Disaster relief teams reached the flooded valley on Monday.",
    "Even the mayor's allies now doubt the housing plan.",
    "The plan passes even if two members vote against it.",
    "The senator will attack the plan in a speech on Tuesday.",
    "He suffered a heart attack during the hearing.",
    "The radical senator slammed the so-called reform.",
    "The council approved the budget after a two-hour debate.",
)


def edit_lexicon(lex: Lexicon, term: str = "", category: str = "hyperbole", band: float = 0.7, pos: str = "noun",
                 protect: str = "") -> tuple[Lexicon, list[str]]:
    """``lex`` with one more term and/or protected phrase, and what was done or refused, in words (never raises)."""
    from mabpd_kit.lexicon import Protected, Term
    notes: list[str] = []
    terms, protected = [], []
    term = " ".join(term.lower().split())
    if term and pos == "verb" and _looks_inflected(term.split(" ")[0]):
        notes.append(f"'{term.split(' ')[0]}' looks like an inflected form already: added as written (pos fixed), with no "
                     "verb endings; type the base form ('say', 'slam') to get every form")
        pos = "fixed"
    if term:
        known = {t.term: t for t in lex.terms}
        if term in known:
            t = known[term]
            notes.append(f"'{term}' is already in the lexicon ({t.category}, band {t.band:.2f}): nothing added")
        else:
            terms.append(Term(term=term, category=category, band=band, pos=pos, note="added in the lesson panel"))
    ctx = " ".join(protect.lower().split())
    if ctx:
        staged = lex.extend(terms=terms) if terms else lex
        inside = sorted({m.term for m in staged.match(ctx)})
        if any(p.context == ctx for p in lex.protected):
            notes.append(f"'{ctx}' is already a protected context")
        elif not inside:
            notes.append(f"no lexicon term inside '{ctx}': nothing to protect")
        elif ctx in inside:
            notes.append(f"'{ctx}' is a term itself: protecting the bare word would silence it everywhere; "
                         "give the neutral phrase around it")
        else:
            protected = [Protected(term=t, context=ctx, pos="fixed", note="added in the lesson panel") for t in inside]
    try:
        new = lex.extend(terms=terms, protected=protected) if (terms or protected) else lex
    except ValueError as exc:
        return lex, [*notes, f"refused: {exc}"]
    if terms:
        forms = next((t.forms for t in new.terms if t.term == term), ())
        notes.append(f"added '{term}' ({category}, band {band:.2f}, {pos}; forms: {', '.join(forms) or term})")
    if protected:
        notes.append(f"protected {', '.join(repr(p.term) for p in protected)} inside '{ctx}'")
    return new, notes


#: Irregular past forms a student may type as a "verb" (besides the lexicon's own irregular verbs).
_PAST_FORMS = frozenset({
    "said", "told", "made", "had", "did", "was", "were", "got", "gave", "came", "saw", "knew", "thought", "found",
    "left", "felt", "put", "held", "brought", "began", "kept", "meant", "led", "paid", "sent", "built", "spent",
    "won", "lost", "stood", "heard", "wrote", "spoke", "chose", "drove", "fell", "forgot", "hit", "hurt", "sold"})
_ING_VERBS = frozenset({"bring", "sing", "sting", "fling", "swing", "cling", "spring", "ring", "wring", "string", "sling"})


def _looks_inflected(word: str) -> bool:
    """A past form or participle typed where the builder expects a verb's base form ('said', 'slammed')."""
    from mabpd_kit.lexicon.morphology import IRREGULAR_VERBS
    if word in _PAST_FORMS or any(word in forms and not word.endswith(("s", "ing")) for forms in IRREGULAR_VERBS.values()):
        return word not in IRREGULAR_VERBS
    if word.endswith("ed") and not word.endswith("eed") and len(word) > 4:
        return True
    return word.endswith("ing") and len(word) > 5 and word not in _ING_VERBS


def _top_band(lex: Lexicon, text: str) -> float:
    """The highest band of the text's lexicon hits (0 without a hit): flagged at floor f iff above f."""
    return max((m.band for m in lex.match(text)), default=0.0)


def _flagged(lex: Lexicon, text: str, floor: float | None) -> bool:
    if floor is None:
        return lex.signal(text) is not None
    return any(m.band > floor for m in lex.match(text))


def flag_rate(lex: Lexicon, texts: list[str], floor: float | None = None) -> float:
    """Share of ``texts`` with a lexicon signal: a hit above ``floor`` (default ``config.lexicon.confidence_floor``)."""
    return sum(_flagged(lex, t, floor) for t in texts) / max(len(texts), 1)


def lexicon_effect(lex: Lexicon, term: str = "disaster", category: str = "hyperbole", band: float = 0.7,
                   pos: str = "noun", protect: str = "disaster relief", floor: float | None = None, *,
                   sentences: list[str] | tuple[str, ...] = TRY_SENTENCES,
                   dev_texts: list[str] | None = None, dev_name: str = "dev sample") -> tuple[object, str]:
    """What one edit does: span viewer of ``sentences``, hits per category, coverage, and the change in flag rate on
    ``dev_texts`` at ``floor``. Returns ``(HTML, caption)``."""
    import pandas as pd
    from IPython.display import HTML

    from mabpd_kit.viz import alt_text, chart_svg, figure_html, span_html
    new, notes = edit_lexicon(lex, term, category, band, pos, protect)
    counts = (lambda m: True) if floor is None else (lambda m: m.band > floor)   # the hits above the floor count
    spans = "".join(span_html(s, [new.to_span(m) for m in new.match(s) if counts(m)]) for s in sentences)
    above = "" if floor is None else f" above {floor:.2f}"
    hits = match_chart(new, list(sentences), floor=floor,
                       title=f"Lexicon hits{above} per category in the {len(sentences)} sentences")
    taxonomy = new.categories[category].taxonomy if category in new.categories else None
    cov = coverage_chart(new, title=f"Terms per category of the type '{taxonomy}'")
    if taxonomy is not None:
        alt = altair()
        frame = new.categories_frame()
        keep = frame[frame["taxonomy"] == taxonomy][["category", "taxonomy", "n_terms"]]
        keep = keep.assign(edited=keep["category"].eq(category).map({True: "your category", False: "other"}))
        cov = (alt.Chart(keep).mark_bar().encode(
            y=alt.Y("category:N", sort="-x", title=None),
            x=alt.X("n_terms:Q", title="terms", axis=alt.Axis(tickMinStep=1, format="d")),
            color=alt.Color("edited:N", title=None, scale=alt.Scale(domain=["your category", "other"],
                                                                    range=[OKABE_ITO["orange"], "#bbbbbb"])),
            tooltip=["category", "n_terms"]).properties(title=f"Terms per category of the type '{taxonomy}'", width=300))
    pictures = "".join(figure_html(chart_svg(c), alt_text(c.to_dict())) for c in (hits, cov))
    caption = "; ".join(notes) if notes else "no change: type a term or a protected phrase"
    if dev_texts:
        default = lex.config.lexicon.confidence_floor
        at = default if floor is None else floor
        shipped = [_top_band(lex, t) for t in dev_texts]
        was = [b > at for b in shipped]
        now = was if new is lex else [_top_band(new, t) > at for t in dev_texts]
        gained, lost = sum(b and not a for a, b in zip(was, now)), sum(a and not b for a, b in zip(was, now))
        before, after = sum(was) / len(was), sum(now) / len(now)
        diff = 100 * (after - before)
        way = "unchanged" if abs(diff) < 0.05 else (f"{diff:.1f} points higher" if diff > 0 else f"{-diff:.1f} points lower")
        name = dev_name if dev_name.startswith("the ") else f"the {dev_name}"
        count = "" if f"({len(dev_texts)} sentences" in name else f"{len(dev_texts)} sentences, "
        step = f"; one sentence = {100 / len(dev_texts):.1f} points, an illustration" if len(dev_texts) < 100 else ""
        caption += (f". Flag rate on {name} ({count}hits above {at:.2f}{step}): "
                    f"{100 * before:.1f}% -> {100 * after:.1f}% ({way}: {gained} newly flagged, {lost} no longer)")
        if abs(at - default) > 1e-9:
            caption += (f"; raising the floor from {default:.2f} to {at:.2f} alone moves the shipped lexicon's rate "
                        f"from {100 * sum(b > default for b in shipped) / len(shipped):.1f}% to {100 * before:.1f}%")
    table = pd.DataFrame({"sentence": list(sentences),
                          "signal before": [_sig(lex, s, floor) for s in sentences],
                          "signal after": [_sig(new, s, floor) for s in sentences]}).to_html(index=False)
    body = (f'<div style="display:flex;flex-wrap:wrap;gap:12px;align-items:flex-start">{pictures}</div>'
            f"{table}{spans}")
    return HTML(body), caption


def _sig(lex: Lexicon, text: str, floor: float | None = None) -> str:
    if floor is None:
        s = lex.signal(text)
    else:
        s = max((m for m in lex.match(text) if m.band > floor), key=lambda m: (m.band, m.end - m.start), default=None)
    return f"{s.text} ({s.band:.2f})" if s else "-"

"""The paper's own analyses (MABPD appendices O and P) counted from hand-made traces, checked by hand and
against scipy; then on real pipeline decisions and through the evaluation harness."""

from __future__ import annotations

from types import SimpleNamespace as NS

import numpy as np
import pandas as pd
import pytest

from mabpd_kit import evaluate as E
from mabpd_kit import metrics as M


def ratings_table(ratings, categories) -> np.ndarray:
    """Items x categories counts of an items x raters array of labels (the table fleiss_kappa reads)."""
    r = np.asarray(ratings, dtype=object)
    return np.stack([(r == c).sum(axis=1) for c in categories], axis=1)


def _rep(verdict: str) -> NS:
    return NS(verdict=verdict, spans=[], counter_spans=[])


def _round(*verdicts: str) -> NS:
    return NS(agreed=len(set(verdicts)) <= 1, arguments=[NS(verdict=v) for v in verdicts])


def _verifier(overturned: bool, valid: bool = True) -> NS:
    return NS(check="invalid" if overturned else "upheld", overturned=overturned, span=NS(valid=valid))


def _d(id: str, gold: int | None, pred: int | None, verdicts: tuple[str, ...], rounds=(), verifier=None, failed=False) -> NS:
    agents = ("bias", "evidence", "framing")
    return NS(id=id, gold=gold, pred=pred, failed=failed, reports=dict(zip(agents, map(_rep, verdicts))),
              debate=NS(rounds=list(rounds)) if rounds else None, verifier=verifier)


B, N = "biased", "neutral"
TRACES = [
    # split, debated into a unanimous *wrong* biased verdict, upheld on a neutral item: echo chamber + sycophancy
    _d("d1", 0, 1, (B, N, B), rounds=(_round(B, N, B), _round(B, B, B)), verifier=_verifier(False)),
    # the agents agree, neutral veto: no debate, no verifier run
    _d("d2", 0, 0, (N, N, N), verifier=NS(check="not_run", overturned=False, span=None)),
    # split and still split after the last round: no convergence
    _d("d3", 1, 0, (B, N, N), rounds=(_round(B, N, N), _round(B, N, N))),
    # split, converged on the *right* neutral label: convergence, no echo chamber
    _d("d4", 0, 0, (N, B, N), rounds=(_round(N, B, N), _round(N, N, N))),
    # failed: in no base
    _d("d5", 1, None, (), failed=True),
    # unanimous biased fast path, upheld on a biased item: right
    _d("d6", 1, 1, (B, B, B), verifier=_verifier(False)),
    # unanimous biased, overturned on a neutral item: right
    _d("d7", 0, 0, (B, B, B), verifier=_verifier(True)),
    # evidence and framing say biased, the BiasAgent neutral; upheld on a neutral item: a wrong uphold, not sycophancy
    _d("d8", 0, 1, (N, B, B), verifier=_verifier(False)),
]


def test_trace_flags_by_hand():
    f = E.trace_flags(TRACES).set_index("id")
    assert f["disagree"].tolist()[:4] == [True, False, True, True] and pd.isna(f.loc["d5", "disagree"])
    assert f.loc[["d1", "d3", "d4"], "converged"].tolist() == [True, False, True]
    assert f.loc[["d1", "d4"], "echo_chamber"].tolist() == [True, False]
    assert pd.isna(f.loc["d2", "converged"]) and not f.loc["d2", "verified"]
    assert f.loc[["d1", "d6", "d7", "d8"], "wrong_uphold"].tolist() == [True, False, False, True]
    assert f.loc[["d1", "d8"], "sycophancy"].tolist() == [True, False]
    assert pd.isna(f.loc["d7", "ungrounded_uphold"])  # overturned: not an uphold


def test_agent_independence_by_hand():
    ind = E.agent_independence(TRACES, n_resamples=500, seed=0)
    r = ind.disagreement
    assert (r.events, r.base) == (4, 7) and r.rate == pytest.approx(4 / 7) and r.lo <= r.rate <= r.hi
    assert r.paper == 0.38 and ind.agents == ("bias", "evidence", "framing")
    table = ratings_table([[d.reports[a].verdict for a in ind.agents] for d in TRACES if not d.failed], [N, B])
    assert ind.kappa_agents == pytest.approx(M.fleiss_kappa(table))
    assert ind.r is None and "annotator-level" in ind.note


def test_failure_modes_by_hand():
    fm = E.failure_modes(TRACES, n_resamples=500, seed=0)
    assert (fm.n_debates, fm.n_verified, fm.n_upheld) == (3, 4, 3)
    assert (fm.convergence.events, fm.convergence.base) == (2, 3)
    assert (fm.echo_chamber.events, fm.echo_chamber.base) == (1, 3) and fm.echo_chamber.paper == 0.04
    assert (fm.wrong_uphold.events, fm.wrong_uphold.base) == (2, 4)
    assert (fm.sycophancy.events, fm.sycophancy.base) == (1, 4) and fm.sycophancy.paper == 0.11
    assert fm.ungrounded_uphold == 0
    bad = _d("d9", 1, 1, (B, B, B), verifier=_verifier(False, valid=False))
    assert E.failure_modes([bad], n_resamples=50).ungrounded_uphold == 1


def test_annotator_uncertainty_is_the_minority_share():
    u = E.annotator_uncertainty([[1, 1, 0, 0], [1, 1, 1], ["biased", "neutral", "neutral"], [1], None])
    assert u[:3] == pytest.approx([0.5, 0.0, 1 / 3]) and np.isnan(u[3]) and np.isnan(u[4])


def test_point_biserial_with_annotator_uncertainty_matches_scipy():
    from scipy import stats

    rng = np.random.default_rng(3)
    n = 60
    annotations = [list(rng.integers(0, 2, 5)) for _ in range(n)]
    u = E.annotator_uncertainty(annotations)
    # agents that disagree more often on the uncertain items
    traces = [_d(f"i{i}", 1, 1, (B, N, B) if rng.random() < 0.2 + u[i] else (B, B, B)) for i in range(n)]
    ind = E.agent_independence(traces, annotations=annotations, n_resamples=400, seed=0)
    x = np.array([len({r.verdict for r in d.reports.values()}) > 1 for d in traces], dtype=float)
    assert ind.r == pytest.approx(stats.pointbiserialr(x, u).statistic, abs=1e-9)
    assert ind.n_r == n and ind.r_lo <= ind.r <= ind.r_hi


def test_human_agreement_is_scotts_pi_with_two_raters():
    k = E.human_agreement([1, 0, 0, 0], [1, 1, 0, 0], n_resamples=200, seed=0)
    # p_o = 3/4; pooled share of 1 = 3/8, p_e = (3/8)^2 + (5/8)^2
    pe = (3 / 8) ** 2 + (5 / 8) ** 2
    assert k.kappa == pytest.approx((0.75 - pe) / (1 - pe)) and k.n == 4
    assert k.kappa_annotators is None
    ann = [[1, 1, 0], [1, 1, 1], [0, 0, 1], [0, 0, 0]]
    a = E.human_agreement(["biased", "neutral", "neutral", "neutral"], annotations=ann, n_resamples=200, seed=0)
    assert a.kappa_annotators == pytest.approx(M.fleiss_kappa(ratings_table(ann, [0, 1])))
    with_sys = [row + [p] for row, p in zip(ann, [1, 0, 0, 0])]
    assert a.kappa_with_system == pytest.approx(M.fleiss_kappa(ratings_table(with_sys, [0, 1])))
    assert (a.raters, a.n_annotated) == (3, 4)
    assert a.kappa == pytest.approx(k.kappa)  # majority of the annotations = [1, 1, 0, 0]


def test_paper_analyses_table_and_lines():
    pa = E.paper_analyses({"full": TRACES, "other": TRACES}, n_resamples=100, seed=0)
    t = pa.table()
    assert {"disagreement", "kappa_agents", "r_uncertainty", "convergence", "echo_chamber", "wrong_uphold",
            "sycophancy", "ungrounded_uphold", "kappa"} <= set(t["measure"])
    assert (t["measure"] == "kappa").sum() == 2
    text = "\n".join(pa.lines())
    assert "agents disagree before debate: 4/7" in text and "echo-chamber convergence 1/3" in text
    assert "not computable" in text and "sycophancy 1/4" in text


def test_real_decisions_are_counted_from_their_trace():
    import mabpd_kit as mk

    texts = ["Democrats rammed through a so-called reform that radical activists demanded.",
             "The senator's reckless scheme is a disgraceful attack on hardworking families.",
             "Critics slammed the outrageous, job-killing bill as a shameless power grab.",
             "The bill passed the Senate 52 to 48 on Tuesday.",
             "Officials said the bridge would reopen after inspections are complete.",
             "The mayor said the \"radical\" plan was a disaster, according to the report.", ""]
    res = mk.Pipeline().analyze_many(texts, gold=[1, 1, 1, 0, 0, 0, 0], progress=False)
    ds = res.decisions
    f = E.trace_flags(ds)
    ok = [d for d in ds if not d.failed]
    assert f["disagree"].notna().sum() == len(ok) == len(ds) - 1
    assert f["disagree"].dropna().tolist() == [len({r.verdict for r in d.reports.values()}) > 1 for d in ok]
    assert f["debated"].fillna(False).sum() == sum(d.route == "debate" for d in ds)
    assert f["verified"].fillna(False).sum() == sum(d.verifier is not None and d.verifier.check != "not_run" for d in ds)
    assert E.failure_modes(ds, n_resamples=50).ungrounded_uphold == 0


def test_evaluate_prints_the_analyses_and_uses_annotations_when_given():
    frame = pd.DataFrame({
        "id": [f"s{i}" for i in range(6)],
        "text": ["Democrats rammed through a so-called reform that radical activists demanded.",
                 "The extremist mob stormed the meeting, spewing hateful lies.",
                 "Republicans want to destroy what little is left of the safety net.",
                 "The bill passed the Senate 52 to 48 on Tuesday.",
                 "The mayor said the \"radical\" plan was a disaster, according to the report.",
                 "Officials said the bridge would reopen after inspections are complete."],
        "label": [1, 1, 1, 0, 0, 0],
    })
    ev = E.evaluate("toy", "dev", ["full"], frame=frame, n_resamples=50, progress=False)
    note = ev.closing_note()
    assert "agents disagree before debate" in note and "verifier sycophancy" in note and "Fleiss kappa full" in note
    assert ev.analyses.independence.r is None
    frame["annotations"] = [[1, 1, 1], [1, 1, 0], [1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 0, 0]]
    ev2 = E.evaluate("toy", "dev", ["full"], frame=frame, n_resamples=50, progress=False)
    agr = ev2.analyses.agreement["full"]
    assert agr.raters == 3 and agr.n_annotated == 6 and agr.kappa_annotators is not None
    assert ev2.analyses.independence.n_r == 6  # computed, or undefined with a reason
    assert ev2.analyses.independence.r is not None or "undefined" in ev2.analyses.independence.note


@pytest.mark.parametrize("m", [2, 3, 5])
def test_the_bootstrap_kappa_formula_is_fleiss_kappa(m):
    from mabpd_kit.evaluate.analyses import _kappa_of_counts, _two_col

    rng = np.random.default_rng(m)
    for _ in range(20):
        a = (rng.random((40, m)) < rng.random((40, 1))).astype(int)
        assert _kappa_of_counts(m)(a.sum(axis=1)) == pytest.approx(M.fleiss_kappa(_two_col(a)), abs=1e-12)

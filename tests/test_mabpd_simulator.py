"""The MABPD simulator: planted settings come back from the traces, the burden of proof holds on
simulated hallucinations, it is deterministic by seed, and it is fast."""

from __future__ import annotations

import time

import pytest

from mabpd_kit.config import Config
from mabpd_kit.mabpd.router import Route
from mabpd_kit.mabpd.simulator import AGENTS, SimSpec, simulate, sweep


@pytest.fixture(scope="module")
def planted():
    spec = SimSpec(hallucination=0.25, competence=(0.85, 0.7, 0.65), correlation=0.4)
    return simulate(spec, n_items=3000, seed=3, configs=("full",))


def test_planted_settings_recovered(planted):
    got = planted.recover()
    assert got["hallucination"] == pytest.approx(0.25, abs=0.03)
    for agent, c in zip(AGENTS, (0.85, 0.7, 0.65)):
        assert got["competence"][agent] == pytest.approx(c, abs=0.04), agent
    assert got["correlation"] == pytest.approx(0.4, abs=0.12)
    assert got["calibration"] == pytest.approx(SimSpec().calibration, abs=0.05)


def test_no_correlation_recovered_as_none():
    got = simulate(SimSpec(correlation=0.0), n_items=3000, seed=4, configs=("no-debate",)).recover()
    assert abs(got["correlation"]) < 0.1
    assert got["hallucination"] == 0.0


def test_deterministic_by_seed():
    spec = SimSpec(hallucination=0.2, correlation=0.3)
    a, b = (simulate(spec, n_items=200, seed=7) for _ in range(2))
    c = simulate(spec, n_items=200, seed=8)
    for name in a.results:
        assert [d.label for d in a[name]] == [d.label for d in b[name]]
        assert [d.route for d in a[name]] == [d.route for d in b[name]]
    assert a.metrics().equals(b.metrics())
    assert [d.label for d in a["full"]] != [d.label for d in c["full"]]


def test_grounding_makes_hallucinated_bias_neutral():
    """Every agent hallucinates: all 'biased' claims cite invented quotes only, so every
    decision is neutral - unless the burden of proof is switched off in the debate *and* the
    verifier is off, where the invented evidence wins votes."""
    spec = SimSpec(hallucination=1.0)
    off = Config().replace(**{"sad.evidence_weighting": False, "verifier.enabled": False,
                              "router.neutral_veto_below": 0.0})
    sim = simulate(spec, n_items=300, seed=1, configs={"full": Config(), "no grounding": off})
    assert all(d.label == "neutral" for d in sim["full"])
    assert all(d.scoring.score == 0.0 for d in sim["full"])
    debated = [d for d in sim["no grounding"] if d.debate is not None]
    assert debated and all(d.label == "biased" for d in debated)


def test_hallucinated_reports_carry_no_valid_span(planted):
    truth = planted.truth.set_index(["id", "agent"])["hallucinated"]
    for d in list(planted["full"])[:300]:
        for a, r in d.reports.items():
            if truth[(d.id, a)]:
                assert r.verdict == "biased" and r.spans and not any(s.valid for s in r.spans)
            else:
                assert all(s.valid for s in r.spans)


def test_real_steps_and_metrics():
    sim = simulate(SimSpec(), n_items=300, seed=0)
    assert set(sim.results) == {"full", "no-debate", "single-agent", "no-evidence-weighting"}
    routes = set(Route.__args__)
    for name, res in sim.results.items():
        assert {d.route for d in res} <= routes
        m = res.metrics()
        assert 0 <= m["macro_f1"] <= 1 and m["n"] == 300
    assert {d.route for d in sim["single-agent"]} == {"single_agent"}
    assert {d.route for d in sim["no-debate"]} == {"no_debate"}
    assert any(d.debate is not None for d in sim["full"])
    assert all(len(d.reports) == 1 for d in sim["single-agent"])


def test_debate_gains_with_hallucination():
    """The structural point of lesson 05: a hallucinating agent's zeroed component drags the
    score below the boundary (no-debate loses recall), while in the vote it simply has no voice."""
    f = sweep("hallucination", [0.0, 0.3], n_items=1500, seed=2, configs=("full", "no-debate"))
    gain = f.pivot(index="hallucination", columns="config", values="macro_f1")
    gain = gain["full"] - gain["no-debate"]
    assert gain[0.3] > gain[0.0] + 0.05
    recall = f.set_index(["hallucination", "config"])["recall"]
    assert recall[(0.3, "no-debate")] < recall[(0.0, "no-debate")] - 0.1


def test_fast():
    t = time.process_time()  # CPU time: a busy machine stretches the wall clock (3.05 s at load 6), not this
    simulate(SimSpec(hallucination=0.2), n_items=1000, seed=0, configs=("full",))
    assert time.process_time() - t < 3.0   # about 0.3 s on one core


def test_bad_competence():
    with pytest.raises(ValueError):
        SimSpec(competence=(0.5, 0.5)).per_agent()


def test_charts_read_the_simulation():
    from mabpd_kit.viz.simulator import config_chart, gain_phrase, sweep_chart

    sim = simulate(SimSpec(hallucination=0.3), n_items=200, seed=0, configs=("full", "no-debate"))
    spec = config_chart(sim).to_dict()
    (rows,) = spec["datasets"].values()
    f1 = {r["config"]: r["value"] for r in rows if r["measure"] == "macro F1"}
    m = sim.metrics()
    assert f1 == pytest.approx(m["macro_f1"].to_dict())
    assert spec["title"] and spec["description"]
    frame = sweep("hallucination", [0.0, 0.2], n_items=100, configs=("full", "no-debate"))
    s = sweep_chart(frame, "hallucination", current=0.2).to_dict()
    assert s["title"] and s["description"] and len(s["layer"]) == 2
    assert gain_phrase(-119.0) == "119.0 points lower than" and gain_phrase(0.01) == "the same as"


def test_verifier_overturns_simulated_quotations():
    """Wrong biased readings of neutral items with an attributed quotation cite words inside it: the
    real rule-based verifier overturns them (check 'quotation'); it never turns neutral into biased."""
    sim = simulate(SimSpec(quotation_share=1.0, competence=0.6), n_items=400, seed=5, configs=("full", "no-verifier"))
    checks = [d.verifier.check for d in sim["full"] if d.verifier is not None]
    assert "quotation" in checks
    for with_v, without in zip(sim["full"], sim["no-verifier"]):
        assert not (with_v.label == "biased" and without.label == "neutral")
    assert sim.metrics().loc["full", "precision"] > sim.metrics().loc["no-verifier", "precision"]

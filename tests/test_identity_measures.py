"""Identity-bias measures on hand-built logs, answer parsing, and the belief simulator
(SAD transcripts measured as identity logs: tests/test_bridges.py)."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.config import Config
from mabpd_kit.identity import (
    BeliefSpec,
    Question,
    build_messages,
    disagreement_pairs,
    ibc,
    identity_report,
    identity_summary,
    is_correct,
    majority_accuracy,
    parse_choice,
    parse_number,
    recovered_gap,
    simulate,
    simulate_questions,
    trust_cut,
    trust_rates,
)
from mabpd_kit.identity.debate import _order
from mabpd_kit.identity.measures import _cube


def log_from(table: dict[tuple[str, str], list[str]], gold: dict[str, str]) -> pd.DataFrame:
    """(condition, question) -> one string per round, one letter per agent ('.' = unparsed)."""
    rows = []
    for (cond, q), rounds in table.items():
        for r, answers in enumerate(rounds):
            for a, x in enumerate(answers):
                ans = None if x == "." else x
                rows.append({"condition": cond, "question": q, "agent": a, "round": r, "answer": ans,
                             "correct": ans == gold[q]})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------------------------------------
# measures
# ---------------------------------------------------------------------------------------------


def test_three_agent_pairs_by_hand():
    # Round 0: A A B. Pairs (i, j) with different answers: (0,2), (1,2), (2,0), (2,1).
    # Round 1: A B B -> agent 0 stays (obstinate), agent 1 moves to B (conforms with 2),
    # agent 2 stays B (obstinate towards both 0 and 1).
    logs = log_from({("vanilla", "q"): ["AAB", "ABB"]}, {"q": "A"})
    pairs = disagreement_pairs(logs)
    assert list(zip(pairs["agent"], pairs["peer"])) == [(0, 2), (1, 2), (2, 0), (2, 1)]
    assert pairs["conform"].tolist() == [False, True, False, False]
    assert pairs["obstinate"].tolist() == [True, False, True, True]
    s = identity_summary(logs, ci=False).iloc[0]
    assert (s["n_pairs"], s["conformity"], s["obstinacy"], s["delta"]) == (4, 0.25, 0.75, -0.5)


def test_agent_switching_to_third_option_is_neither():
    logs = log_from({("vanilla", "q"): ["AB", "CC"]}, {"q": "A"})
    s = identity_summary(logs, ci=False).iloc[0]
    # agent 0: A -> C vs peer B: neither; agent 1: B -> C vs peer A: neither
    assert (s["n_pairs"], s["conformity"], s["obstinacy"]) == (2, 0.0, 0.0)


def test_unparsed_answers_are_counted_and_left_out_of_pairs():
    # agent 2 is unparsed in round 0, so it is in no disagreement pair under either reading
    logs = log_from({("vanilla", "q"): ["AB.", "BB."]}, {"q": "A"})
    for mode in ("neither", "drop"):
        s = identity_summary(logs, ci=False, config=Config().replace(**{"identity.unparsed": mode})).iloc[0]
        assert s["n_unparsed"] == 2 and s["n_pairs"] == 2 and s["n_pairs_unparsed"] == 0
        assert (s["conformity"], s["obstinacy"]) == (0.5, 0.5)


# Gold A everywhere; '.' = unparsed; q3 has no round 1 (a debate that stopped early: absent, not unparsed).
UNPARSED_TOY = {
    ("vanilla", "q1"): ["AAB", "A.B"],      # agent 1's current answer is unparsed
    ("vanilla", "q2"): [".AB", "AAB"],      # agent 0 unparsed in round 0: no pair for it
    ("vanilla", "q3"): ["ABA"],
    ("anonymised", "q1"): ["AAB", "ABB"],
    ("anonymised", "q2"): ["AAB", "AAA"],
    ("anonymised", "q3"): ["ABA"],
}


@pytest.mark.parametrize("mode,n_pairs,obstinacy,ibc_value,sub_at_risk", [
    # vanilla pairs: q1 (0,2) stay, (1,2) unparsed, (2,0) stay, (2,1) stay; q2 (1,2) stay, (2,1) stay
    # anonymised: q1 1 conform + 3 stay, q2 2 conform + 2 stay -> Delta = (3 - 5) / 8 = -1/4
    ("neither", 6, 5 / 6, -5 / 6 + 1 / 4, 3),   # the unparsed pair counts, as neither: Delta = -5/6
    ("drop", 5, 1.0, -1.0 + 1 / 4, 2),          # the unparsed pair is dropped: Delta = -1
])
def test_unparsed_current_answer_reading(mode, n_pairs, obstinacy, ibc_value, sub_at_risk):
    logs = log_from(UNPARSED_TOY, {"q1": "A", "q2": "A", "q3": "A"})
    cfg = Config().replace(**{"identity.unparsed": mode})
    s = identity_summary(logs, ci=False, config=cfg).set_index("condition")
    v = s.loc["vanilla"]
    assert (v["n_unparsed"], v["n_pairs"], v["n_pairs_unparsed"], v["unparsed"]) == (2, n_pairs, 1, mode)
    assert (v["conformity"], v["obstinacy"]) == (0.0, pytest.approx(obstinacy))
    assert s.loc["anonymised", "n_unparsed"] == 0 and s.loc["anonymised", "delta"] == -0.25
    res = ibc(logs, ci=False, config=cfg)
    assert res.estimate == pytest.approx(ibc_value) and (res.n_unparsed, res.unparsed) == (2, mode)
    assert "2 unparsed answers" in str(res)
    pairs = disagreement_pairs(logs, config=cfg)
    assert len(pairs) == n_pairs + 8 and pairs["answer"].isna().sum() == n_pairs - 5
    # Subversion: q1 agents 0, 1 and q2 agent 1 were right with a wrong peer; q1 agent 1's unparsed
    # answer is neither event (an exposure under "neither", none under "drop"), never a subversion.
    # Correction: q1 agent 2 (stays wrong), q2 agent 0 (unparsed -> A: corrected) and agent 2.
    t = trust_rates(logs, config=cfg).set_index("condition").loc["vanilla"]
    assert (t["n_unparsed"], t["n_subversion"], t["subversion_at_risk"]) == (2, 0, sub_at_risk)
    assert (t["n_correction"], t["correction_at_risk"]) == (1, 3)
    acc = majority_accuracy(logs).set_index(["condition", "round"])["n_unparsed"]
    assert (acc[("vanilla", 0)], acc[("vanilla", 1)], acc[("anonymised", 1)]) == (1, 1, 0)
    rep = identity_report(logs, ci=False, config=cfg)
    assert rep.ibc.estimate == pytest.approx(ibc_value) and "n_unparsed" in str(rep)


def test_default_reading_is_neither_per_spec():
    logs = log_from(UNPARSED_TOY, {"q1": "A", "q2": "A", "q3": "A"})
    assert Config().identity.unparsed == "neither"
    assert ibc(logs, ci=False).estimate == pytest.approx(-5 / 6 + 1 / 4)
    with pytest.raises(ValueError, match="neither"):
        _cube(logs).pair_masks("keep")  # type: ignore[arg-type]


def test_ibc_and_ci_on_known_logs():
    table, gold = {}, {}
    for k in range(20):
        q = f"q{k}"
        gold[q] = "A"
        table[("vanilla", q)] = ["AAB", "AAA"]      # B conforms: pairs (0,2),(1,2) obstinate; (2,0),(2,1) conform
        table[("anonymised", q)] = ["AAB", "AAB"]   # everyone stays
    logs = log_from(table, gold)
    res = ibc(logs, config=Config().replace(**{"identity.bootstrap": 200}))
    assert res.delta_vanilla == 0.0 and res.delta_anonymised == -1.0
    assert res.estimate == 1.0 and res.lo == 1.0 and res.hi == 1.0  # identical questions: no spread
    assert res.n_questions == 20


def test_ci_brackets_estimate_and_resamples_questions():
    rng = np.random.default_rng(0)
    table, gold = {}, {}
    for k in range(40):
        q = f"q{k}"
        gold[q] = "A"
        table[("vanilla", q)] = ["AAB", "AAA" if rng.random() < 0.7 else "AAB"]
        table[("anonymised", q)] = ["AAB", "AAA" if rng.random() < 0.3 else "AAB"]
    s = identity_summary(log_from(table, gold), config=Config().replace(**{"identity.bootstrap": 300}))
    for _, row in s.iterrows():
        assert row["conformity_lo"] <= row["conformity"] <= row["conformity_hi"]
        assert row["conformity_hi"] - row["conformity_lo"] > 0.05  # real spread between questions


def test_ibc_needs_both_conditions():
    with pytest.raises(ValueError, match="both conditions"):
        ibc(log_from({("vanilla", "q"): ["AB", "AA"]}, {"q": "A"}))


def test_subversion_correction_and_cut():
    gold = {"q1": "A", "q2": "A"}
    logs = log_from({
        # q1: agent 0 right, sees wrong peers, is subverted; agent 2 wrong, sees right peer 0, stays wrong
        ("vanilla", "q1"): ["ABB", "BBB"],
        # q2: agent 1 wrong, sees right peers, corrected
        ("vanilla", "q2"): ["ABA", "AAA"],
        ("anonymised", "q1"): ["ABB", "ABB"],   # no subversion
        ("anonymised", "q2"): ["ABA", "AAA"],   # same correction
    }, gold)
    t = trust_rates(logs).set_index("condition")
    v = t.loc["vanilla"]
    # at risk of subversion: right at t-1 with >= 1 wrong peer -> q1 agent 0; q2 agents 0 and 2
    assert (v["n_subversion"], v["subversion_at_risk"]) == (1, 3)
    # at risk of correction: wrong at t-1 with >= 1 right peer -> q1 agents 1, 2; q2 agent 1
    assert (v["n_correction"], v["correction_at_risk"]) == (1, 3)
    assert t.loc["anonymised", "n_subversion"] == 0
    assert trust_cut(logs) == {"subversion_cut": 1.0, "correction_cut": 0.0}


def test_majority_vote_per_round_with_tie_credit():
    logs = log_from({("vanilla", "q1"): ["ABB", "AAB"], ("vanilla", "q2"): ["AB.", "BBB"]}, {"q1": "A", "q2": "A"})
    acc = majority_accuracy(logs).set_index("round")
    # round 0: q1 majority B (wrong), q2 tie A/B -> 1/2 credit; round 1: q1 A right, q2 B wrong
    assert acc.loc[0, "majority_accuracy"] == pytest.approx(0.25)
    assert acc.loc[1, "majority_accuracy"] == pytest.approx(0.5)
    assert acc.loc[0, "agent_accuracy"] == pytest.approx((1 / 3 + 1 / 3) / 2)


# ---------------------------------------------------------------------------------------------
# parsing
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ("(B)", "B"),
    ("Answer: b", "B"),
    ("**C**", "C"),
    ("The answer is (D).", "D"),
    ("I first thought (A), but on reflection the answer is C.", "C"),
    ("Answer: A\nWait, no.\nFinal answer: **B**", "B"),
    ("c", "C"),
    ("Reasoning...\nD) Hypertension", "D"),
    ("Answer: A patient with this history needs care", None),  # "A" is a word here
    ("I am not sure", None),
    ("", None),
    (None, None),
    ("Answer: E", None),  # not an option
])
def test_parse_choice(text, expected):
    assert parse_choice(text).answer == expected


@pytest.mark.parametrize("text,expected", [
    ("the answer is 42", "42"),
    ("$1,234.50", "1234.5"),
    ("#### 18", "18"),
    ("She pays 3 * 6 = 18 dollars.\n#### 18", "18"),
    ("Answer: -7", "-7"),
    ("So 12 + 30 = 42. The answer is $42.00.", "42"),
    ("\\boxed{96}", "96"),
    ("5 apples and 3 pears make 8", "8"),
    ("no numbers here", None),
    ("1,000,000 people", "1000000"),
])
def test_parse_number(text, expected):
    assert parse_number(text).answer == expected


def test_numeric_correctness_by_value():
    q = Question(id="g", question="?", answer="1234.50", kind="numeric")
    assert is_correct("1234.5", q) and is_correct("1234.50", q) and not is_correct("1234", q)
    assert not is_correct(None, q)


def test_anonymised_order_is_seeded():
    q = Question(id="q", question="?", answer="A", options={"A": "x", "B": "y"})
    prev = [f"reply of agent {k}\nAnswer: A" for k in range(5)]
    a1 = build_messages(q, 2, 1, "anonymised", prev)
    a2 = build_messages(q, 2, 1, "anonymised", prev)
    a3 = build_messages(q, 2, 1, "anonymised", prev, Config().replace(**{"identity.seed": 7}))
    assert a1 == a2
    assert a1 != a3  # another seed, another order (same five replies)
    # the order is _order(seed, question, agent, round): the same for the same seed, another for another
    o0, o7 = _order(0, "q", 2, 1, 5), _order(7, "q", 2, 1, 5)
    assert o0 == _order(0, "q", 2, 1, 5) and sorted(o0) == sorted(o7) == list(range(5))
    assert o0 != o7
    for msgs, order in ((a1, o0), (a3, o7)):  # and the prompt lists the five replies in that order
        content = msgs[1]["content"]
        assert [content.index(f"reply of agent {k}\n") for k in order] == sorted(
            content.index(f"reply of agent {k}\n") for k in range(5))
    with pytest.raises(ValueError, match="needs the 5 replies"):
        build_messages(q, 0, 1, "vanilla", prev[:3])


def test_long_replies_keep_their_final_line():
    q = Question(id="q", question="?", answer="A", options={"A": "x", "B": "y"})
    prev = ["blah " * 2000 + "\nAnswer: B"] * 5
    msg = build_messages(q, 0, 1, "vanilla", prev)[1]["content"]
    assert "[...]" in msg and "Answer: B" in msg and len(msg) < 5 * 2100 + 1000


# ---------------------------------------------------------------------------------------------
# belief simulator
# ---------------------------------------------------------------------------------------------

SEEDS = range(5)


def _ibcs(spec: BeliefSpec, n: int = 300) -> np.ndarray:
    return np.array([ibc(simulate(spec, n_questions=n, seed=s), ci=False).estimate for s in SEEDS])


def test_planted_sycophancy_gives_positive_ibc_and_gap_is_recovered():
    spec = BeliefSpec(w_self=1.0, w_peer=1.5)
    vals = _ibcs(spec)
    assert (vals > 0.03).all(), vals  # clearly positive on every seed
    gaps = [recovered_gap(simulate(spec, 300, s), spec) for s in SEEDS]
    assert np.mean(gaps) == pytest.approx(0.5, abs=0.1)


def test_planted_self_bias_gives_negative_ibc():
    vals = _ibcs(BeliefSpec(w_self=1.5, w_peer=1.0))
    assert (vals < -0.03).all(), vals


def test_ibc_grows_with_the_planted_gap():
    means = [_ibcs(BeliefSpec(w_self=1 - g / 2, w_peer=1 + g / 2)).mean() for g in (0.0, 0.5, 1.0, 1.5)]
    assert all(b > a for a, b in itertools.pairwise(means)), means


def test_equal_weights_give_ibc_near_zero_even_with_independent_runs():
    # paired=False: the two conditions draw independently, like two separate real runs
    for w in (0.5, 1.0, 2.0):
        vals = _ibcs(BeliefSpec(w_self=w, w_peer=w, paired=False))
        assert np.abs(vals).max() < 0.05, (w, vals)


def test_per_agent_weights_and_competence():
    spec = BeliefSpec(w_self=(1, 1, 1, 1, 1), w_peer=(2, 2, 1, 1, 1), competence=(0.9, 0.9, 0.25, 0.25, 0.25))
    logs = simulate(spec, n_questions=400, seed=0)
    r0 = logs[(logs["round"] == 0) & (logs["condition"] == "vanilla")]
    acc = r0.groupby("agent")["correct"].mean()
    assert acc[0] > 0.75 and acc[4] < 0.4  # planted competence shows in round 0
    w, _ = spec.weights("anonymised")
    assert w[0] == pytest.approx((1 + 4 * 2) / 5) and w[4] == pytest.approx(1.0)
    with pytest.raises(ValueError, match="3 values for 5 agents"):
        BeliefSpec(w_self=(1, 1, 1)).per_agent("w_self")


def test_simulator_is_seeded_and_shaped():
    spec = BeliefSpec(n_agents=4, rounds=3)
    a, b = simulate(spec, 50, seed=3), simulate(spec, 50, seed=3)
    pd.testing.assert_frame_equal(a, b)
    assert len(a) == 2 * 50 * 4 * 4 and (a["source"] == "simulator").all()
    assert not simulate(spec, 50, seed=4)["answer"].equals(a["answer"])


def test_simulator_answers_real_questions():
    qs = [Question(id="n1", question="?", answer="18", kind="numeric"),
          Question(id="m1", question="?", answer="C", options={k: k for k in "ABCD"})]
    logs = simulate_questions(qs, BeliefSpec(), seed=0)
    num = logs[logs["question"] == "n1"]
    assert set(num["answer"]) <= {"18", "19", "17", "20"}
    assert (num["correct"] == (num["answer"] == "18")).all()
    mc = logs[logs["question"] == "m1"]
    assert (mc["correct"] == (mc["answer"] == "C")).all()


def test_report_on_simulated_run():
    rep = identity_report(simulate(BeliefSpec(w_self=0.5, w_peer=1.5), 200, seed=1),
                          config=Config().replace(**{"identity.bootstrap": 200}))
    assert rep.ibc is not None and rep.ibc.lo < rep.ibc.estimate < rep.ibc.hi and rep.ibc.lo > 0
    assert set(rep.accuracy["round"]) == {0, 1, 2}
    assert set(rep.cuts) == {"subversion_cut", "correction_cut"}


def test_empty_log_is_a_clear_error():
    empty = pd.DataFrame(columns=["question", "agent", "round", "answer", "correct"])
    with pytest.raises(ValueError, match="no rows"):
        identity_report(empty)
    with pytest.raises(ValueError, match="missing column"):
        identity_summary(empty.drop(columns="correct"))


def test_summary_by_round_splits_the_pairs():
    logs = log_from({("vanilla", "q"): ["AAB", "ABB", "BBB"]}, {"q": "A"})
    s = identity_summary(logs, ci=False, by_round=True).set_index("round")
    # round 1: pairs (0,2),(1,2),(2,0),(2,1) -> 1 conform, 3 obstinate (see the hand test above)
    assert (s.loc[1, "n_pairs"], s.loc[1, "conformity"], s.loc[1, "obstinacy"]) == (4, 0.25, 0.75)
    # round 2 (prev A B B): agent 0 vs 1, 2 -> conforms twice; agents 1, 2 vs 0 -> stay
    assert (s.loc[2, "n_pairs"], s.loc[2, "conformity"], s.loc[2, "obstinacy"]) == (4, 0.5, 0.5)
    total = identity_summary(logs, ci=False).iloc[0]
    assert total["n_pairs"] == 8 and total["conformity"] == pytest.approx(3 / 8)


def test_trust_rate_cis_bracket_the_rate():
    rep = identity_report(simulate(BeliefSpec(w_self=0.5, w_peer=1.5), 150, seed=2),
                          config=Config().replace(**{"identity.bootstrap": 200}))
    for _, r in rep.trust.iterrows():
        for m in ("subversion_rate", "correction_rate"):
            assert r[f"{m}_lo"] < r[m] < r[f"{m}_hi"]
    assert "subversion_rate_lo" not in trust_rates(simulate(BeliefSpec(), 20, seed=0)).columns

"""The ten-LLM label analyses (mabpd_kit.evaluate.llm_labels) on small hand-made tables with known answers."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.evaluate import llm_labels as L
from mabpd_kit.metrics import macro_f1


def _babe(gold, **labels):
    df = pd.DataFrame({"id": [f"s{i}" for i in range(len(gold))], "text": [f"t{i}" for i in range(len(gold))],
                       "label": gold})
    for name, vals in labels.items():
        df[f"{name}_label"] = pd.array(vals, dtype="Int64")
    return df


def test_label_table_keeps_only_sentences_every_model_answered():
    df = _babe([1, 0, 1, 0], a=[1, 0, None, 0], b=[1, 1, 1, 0])
    t = L.label_table(df)
    assert list(t["id"]) == ["s0", "s1", "s3"] and L.models(t) == ["a", "b"] and t.attrs["dropped"] == 1
    assert t["gold"].tolist() == [1, 0, 0]


def test_label_table_without_llm_columns_says_so_in_one_line():
    with pytest.raises(ValueError, match="annomatic file is not on this machine"):
        L.label_table(pd.DataFrame({"id": ["x"], "text": ["t"], "label": [1]}))


def test_majority_vote_and_its_tie_rule():
    t = L.label_table(_babe([1, 1, 0, 0], a=[1, 0, 0, 1], b=[1, 1, 0, 0], c=[0, 1, 1, 0]))
    assert L.majority_vote(t, ["a", "b", "c"]).tolist() == [1, 1, 0, 0]
    # two voters who disagree: the first one named decides
    assert L.majority_vote(t, ["a", "c"]).tolist() == [1, 0, 0, 1]
    assert L.majority_vote(t, ["c", "a"]).tolist() == [0, 1, 1, 0]
    with pytest.raises(ValueError, match="unknown"):
        L.majority_vote(t, ["a", "zz"])


def test_independent_voters_beat_the_best_one_and_correlated_ones_do_not():
    rng = np.random.default_rng(0)
    n = 3000
    gold = rng.integers(0, 2, n)
    # five voters, each wrong on 25% of sentences, independently
    indep = {f"m{i}": np.where(rng.random(n) < 0.25, 1 - gold, gold) for i in range(5)}
    t = L.label_table(_babe(gold, **indep))
    row = L.vote_score(t, list(indep), n_resamples=500, seed=0).set_index("system")
    assert row.loc["vote", "macro_f1"] > row.loc["best single", "macro_f1"] + 0.05
    assert row.loc["vote", "diff_lo"] > 0
    # five voters that copy one another's errors: the vote is the single model
    shared = np.where(rng.random(n) < 0.25, 1 - gold, gold)
    same = {f"m{i}": shared for i in range(5)}
    t2 = L.label_table(_babe(gold, **same))
    row2 = L.vote_score(t2, list(same), n_resamples=500, seed=0).set_index("system")
    assert row2.loc["vote", "macro_f1"] == pytest.approx(row2.loc["best single", "macro_f1"])
    ag = L.agreement(t2)
    assert ag["fleiss_kappa"] == pytest.approx(1.0) and ag["disagree_share"] == 0 and ag["mean_error_phi"] == pytest.approx(1.0)
    assert L.agreement(t)["mean_error_phi"] < 0.05
    assert ag["all_wrong"] == pytest.approx((shared != gold).mean())
    assert L.agreement(t)["independent_all_wrong"] == pytest.approx(np.prod([(v != gold).mean() for v in indep.values()]))


def test_single_scores_are_macro_f1_with_an_interval_best_first():
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 2, 400)
    good, bad = np.where(rng.random(400) < 0.1, 1 - gold, gold), np.where(rng.random(400) < 0.4, 1 - gold, gold)
    s = L.single_scores(L.label_table(_babe(gold, bad=bad, good=good)), n_resamples=300, seed=0)
    assert s["model"].tolist() == ["good", "bad"]
    assert s.loc[0, "macro_f1"] == pytest.approx(macro_f1(gold, good))
    assert (s["lo"] <= s["macro_f1"]).all() and (s["macro_f1"] <= s["hi"]).all() and (s["hi"] - s["lo"] > 0).all()


def test_vote_sizes_choose_voters_on_the_other_fold():
    rng = np.random.default_rng(2)
    n = 2000
    gold = rng.integers(0, 2, n)
    rates = {"a": 0.1, "b": 0.2, "c": 0.3, "d": 0.4}
    cols = {m: np.where(rng.random(n) < r, 1 - gold, gold) for m, r in rates.items()}
    out = L.vote_sizes(L.label_table(_babe(gold, **cols)), sizes=(3, 10), n_resamples=300, seed=0).set_index("system")
    assert list(out.index) == ["vote of 3", "vote of 4", "best single"]  # 10 is capped at the four models there are
    assert out.loc["best single", "voters"] == "a"
    assert out.loc["vote of 3", "voters"] == "a, b, c"
    # the pooled best-single predictions are model a's on every sentence
    assert out.loc["best single", "macro_f1"] == pytest.approx(macro_f1(gold, cols["a"]))
    assert np.isnan(out.loc["best single", "diff"]) and not np.isnan(out.loc["vote of 3", "diff"])


def test_all_wrong_lists_the_sentences_no_model_gets_right():
    t = L.label_table(_babe([1, 0, 1], a=[0, 1, 1], b=[0, 0, 1], c=[0, 1, 0]))
    assert L.all_wrong(t)["id"].tolist() == ["s0"]
    assert L.all_wrong(t, ["a", "c"])["id"].tolist() == ["s0", "s1"]
    corr = L.error_correlation(t)
    assert len(corr) == 9 and corr.query("a == b")["phi"].eq(1).all()


def test_scores_chart_zooms_to_the_intervals_and_colours_by_role():
    import mabpd_kit.viz as viz
    from mabpd_kit.viz.llm_labels import ROLE_COLORS, scores_chart

    rows = pd.DataFrame({"label": ["vote of 3", "a", "b"], "role": ["vote", "best single", "single model"],
                         "macro_f1": [0.86, 0.87, 0.81], "lo": [0.85, 0.86, 0.80], "hi": [0.87, 0.88, 0.82]})
    spec = scores_chart(rows).to_dict()
    x_scale = spec["layer"][0]["encoding"]["x"]["scale"]
    assert x_scale["domain"][0] > 0.7 and x_scale["domain"][1] < 0.95  # not a 0-1 axis: 0.01 differences show
    colour = spec["layer"][1]["encoding"]["color"]["scale"]
    assert dict(zip(colour["domain"], colour["range"])) == {r: ROLE_COLORS[r] for r in ("vote", "best single", "single model")}
    # orange is "yours" (the panel's vote you chose); no role wears blue (neutral), black (wrong) or a system's colour
    assert ROLE_COLORS["your vote"] == viz.OKABE_ITO["orange"] and list(ROLE_COLORS.values()).count(viz.OKABE_ITO["orange"]) == 1
    taken = {viz.OKABE_ITO[k] for k in ("blue", "black", "vermillion", "reddish purple", "bluish green", "sky blue")}
    assert not taken & set(ROLE_COLORS.values())


def test_error_correlation_chart_is_not_blue():
    """Blue means neutral in every lesson: the error-correlation heat map shades in greys."""
    import pandas as pd

    from mabpd_kit.viz.llm_labels import error_correlation_chart

    corr = pd.DataFrame({"a": ["x", "y"], "b": ["y", "x"], "phi": [0.3, 0.3], "both_wrong": [0.1, 0.1]})
    assert error_correlation_chart(corr).to_dict()["layer"][0]["encoding"]["color"]["scale"]["scheme"] == "greys"


def test_vote_caption_names_the_tie_rule_only_when_a_tie_can_happen():
    from mabpd_kit.viz.llm_labels import vote_view

    rng = np.random.default_rng(1)
    gold = rng.integers(0, 2, 60).tolist()
    flip = lambda p: [g if rng.random() > p else 1 - g for g in gold]   # noqa: E731
    t = L.label_table(_babe(gold, a=flip(0.1), b=flip(0.2), c=flip(0.3), d=flip(0.3)))
    _, odd = vote_view(t, ["a", "b", "c"], n_resamples=50, seed=0)
    _, even = vote_view(t, ["a", "b", "c", "d"], n_resamples=50, seed=0)
    assert odd.startswith("your vote of 3: ") and "tie" not in odd
    assert even.startswith("your vote of 4 (a tie would go to a): ")


def test_error_correlation_legend_covers_a_negative_phi():
    """A pair with phi below 0 stays inside the colour legend: the domain starts at min(phi, 0) (review40f, cell 55)."""
    from mabpd_kit.viz.llm_labels import error_correlation_chart

    corr = pd.DataFrame({"a": ["x", "y"], "b": ["y", "x"], "phi": [-0.02, -0.02], "both_wrong": [0.1, 0.1]})
    assert error_correlation_chart(corr).to_dict()["layer"][0]["encoding"]["color"]["scale"]["domain"] == [-0.02, 1]
    corr["phi"] = 0.3
    assert error_correlation_chart(corr).to_dict()["layer"][0]["encoding"]["color"]["scale"]["domain"] == [0.0, 1]

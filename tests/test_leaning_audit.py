"""The bias of the bias detector (issue 38, item 5): error rates by outlet leaning with Wilson intervals,
the kit beside the LLM labels shipped with BABE train, printed by `mabpd evaluate --dataset babe`."""

from __future__ import annotations

import argparse
from types import SimpleNamespace

import pandas as pd
import pytest

from mabpd_kit.cli.evaluate import _leaning_audit
from mabpd_kit.evaluate.audit import leaning_audit, leaning_gaps, wilson


def _frame() -> pd.DataFrame:
    # left: 10 neutral (3 flagged), 4 biased (1 missed); right: 10 neutral (6 flagged), 4 biased (0 missed)
    rows = ([("left", 0, 1)] * 3 + [("left", 0, 0)] * 7 + [("left", 1, 0)] + [("left", 1, 1)] * 3
            + [("right", 0, 1)] * 6 + [("right", 0, 0)] * 4 + [("right", 1, 1)] * 4 + [(None, 0, 1)] * 5)
    df = pd.DataFrame(rows, columns=["type", "label", "pred"])
    df["gpt_4_label"] = pd.array([0] * (len(df) - 2) + [None, 1], dtype="Int64")
    return df


def test_wilson_matches_the_published_intervals():
    lo, hi = wilson(0, 10)
    assert lo == pytest.approx(0.0, abs=1e-12) and hi == pytest.approx(0.2775, abs=1e-4)  # Newcombe (1998), table I
    lo, hi = wilson(5, 10)
    assert (lo, hi) == (pytest.approx(0.2366, abs=1e-4), pytest.approx(0.7634, abs=1e-4))
    assert all(v != v for v in wilson(0, 0))  # no items: NaN, not an error


def test_rates_by_group_count_the_right_items():
    a = leaning_audit(_frame(), groups=("left", "right"))
    kit = a[a["system"] == "kit"].set_index("group")
    assert kit.loc["left", ["n_neutral", "fp", "n_biased", "fn"]].tolist() == [10, 3, 4, 1]
    assert kit.loc["right", ["fpr", "fnr"]].tolist() == [0.6, 0.0]
    assert (kit["fpr_lo"] <= kit["fpr"]).all() and (kit["fpr"] <= kit["fpr_hi"]).all()
    assert kit["n_missing"].sum() == 0  # rows without a leaning are in no group
    gpt = a[a["system"] == "gpt_4"].set_index("group")
    assert gpt.loc["right", "n_missing"] == 0 and gpt.loc["left", "n_missing"] == 0
    assert a.attrs == {"confidence": 0.95, "group": "type", "interval": "Wilson"}


def test_a_missing_answer_is_left_out_and_counted():
    df = _frame().iloc[:14].copy()  # the left rows only
    df["gpt_4_label"] = pd.array([None, None] + [0] * 12, dtype="Int64")  # two flagged neutrals unanswered
    g = leaning_audit(df, systems=["gpt_4_label"], groups=("left",)).iloc[0]
    assert (g["n_missing"], g["n_neutral"], g["fp"]) == (2, 8, 0)


def test_newcombe_difference_matches_the_published_example():
    # Newcombe (1998), method 10: 56/70 - 48/80 = 0.2000 [0.0524, 0.3339]
    audit = pd.DataFrame([{"system": "x", "group": "right", "fp": 56, "n_neutral": 70, "fn": 0, "n_biased": 5},
                          {"system": "x", "group": "left", "fp": 48, "n_neutral": 80, "fn": 0, "n_biased": 5}])
    g = leaning_gaps(audit).iloc[0]
    assert g["fpr_diff"] == pytest.approx(0.2) and g["fpr_diff_lo"] == pytest.approx(0.0524, abs=1e-4)
    assert g["fpr_diff_hi"] == pytest.approx(0.3339, abs=1e-4)


def test_bad_columns_are_one_line_errors():
    with pytest.raises(ValueError, match="no column 'outlet_leaning'"):
        leaning_audit(_frame(), group="outlet_leaning")
    with pytest.raises(ValueError, match="no prediction columns \\['mine'\\]"):
        leaning_audit(_frame(), systems=["mine"])


def test_evaluate_prints_the_audit_table(tmp_path, capsys):
    pred = _frame().rename(columns={"label": "gold"}).assign(system="full", id=lambda d: [f"i{k}" for k in range(len(d))])
    ev = SimpleNamespace(predictions=pred, baseline="full")
    _leaning_audit(ev, "babe", argparse.Namespace(no_anchors=True, split="train"), tmp_path)
    out = capsys.readouterr().out
    line = next(ln for ln in out.splitlines() if ln.strip().startswith("kit "))
    assert "0.300 [" in line and "0.600 [" in line and "+0.300 [" in line  # left FPR, right FPR, the gap
    assert pd.read_csv(tmp_path / "leaning_audit.csv")["system"].tolist() == ["kit"] * 3
    _leaning_audit(ev, "hyperpartisan", argparse.Namespace(no_anchors=True, split="train"), tmp_path / "x")
    assert capsys.readouterr().out == ""  # only BABE has outlet leanings


@pytest.mark.shared_data
def test_the_shipped_gpt4_labels_flag_right_leaning_neutral_sentences_more(data_dir):
    from mabpd_kit.data import load_babe

    b = load_babe("train", data_dir=data_dir, download=False)
    if "gpt_4_label" not in b:
        pytest.skip("the annomatic file with the LLM labels is not in the data folder")
    g = leaning_audit(b, systems=["gpt_4_label"]).set_index("group")
    assert (g.loc["left", "fp"], g.loc["left", "n_neutral"]) == (20, 193)  # 0.104
    assert (g.loc["right", "fp"], g.loc["right", "n_neutral"]) == (30, 195)  # 0.154
    assert leaning_audit(b, systems=["gpt_4_label"])["n_missing"].sum() == 14

"""mk.viz.table: what a student reads in a lesson's table (no index, fixed decimals, words for labels)."""

import math

import numpy as np
import pandas as pd

from mabpd_kit import viz


def _frame():
    return pd.DataFrame({"id": ["s1", "s2", "s3"], "gold": [1, 0, 1], "pred": [1.0, 0.0, np.nan],
                         "recall": [0.8, 0.888888, 1.0], "n": [20.0, 19.0, 3.0], "ok": [True, False, True],
                         "spans": [["so-called", "slammed"], [], ("a",)],
                         "text": ["A " + "long sentence " * 20, "<b>not html</b>", None]})


def test_values_are_formatted_not_changed():
    t = viz.table(_frame(), labels=("gold", "pred"), decimals=3)
    f = t.frame
    assert list(f["gold"]) == ["biased", "neutral", "biased"] and list(f["pred"]) == ["biased", "neutral", "-"]
    assert list(f["recall"]) == ["0.800", "0.889", "1.000"]  # one number of places in a column
    assert list(f["n"]) == ["20", "19", "3"]  # counts stored as floats print as counts
    assert list(f["ok"]) == ["yes", "no", "yes"] and list(f["spans"]) == ["so-called, slammed", "", "a"]
    assert f["text"][0].endswith("sentence ") and f["text"][2] == "-"  # never cut
    assert t.numeric == ("recall", "n") and len(t) == 3


def test_html_has_no_index_escapes_text_and_wraps_it():
    t = viz.table(_frame(), columns=["id", "recall", "text"], rename={"recall": "recall (share)"}, caption="n = 3")
    out = t._repr_html_()
    assert "<b>not html</b>" not in out and "&lt;b&gt;not html&lt;/b&gt;" in out
    assert "recall (share)" in out and "white-space:normal" in out and "n = 3" in out
    assert out.count("<tr>") == 4 and ">0<" not in out  # a header and three rows, no 0..n index column
    assert repr(t).splitlines()[0].split() == ["id", "recall", "(share)", "text"]


def test_empty_and_numpy_scalars():
    assert "(no columns)" in repr(viz.table(pd.DataFrame()))
    t = viz.table(pd.DataFrame({"x": [np.float32(0.5), np.int64(2)], "y": [math.inf, -0.0]}), decimals=2)
    assert list(t.frame["x"]) == ["0.50", "2.00"] and t.frame["y"][0] == "inf"


def test_decimals_per_column_keep_whole_numbers_as_decimals():
    f = pd.DataFrame({"share (%)": [47.0, 12.0], "n": [3.0, 4.0], "r": [0.1234, 0.5]})
    t = viz.table(f, decimals={"share (%)": 1})
    assert list(t.frame["share (%)"]) == ["47.0", "12.0"] and list(t.frame["n"]) == ["3", "4"]
    assert list(t.frame["r"]) == ["0.123", "0.500"]


def test_pandas_missing_values_read_as_a_dash():
    t = viz.table(pd.DataFrame({"n": pd.array([3, None], dtype="Int64"), "when": [pd.NaT, pd.Timestamp("2026-01-02")]}))
    assert list(t.frame["n"]) == ["3", "-"] and t.frame["when"][0] == "-"

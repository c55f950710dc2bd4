"""Issue 21, smaller: free-text dates print no pandas warning; gold labels written as "1.0" adapt."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.config import CorpusConfig
from mabpd_kit.corpus.groups import month, trend
from mabpd_kit.corpus.threshold import adapt, compare_rules, gold_labels

ST = CorpusConfig(seed=3, adapt_resamples=50)


def test_free_text_dates_print_no_warning_and_stay_non_dates():
    values = ["last Tuesday", "2017-01-05", "2017-02-03T10:00:00Z", "n/a", "sometime in spring", "Mar 6, 2017"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # pandas' "Could not infer format ..." would raise here
        got = month(values)
    assert [None if pd.isna(v) else v for v in got] == [None, "2017-01", "2017-02", None, None, "2017-03"]
    assert int(got.isna().sum()) == 3  # the non-dates, counted as before


def test_trend_with_free_text_dates_is_quiet():
    df = pd.DataFrame({"published_at": ["not a date", "2017-01-02", "2017-01-20", "2017-02-01", "unknown"],
                       "pred": [1, 1, 0, 1, 0]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        tr = trend(df, "published_at", settings=ST)
    assert tr["month"].tolist() == ["2017-01", "2017-02"] and tr["n"].tolist() == [2, 1]


def _labelled(n: int = 60, seed: int = 1) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    y = np.array([0, 1] * (n // 2))
    x = np.where(y == 1, rng.normal(14, 3, n), rng.normal(6, 3, n)).round()
    return pd.DataFrame({"n_biased": x, "label": y, "n_words": rng.normal(500, 50, n)})


@pytest.mark.parametrize("one,zero", [("1", "0"), (1, 0), (1.0, 0.0), ("1.0", "0.0"), (True, False),
                                      (np.int64(1), np.int64(0)), (" 1 ", "0.00")])
def test_adapt_accepts_every_way_of_writing_a_label(one, zero):
    df = _labelled()
    ref = adapt(df, settings=ST)
    written = df.assign(label=pd.Series([one if v else zero for v in df["label"]], dtype=object))
    assert adapt(written, settings=ST) == ref


def test_adapt_accepts_a_mix_and_leaves_missing_labels_out():
    df = _labelled()
    forms = ["1", 1, 1.0, "1.0", True]
    zeros = ["0", 0, 0.0, "0.0", False]
    mixed = [forms[k % 5] if v else zeros[k % 5] for k, v in enumerate(df["label"])]
    ref = adapt(df, settings=ST)
    assert adapt(df.assign(label=pd.Series(mixed, dtype=object)), settings=ST) == ref
    with_gaps = pd.concat([df.assign(label=pd.Series(mixed, dtype=object)),
                           pd.DataFrame({"n_biased": [3.0, 4.0, 5.0], "label": [None, "", np.nan], "n_words": 500.0})],
                          ignore_index=True)
    assert adapt(with_gaps, settings=ST).n == len(df)
    assert gold_labels(pd.Series(forms + zeros + [None])).tolist() == [1] * 5 + [0] * 5 + [pd.NA]


@pytest.mark.parametrize("bad", ["biased", 2, 0.5, "yes", "1.5", -1])
def test_adapt_refuses_anything_else_in_one_line_naming_the_value(bad):
    df = _labelled()
    labels = df["label"].astype(object)
    labels.iloc[7] = bad
    with pytest.raises(ValueError) as err:
        adapt(df.assign(label=labels), settings=ST)
    msg = str(err.value)
    assert "\n" not in msg and repr(bad) in msg and "'label'" in msg


def test_compare_rules_reads_labels_written_as_text():
    df = _labelled().assign(share_biased=lambda d: d["n_biased"] / 20)
    ref = compare_rules(df, ("n_biased", "share_biased"), settings=ST)
    text = compare_rules(df.assign(label=df["label"].map({1: "1.0", 0: "0.0"})), ("n_biased", "share_biased"),
                         settings=ST)
    assert text.equals(ref)

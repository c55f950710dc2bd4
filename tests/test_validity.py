"""The validity check of the corrected share (issue 38, item 6): leave-one-outlet-out, no outlet's own
labels correct it; the shipped error rates are what the fit gives at HEAD (a stale artefact fails)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.evaluate.validity import (
    fit_sentence_error_rates,
    prevalence_validity,
    validity_note,
    validity_summary,
)

ARTEFACT = Path(__file__).resolve().parents[1] / "mabpd_kit" / "resources" / "fits" / "sentence_error_rates.json"


def _outlets(shares: dict[str, float], n: int = 300, seed: int = 0, fpr: dict[str, float] | None = None) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    rows = []
    for g, pi in shares.items():
        f0 = (fpr or {}).get(g, 0.2)
        for _ in range(n):
            y = int(rng.random() < pi)
            flag = int(rng.random() < (0.8 if y else f0))
            rows.append({"outlet": g, "label": y, "flag": flag, "score": rng.uniform(0.6, 0.95) if flag else 0.0})
    return pd.DataFrame(rows)


def test_leave_one_outlet_out_covers_outlets_that_share_the_detectors_error_rates():
    df = _outlets({"a": 0.1, "b": 0.3, "c": 0.5, "d": 0.7, "e": 0.9, "tiny": 0.5}, seed=1)
    df = df[(df["outlet"] != "tiny") | (df.index % 10 == 0)]  # 30 sentences: below min_n, left out
    table = prevalence_validity(df, min_n=50, draws=400)
    assert table["outlet"].tolist() == ["a", "b", "c", "d", "e"]
    s = validity_summary(table)
    assert s["covered"] == 5 and s["spearman"] == pytest.approx(1.0)
    assert s["mae"] < s["mae_cc"]  # classify-and-count squeezes 0.1 and 0.9 towards the middle
    note = validity_note(table)
    assert "covered 5/5" in note and note.count("\n") == 6


def test_the_intervals_hold_the_true_share_at_about_their_nominal_rate():
    held = []
    for seed in range(8):  # 8 replications x 5 outlets, error rates shared by every outlet
        df = _outlets({"a": 0.2, "b": 0.5, "c": 0.8, "d": 0.35, "e": 0.65}, seed=100 + seed)
        held += prevalence_validity(df, draws=300)["covered"].tolist()
    assert sum(held) >= 0.85 * len(held)  # 95% intervals (0.97 over 30 replications)


def test_an_outlet_whose_own_labels_would_correct_it_is_not_corrected_by_them():
    # outlet "odd": its detector flags neutral sentences far more often; only its own labels would show it
    df = _outlets({"a": 0.3, "b": 0.5, "c": 0.7, "odd": 0.3}, seed=2, fpr={"odd": 0.6})
    row = prevalence_validity(df, min_n=50, draws=400, spread=False).set_index("outlet").loc["odd"]
    assert row["estimate"] > 0.5 and not row["covered"]  # the check reports the miss, it does not hide it


def test_an_interval_wider_than_the_limit_is_a_miss():
    df = _outlets({"a": 0.3, "b": 0.5, "c": 0.7}, n=60, seed=3)
    t = prevalence_validity(df, min_n=50, draws=400, max_width=0.05)
    assert not t["covered"].any() and (t["width"] > 0.05).all()


def test_bad_input_is_one_line():
    with pytest.raises(ValueError, match="needs columns"):
        prevalence_validity(pd.DataFrame({"outlet": ["a"], "label": [1]}))


def test_a_stale_artefact_is_told_from_a_fresh_one():
    from mabpd_kit import fits

    shipped = fits.load("sentence_error_rates")
    df = _outlets({"a": 0.2, "b": 0.5, "c": 0.8}, seed=4)
    method, values = fit_sentence_error_rates(df)
    fresh = shipped.model_copy(update={"values": fits._plain(values)})
    assert values["validity"]["groups"] == 3
    assert any("biased" in d for d in fits.compare(shipped, fresh))  # other sentences, other rates: stale


def test_the_evaluate_section_reads_one_systems_decisions():
    from mabpd_kit.evaluate.validity import validity_section

    df = _outlets({"a": 0.2, "b": 0.5, "c": 0.8}, seed=5)
    pred = df.rename(columns={"label": "gold", "flag": "pred"}).assign(system="full", failed=False)
    other = pred.assign(system="single-agent", pred=1)
    text = validity_section(pd.concat([pred, other]), "full")
    assert text.startswith("Validity of the corrected share") and re.search(r"covered [0-3]/3, Spearman", text)
    assert text.count("\n") == 5  # heading, header, 3 outlets, summary
    assert "not run" in validity_section(pred[pred["outlet"] == "a"], "full")
    assert "lack" in validity_section(pred.drop(columns="score"), "full")

"""evaluate.compare is generic: any method's runs.Results (or its frame) with id/gold/pred/failed columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from pydantic import BaseModel

from mabpd_kit import evaluate, metrics
from mabpd_kit.runs import Item, Results, run
from mabpd_kit.types import Usage


class Guess(BaseModel):
    """A toy method's record: the runner's fields plus gold and pred."""

    id: str
    gold: int | str | None = None
    pred: int | str | None = None
    failed: bool = False
    error: str | None = None
    usage: Usage = Usage()

    def row(self) -> dict:
        return {"id": self.id, "gold": self.gold, "pred": self.pred, "failed": self.failed}


def _results(gold, pred, calls=1, fail_ids=()):
    async def step(item):
        if item.id in fail_ids:
            raise RuntimeError("endpoint down")
        g, p = item.data
        return Guess(id=item.id, gold=g, pred=p, usage=Usage(calls=calls, prompt_tokens=10 * calls))

    items = [Item(f"q{i}", (g, p)) for i, (g, p) in enumerate(zip(gold, pred))]
    return run(items, step, record=Guess, fail=lambda it, exc: Guess(id=it.id, gold=it.data[0], failed=True, error=str(exc)))


def test_compare_scores_any_results_and_reads_usage_from_records():
    rng = np.random.default_rng(1)
    gold = rng.integers(0, 2, 80).tolist()
    a = [g if rng.random() < 0.8 else 1 - g for g in gold]
    b = [g if rng.random() < 0.6 else 1 - g for g in gold]
    ra, rb = _results(gold, a, calls=2, fail_ids={"q3"}), _results(gold, b, calls=0)
    assert isinstance(ra, Results)
    ev = evaluate.compare({"a": ra, "b": rb}, dataset="toy", split="dev", n_resamples=200, seed=0)
    m = ev.metrics.set_index("system")
    pred_a = np.where(np.arange(80) == 3, 0, a)  # the failed item counts as 0
    assert m.loc["a", "macro_f1"] == pytest.approx(metrics.macro_f1(gold, pred_a))
    assert m.loc["b", "macro_f1"] == pytest.approx(metrics.macro_f1(gold, b))
    assert m.loc["a", "n_failed"] == 1 and m.loc["a", "calls"] == 2 * 79 and m.loc["a", "tokens"] == 20 * 79
    assert m.loc["b", "calls"] == 0 and (m["kind"] == "system").all()
    cmp = ev.comparisons.set_index("metric")
    assert set(cmp.index) == {"macro_f1", "f1"}
    assert cmp.loc["macro_f1", "diff"] == pytest.approx(m.loc["a", "macro_f1"] - m.loc["b", "macro_f1"])
    assert cmp.loc["f1", "fn_rescued"] == evaluate.flip_counts(gold, pred_a, b)["fn_rescued"]
    assert "a - b: macro F1 diff" in ev.closing_note() and "rescues" in ev.closing_note()


def test_compare_three_way_labels():
    rng = np.random.default_rng(2)
    labels = np.array(["TRUE", "HALF-TRUE", "FALSE"])
    gold = rng.choice(labels, 60).tolist()
    a = [g if rng.random() < 0.7 else str(rng.choice(labels)) for g in gold]
    b = [g if rng.random() < 0.5 else str(rng.choice(labels)) for g in gold]
    fa = pd.DataFrame({"id": [f"c{i}" for i in range(60)], "gold": gold, "pred": a, "failed": False})
    fb = fa.assign(pred=b)
    fb.loc[0, ["pred", "failed"]] = [None, True]
    ev = evaluate.compare({"a": fa, "b": fb}, n_resamples=100, failed_as="FALSE", kind="radar")
    m = ev.metrics.set_index("system")
    assert m.loc["a", "accuracy"] == pytest.approx(metrics.accuracy(gold, a))
    assert m.loc["b", "macro_f1"] == pytest.approx(metrics.macro_f1(gold, ["FALSE"] + b[1:]))
    assert np.isnan(m.loc["a", "f1"]) and m.loc["b", "n_failed"] == 1
    assert ev.comparisons["metric"].tolist() == ["macro_f1"] and ev.comparisons["fn_rescued"].isna().all()
    note = ev.closing_note()
    assert "a - b: macro F1 diff" in note and "rescues" not in note


def test_predictions_follow_the_items_and_refuse_missing_ones():
    f = pd.DataFrame({"id": ["2", "0", "1"], "pred": [1, 0, 1], "failed": [False, False, True], "calls": [3, 1, 2]})
    items = pd.DataFrame({"id": [0, 1, 2], "label": [0, 1, 1], "text": ["a", "b", "c"], "outlet": ["x", "y", "z"]})
    p = evaluate.predictions(f, "s", items=items)
    assert p["id"].tolist() == ["0", "1", "2"] and p["gold"].tolist() == [0, 1, 1]
    assert p["pred"].tolist() == [0, 0, 1]  # id 1 failed: neutral
    assert p["calls"].tolist() == [1, 2, 3] and p["latency_s"].tolist() == [0, 0, 0]
    assert p["text"].tolist() == ["a", "b", "c"] and p["outlet"].tolist() == ["x", "y", "z"]
    with pytest.raises(ValueError, match="lack 1 items"):
        evaluate.predictions(f.iloc[:2], "s", items=items)
    with pytest.raises(ValueError, match="no gold column"):
        evaluate.predictions(f, "s")
    with pytest.raises(ValueError, match="same items"):
        evaluate.compare({"a": f.assign(gold=1), "b": f.iloc[:2].assign(gold=1)})

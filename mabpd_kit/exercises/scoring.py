"""Exercises 03 and 05 (first parts): the stored decisions decided again under other settings inside the check,
so the notebook's check cell shows no recipe to copy."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from mabpd_kit.exercises._common import _close, _macro_f1, _prec, _rec


def _near(a: Any, b: float, tol: float) -> bool:
    try:
        return abs(float(a) - b) <= tol
    except (TypeError, ValueError):
        return False


def _preds(base: Any, config: Any, llm: Any = None) -> list[int]:
    from mabpd_kit.mabpd import Pipeline
    return [d.pred for d in Pipeline(config, llm=llm).redecide_many(base)]


def check_ablation_recall(base: Any, gold: Sequence[int], config: Any, prediction: Any, recall: Mapping[str, Any],
                          worst: Any, llm: Any = None) -> str:
    """Exercise 05-1: the recall of the biased class under every ablation, and the ablation with the lowest."""
    names = list(type(config).ABLATIONS)
    assert prediction in names, f"my_prediction must be one of {names}."
    assert set(recall) == set(names), "recall_by_ablation needs one entry per ablation in mk.Config.ABLATIONS."
    gold = [int(g) for g in gold]
    preds = {name: _preds(base, config.ablation(name), llm) for name in names}
    truth = {name: _rec(gold, p) for name, p in preds.items()}
    for name, value in truth.items():
        if _close(recall[name], value):
            continue
        assert not _close(recall[name], _prec(gold, preds[name])), (
            f"recall_by_ablation[{name!r}] is that configuration's precision: mk.metrics.recall takes the gold labels "
            "first and the predictions second.")
        raise AssertionError(f"recall_by_ablation[{name!r}] is not that configuration's recall of the biased class.")
    lowest = min(truth.values())
    assert worst in [n for n, v in truth.items() if _close(v, lowest)], (
        f"worst_for_recall = {worst!r} does not have the lowest recall: take the key of the smallest value.")
    verdict = "right" if prediction == worst else f"not right: it was {worst}"
    return f"Correct measurement. Your prediction ({prediction}) was {verdict}."


def check_single_agent(base: Any, gold: Sequence[int], config: Any, f1: Mapping[str, Any], strongest: Any,
                       llm: Any = None) -> str:
    """Exercise 03-1: macro F1 of the no-debate pipeline with all the weight on one agent, and the best agent."""
    agents = list(config.scoring.weights)
    assert set(f1) == set(agents), f"single_agent_f1 needs the keys {agents}."
    gold = [int(g) for g in gold]
    expected = {}
    for agent in agents:
        one = config.ablation("no-debate").replace(**{f"scoring.w_{a}": float(a == agent) for a in agents})
        expected[agent] = _macro_f1(gold, _preds(base, one, llm))
    for agent, value in expected.items():
        if _near(f1[agent], value, 0.0005 + 1e-12):     # rounded to 3 decimals (or not at all): the same answer
            continue
        assert not _near(f1[agent], value, 0.005 + 1e-12), (
            f"single_agent_f1[{agent!r}] = {f1[agent]} is {value:.4f} rounded too coarsely: store the unrounded value "
            "(or round to 3 decimals).")
        raise AssertionError(f"single_agent_f1[{agent!r}] is not the macro F1 of that agent alone: give it all the "
                             "weight and the other two none.")
    best = max(expected.values())
    assert strongest in [a for a, v in expected.items() if _close(v, best)], (
        f"strongest = {strongest!r} is not the agent with the highest macro F1 in single_agent_f1.")
    return "Correct: " + ", ".join(f"{a} {v:.3f}" for a, v in expected.items()) + f" -> {strongest}"

"""Exercise 05: the verifier's trade on simulated decisions, the one-way rule in words, and a trace read."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from mabpd_kit.exercises._common import _candidates, _close, _prec, _rec

STEPS = ("router", "debate", "verifier")


def _ref_step(d: Any) -> str:
    if d.verifier is not None and d.verifier.overturned:
        return "verifier"
    return "debate" if d.debate is not None else "router"


def _trade(sim: Any, other: str) -> tuple[float, float]:
    full, base = sim["full"].decisions, sim[other].decisions
    y = [d.gold for d in full]
    pf, pb = [d.pred for d in full], [d.pred for d in base]
    return _prec(y, pf) - _prec(y, pb), _rec(y, pb) - _rec(y, pf)


def verifier_data(seed: int = 0, n_items: int = 200) -> Any:
    """Simulated decisions under ``full``, ``no-verifier`` and ``no-debate``, chosen so that a sign error, the wrong
    configuration or checking the route before the verifier changes the answer."""
    from mabpd_kit.mabpd.simulator import SimSpec, simulate
    spec = SimSpec(hallucination=0.2, quotation_share=0.4)
    for s in _candidates(seed):
        sim = simulate(spec, n_items=n_items, seed=s, configs=("full", "no-verifier", "no-debate"))
        gain, cost = _trade(sim, "no-verifier")
        other = _trade(sim, "no-debate")
        wrong = [d for d in sim["full"].decisions if d.pred != d.gold]
        steps = {_ref_step(d) for d in wrong}
        # a debated item the verifier overturned wrongly: blaming the debate before asking the verifier then fails
        debated_then_overturned = any(d.debate is not None and _ref_step(d) == "verifier" for d in wrong)
        if abs(gain) > 0.005 and cost > 0.005 and abs(other[0] - gain) > 0.005 and abs(other[1] - cost) > 0.005 \
                and abs(gain - cost) > 0.005 and steps == set(STEPS) and debated_then_overturned:
            sim.seed = s
            return sim
    raise RuntimeError(f"no discriminating verifier data near seed {seed}")  # pragma: no cover


def check_verifier_trade(sim: Any, gain: Any, cost: Any) -> str:
    """Exercise 05-2: precision(full) - precision(no-verifier) and recall(no-verifier) - recall(full)."""
    assert gain is not None and cost is not None, "Compute both verifier_precision_gain and verifier_recall_cost."
    g, c = _trade(sim, "no-verifier")
    og, oc = _trade(sim, "no-debate")
    if _close(gain, og) or _close(cost, oc):
        raise AssertionError("You compared full with another configuration: the verifier's trade is full against no-verifier.")
    assert not (_close(gain, 100 * g) or _close(cost, 100 * c)), (
        "Your numbers are in percentage points (x 100): give each as a fraction between 0 and 1, as precision and "
        "recall return them (e.g. 0.025, not 2.5).")
    assert not _close(gain, -g), "verifier_precision_gain has the wrong sign: it is precision(full) minus precision(no-verifier)."
    assert not _close(cost, -c), "verifier_recall_cost has the wrong sign: it is recall(no-verifier) minus recall(full)."
    assert not (_close(gain, c) and _close(cost, g)), "You swapped the two numbers: the gain is in precision, the cost in recall."
    assert _close(gain, g), ("verifier_precision_gain is not precision(full) - precision(no-verifier) on these decisions: "
                             "precision and recall take (gold, predictions), gold first.")
    assert _close(cost, c), ("verifier_recall_cost is not recall(no-verifier) - recall(full): gold first, and the order is "
                             "the other way round from the precision gain.")
    return f"Correct: the verifier gains {g:+.3f} precision for {c:.3f} recall on these {len(sim['full'].decisions)} decisions."


_DIRECTION = re.compile(r"\b(biased|neutral)\b(?:\W+\w+){0,3}?\W+(?:to|into|->|→|becomes?)\W+(?:\w+\W+){0,2}?(biased|neutral)\b")
_NEGATION = re.compile(r"\b(never|not|cannot|can't|no|nor)\b")


def _directions(text: str) -> set[str]:
    """'b>n' / 'n>b' for each change of label the text asserts the verifier can make (negations flipped)."""
    out: set[str] = set()
    for sentence in re.split(r"(?<=[.;!?])\s+|,\s*(?:but|while|whereas)\s+", text.lower()):
        for m in _DIRECTION.finditer(sentence):
            frm, to = m.group(1), m.group(2)
            if frm == to:
                continue
            said = "b>n" if frm == "biased" else "n>b"
            before = sentence[max(0, m.start() - 40): m.start()] + sentence[m.start(): m.end()]
            negated = bool(_NEGATION.search(before.split(",")[-1]))
            out.add(said if not negated else ("n>b" if said == "b>n" else "b>n"))
    return out


def check_recall_reason(text: Any) -> str:
    """Exercise 05-3: a free-text answer states the one-way rule (biased -> neutral only), not its reverse."""
    text = text if isinstance(text, str) else ""
    assert len(text.split()) >= 10, ("Write one or two sentences: which way can the verifier change a label, and what does "
                                     "that imply for the true positives of full compared with no-verifier?")
    said = _directions(text)
    assert "n>b" not in said, ("Your answer has the verifier turning neutral into biased (or not biased into neutral): "
                               "that is the reverse of the one-way rule in lesson 05's verifier section.")
    assert "b>n" in said, ("Say explicitly which way the verifier may change a label, from which label to which "
                           "(e.g. 'it can only turn X into Y'), and why that bounds recall.")
    return "Correct: the one-way rule (biased to neutral only) is what makes the recall cost never negative."


def check_blame(sim: Any, which_step: Callable[[Any], str]) -> str:
    """Exercise 05-4: for every wrong decision of ``full``, the step whose output became the wrong label."""
    wrong = [d for d in sim["full"].decisions if d.pred != d.gold]
    misses: dict[str, list[str]] = {}
    for d in wrong:
        got, want = which_step(d), _ref_step(d)
        assert got in STEPS, f"which_step must return one of {STEPS}, not {got!r} (decision {d.id})."
        if got != want:
            misses.setdefault(f"{want} blamed as {got}", []).append(d.id)
    if misses:
        worst = max(misses, key=lambda k: len(misses[k]))
        ids = misses[worst]
        raise AssertionError(f"{sum(map(len, misses.values()))} of {len(wrong)} wrong decisions blamed on the wrong step; "
                             f"e.g. {ids[0]} ({len(ids)} like it: {worst.split(' blamed')[0]} decided, you said "
                             f"{worst.split('as ')[1]}). Read its trace: route, debate, pre_verifier_label, verifier.")
    counts = {s: sum(_ref_step(d) == s for d in wrong) for s in STEPS}
    return f"Correct: of {len(wrong)} wrong labels, " + ", ".join(f"{n} made by the {s}" for s, n in counts.items()) + "."

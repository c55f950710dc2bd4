"""Exercise 06: disagreement pairs counted on the student's own log (every plausible miscount gives other
numbers), and why anonymisation can cut subversion more than correction."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from mabpd_kit.exercises._common import _candidates, _close

N_AGENTS = 4
#: exercise 2's multiple choice: why can anonymisation cut subversion more than correction? (one right answer, "B")
REASONS = {
    "A": "Anonymisation removes the identity weight, so every agent follows the content and is talked out of a "
         "right answer less often.",
    "B": "The usually-right agents defer to their peers: anonymised, their own (mostly right) answer weighs as much "
         "as any, so fewer are talked out of it; the usually-wrong agents stick to their own: anonymised, they "
         "listen more to their (mostly right) peers, so correction is cut less or even rises.",
    "C": "The usually-right agents stick to their own answers and the usually-wrong ones defer, so anonymisation "
         "makes the right agents listen more and the wrong ones less.",
    "D": "Anonymisation hides which agent is competent, so no agent can find the best answer and correction falls.",
}
REASON = "B"


def _counts(r0: Sequence[str], r1: Sequence[str], peer_now: bool = False) -> tuple[int, int, int]:
    """(pairs, conforming, obstinate) over the disagreement pairs of round 1, by plain loops."""
    n = conform = stay = 0
    for i in range(len(r0)):
        for j in range(len(r0)):
            if i == j or r0[i] == r0[j]:
                continue
            n += 1
            conform += r1[i] == (r1[j] if peer_now else r0[j])
            stay += r1[i] == r0[i]
    return n, conform, stay


def _variants(r0: str, r1: str) -> dict[str, tuple[float, float]]:
    n, c, o = _counts(r0, r1)
    _, c_now, _ = _counts(r0, r1, peer_now=True)
    everyone = len(r0) * (len(r0) - 1)
    return {"right": (c / n, o / n), "conformity and obstinacy swapped": (o / n, c / n),
            f"all {everyone} ordered pairs as the denominator, not only the {n} disagreeing ones": (c / everyone, o / everyone),
            "the peer's round-1 answer instead of its round-0 answer": (c_now / n, o / n)}


def pairs_log(seed: int = 0) -> tuple[str, str]:
    """The student's round-0 and round-1 answers of four agents (e.g. ``("CCAB", "CAAA")``)."""
    import numpy as np
    for cand in _candidates(seed, tries=400):
        rng = np.random.default_rng(cand)
        r0, r1 = ("".join(rng.choice(list("ABC"), N_AGENTS)) for _ in range(2))
        n, c, o = _counts(r0, r1)
        if not 6 <= n < N_AGENTS * (N_AGENTS - 1) or not c or not o or c == o:
            continue
        got = list(_variants(r0, r1).values())
        if all(abs(a[0] - b[0]) + abs(a[1] - b[1]) > 1e-9 for k, a in enumerate(got) for b in got[k + 1:]):
            return r0, r1
    raise RuntimeError(f"no discriminating log for seed {seed}")   # never seen: 400 candidates


def check_pairs(log: tuple[str, str], conformity: Any, obstinacy: Any) -> str:
    """Conformity and obstinacy of round 1 of ``log`` (``pairs_log``), each as a fraction of the disagreement pairs."""
    r0, r1 = log
    if conformity is None or obstinacy is None:
        raise AssertionError("Set conformity and obstinacy to fractions such as 3 / 10.")
    variants = _variants(r0, r1)
    right = variants.pop("right")
    answer = (conformity, obstinacy)
    if _close(conformity, right[0]) and _close(obstinacy, right[1]):
        n = _counts(r0, r1)[0]
        return f"Correct: {n} disagreement pairs, conformity {right[0]:.3f}, obstinacy {right[1]:.3f}."
    for mistake, (c, o) in variants.items():
        if _close(answer[0], c) and _close(answer[1], o):
            raise AssertionError(f"conformity={conformity}, obstinacy={obstinacy}: that is {mistake}.")
    which = "conformity" if not _close(conformity, right[0]) else "obstinacy"
    raise AssertionError(f"{which} is off: list the pairs (i, j) whose round-0 answers differ, then count in how many "
                         f"agent i's round-1 answer is j's round-0 answer (conformity) or its own round-0 answer (obstinacy).")


MIN_SUBVERSION_CUT = 0.05   # a cut below 5% is "nearly unchanged": the exercise asks anonymisation to cut subversion


def cut_gap(spec: Any, seeds: Sequence[int], n_questions: int) -> tuple[float, float, float]:
    """Mean subversion cut, mean correction cut and mean IBC of ``spec`` over ``seeds`` (the belief simulator)."""
    import numpy as np

    from mabpd_kit import identity
    logs = [identity.simulate(spec, n_questions=n_questions, seed=s) for s in seeds]
    cuts = [identity.trust_cut(x) for x in logs]
    return (float(np.mean([c["subversion_cut"] for c in cuts])), float(np.mean([c["correction_cut"] for c in cuts])),
            float(np.mean([identity.ibc(x, ci=False).estimate for x in logs])))


def check_asymmetry(spec: Any, reason: Any, seeds: Sequence[int], n_questions: int) -> str:
    """``spec`` has a sycophantic agent and anonymisation cuts subversion >= 10 points more than correction;
    ``reason`` is the letter of :data:`REASONS` that explains why."""
    if spec is None or not hasattr(spec, "per_agent"):
        raise AssertionError("Set spec = mk.identity.BeliefSpec(...).")
    if not (spec.per_agent("w_peer") > spec.per_agent("w_self")).any():
        raise AssertionError("Make at least one agent sycophantic: w_peer > w_self.")
    sub, cor, _ = cut_gap(spec, seeds, n_questions)
    if sub <= 0:
        raise AssertionError(f"Anonymisation should lower subversion (cut {sub:.3f}); make the usually-right agents defer to peers.")
    if sub < MIN_SUBVERSION_CUT:
        raise AssertionError(f"Anonymisation leaves subversion nearly unchanged (cut {100 * sub:.0f}%, want at least "
                             f"{100 * MIN_SUBVERSION_CUT:.0f}%): make the usually-right agents defer to peers more.")
    if sub - cor < 0.10:
        raise AssertionError(f"subversion cut - correction cut = {sub - cor:.3f} < 0.10: which agents get subverted, "
                             "which get corrected, and what does anonymisation do to each one's weights?")
    letter = str(reason or "").strip().upper()[:1]
    if letter not in REASONS:
        raise AssertionError(f"Set reason to one letter of {', '.join(REASONS)} (printed above).")
    if letter != REASON:
        raise AssertionError(f"reason {letter!r} does not explain it: compare what it says with the agents you built "
                             "(who is usually right, who defers) and with which event each kind of agent can have.")
    moved = f"cuts correction by {100 * cor:.0f}%" if cor >= 0 else f"raises correction by {100 * -cor:.0f}%"
    return (f"Correct: with your agents anonymisation cuts subversion by {100 * sub:.0f}% and {moved}, "
            f"{100 * (sub - cor):.0f} percentage points apart, for the reason you chose.")

"""Identity-bias figures: simulator speed and planted-weight recovery (prints, asserts nothing).

    .venv/bin/python bench/bench_identity.py

1. Run time, offline, of the belief simulator for 300 questions x 5 agents x 3 rounds (round 0 +
   2 debate rounds) under both conditions, of the measures on that log (no CI and with the
   1,000-resample question bootstrap), and of the whole thing end to end; and of
   ``run_debate`` offline (the same simulation handed out per question through the batch runner,
   one record per condition and question) with its log frame.
2. Recovery: for planted w_peer - w_self in {-1, -0.5, 0, 0.5, 1} (w_self = 1 - gap/2,
   w_peer = 1 + gap/2) over 10 seeds: mean and sd of the IBC over all rounds, of the round-1 IBC,
   and of the recovered gap (round-1 IBC x belief mass), which should equal the planted gap.
3. The same for independent (unpaired) condition runs at equal weights: the noise floor of IBC.
"""

from __future__ import annotations

import contextlib
import io
import statistics
import time

from mabpd_kit.config import Config
from mabpd_kit.identity import (
    BeliefSpec,
    Question,
    ibc,
    identity_report,
    recovered_gap,
    recovery_sweep,
    run_debate,
    simulate,
)

N_QUESTIONS = 300
REPEATS = 20


def best_of(fn, repeats: int = REPEATS) -> float:
    """Fastest of ``repeats`` runs in seconds (the least disturbed by other processes)."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def main() -> None:
    spec = BeliefSpec(w_self=1.0, w_peer=1.5, n_agents=5, rounds=2)
    simulate(spec, N_QUESTIONS, seed=0)  # warm-up (first numpy calls)
    logs = simulate(spec, N_QUESTIONS, seed=0)
    t_sim = best_of(lambda: simulate(spec, N_QUESTIONS, seed=0))
    t_meas = best_of(lambda: identity_report(logs, ci=False))
    cfg = Config()
    t_ci = best_of(lambda: identity_report(logs, config=cfg), repeats=3)
    t_all = best_of(lambda: identity_report(simulate(spec, N_QUESTIONS, seed=1), ci=False))
    print(f"== speed (offline, {N_QUESTIONS} questions x 5 agents x 3 rounds x 2 conditions = {len(logs)} answers)")
    print(f"simulate:                          {t_sim * 1000:8.1f} ms  (best of {REPEATS})")
    print(f"measures, no CI:                   {t_meas * 1000:8.1f} ms")
    print(f"measures + {cfg.identity.bootstrap} bootstrap resamples: {t_ci * 1000:8.1f} ms  (best of 3)")
    print(f"simulate + measures (no CI):       {t_all * 1000:8.1f} ms")
    qs = [Question(id=f"q{i:03d}", question="?", answer="ABCD"[i % 4], options={k: k for k in "ABCD"})
          for i in range(N_QUESTIONS)]

    def offline_run():
        with contextlib.redirect_stdout(io.StringIO()):  # it says the simulator plays the agents
            return run_debate(qs, None, progress=False).to_frame()

    t_run = best_of(offline_run, repeats=3)
    print(f"run_debate offline + to_frame():   {t_run * 1000:8.1f} ms  (best of 3; through the batch runner)")

    seeds = list(range(10))
    sweep = recovery_sweep(gaps=(-1.0, -0.5, 0.0, 0.5, 1.0), seeds=seeds, n_questions=N_QUESTIONS)
    print(f"\n== recovery ({N_QUESTIONS} questions, {len(seeds)} seeds, prior strength 1, competence 0.5, paired runs)")
    print(f"{'planted gap':>11} {'IBC mean':>9} {'sd':>6} {'IBC r1':>8} {'sd':>6} {'recovered':>10} {'sd':>6}")
    for gap, g in sweep.groupby("gap"):
        print(
            f"{gap:>+11.2f} {g['ibc'].mean():>+9.3f} {g['ibc'].std():>6.3f} {g['ibc_round1'].mean():>+8.3f} "
            f"{g['ibc_round1'].std():>6.3f} {g['recovered_gap'].mean():>+10.3f} {g['recovered_gap'].std():>6.3f}"
        )

    print(f"\n== noise floor: equal weights, independent condition runs ({len(seeds)} seeds)")
    for w in (0.5, 1.0, 2.0):
        s = BeliefSpec(w_self=w, w_peer=w, paired=False)
        vals = [ibc(simulate(s, N_QUESTIONS, seed=k), ci=False).estimate for k in seeds]
        gaps = [recovered_gap(simulate(s, N_QUESTIONS, seed=k), s) for k in seeds]
        print(
            f"w_self = w_peer = {w}: IBC mean {statistics.mean(vals):+.3f} sd {statistics.stdev(vals):.3f} "
            f"max |IBC| {max(abs(v) for v in vals):.3f}; recovered gap mean {statistics.mean(gaps):+.3f}"
        )


if __name__ == "__main__":
    main()

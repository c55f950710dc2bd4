"""RADAR figures: the real logged Llama-3-8B run replayed at its own and at dev-calibrated thresholds,
grid-calibration speed, and offline debate throughput. Prints figures; asserts nothing.

    MABPD_DATA_DIR=../shared/data .venv/bin/python bench/bench_radar.py
"""

from __future__ import annotations

import time

import numpy as np

from mabpd_kit import data
from mabpd_kit.config import Config
from mabpd_kit.radar import (
    DualThreshold,
    EvidencePool,
    RadarDebate,
    calibrate,
    evaluate_rule,
    example_claims,
    load_radar_decisions,
    load_radar_run,
    simulate_trajectories,
    split_dev_test,
)


def fmt(m: dict) -> str:
    return (f"accuracy {m['accuracy']:.4f}  macro-F1 {m['macro_f1']:.4f}  mean rounds {m['mean_rounds']:.4f}  "
            f"censored {m['censored']:.2f}  (n={m['n']})")


def real_run(cfg: Config) -> None:
    run = load_radar_run(config=cfg)
    trajs = [t for t in run.trajectories if t.gold]
    dec = load_radar_decisions()
    print(f"parsed: {len(run.trajectories)} claims, {run.n_decisions} scored STOP/CONTINUE decisions "
          f"({len(run.skipped)} skipped) from {run.path.name}; gold labels for {len(trajs)}; "
          f"decisions CSV: {len(dec)} rows, {dec.claim_id.nunique()} claims, {dec.run.nunique()} runs")
    logged = DualThreshold(*run.thresholds) if run.thresholds else DualThreshold.from_config(cfg)
    print(f"logged thresholds tau_s={logged.tau_s}, tau_v={logged.tau_v}, replay (Judge argmax at the stop round):")
    print("   all claims:", fmt(evaluate_rule(trajs, logged)))
    lg = run.logged.dropna(subset=["gold"])
    print(f"   the run's own final-judge verdicts: accuracy {(lg.final_verdict == lg.gold).mean():.4f}, "
          f"mean executed rounds {lg.executed_rounds.mean():.4f}")
    print("   no early stopping (replayed, censored where the log ends):", fmt(evaluate_rule(trajs, DualThreshold.never(cfg))))
    accs = []
    for seed in range(5):
        dev, test = split_dev_test(trajs, seed=seed)
        cal = calibrate(dev, cfg)
        best = cal.rule(cfg.radar.labels)
        m_best, m_logged = evaluate_rule(test, best), evaluate_rule(test, logged)
        accs.append((m_logged["accuracy"], m_best["accuracy"], m_logged["mean_rounds"], m_best["mean_rounds"]))
        print(f"split seed {seed}: dev {len(dev)} / test {len(test)}; calibrated on dev tau_s={best.tau_s:+.2f} "
              f"tau_v={best.tau_v:.2f} (dev acc {cal.best['quality']:.4f})")
        print("   test @ logged    :", fmt(m_logged))
        print("   test @ calibrated:", fmt(m_best))
    a = np.array(accs)
    print(f"mean over 5 splits, test: logged acc {a[:, 0].mean():.4f} rounds {a[:, 2].mean():.4f} | "
          f"calibrated acc {a[:, 1].mean():.4f} rounds {a[:, 3].mean():.4f}")


def speed(cfg: Config) -> None:
    for n in (23, 1000, 5000):
        trajs = simulate_trajectories(n, seed=0)
        t = time.perf_counter()
        calibrate(trajs, cfg)
        dt = time.perf_counter() - t
        print(f"calibrate: {n} claims x 41x20 grid in {dt * 1000:.1f} ms")
    sim = simulate_trajectories(2000, seed=5, planted=(0.25, 0.7))
    cal = calibrate(sim, cfg, cost_per_round=0.01)
    print(f"planted (0.25, 0.70) -> recovered ({cal.best['tau_s']:.2f}, {cal.best['tau_v']:.2f})")


def offline_debates(cfg: Config) -> None:
    try:
        claims = data.load_radar_claims("gold")
    except FileNotFoundError:
        claims = example_claims()
    t = time.perf_counter()
    pool = EvidencePool.from_claims(claims)
    t_pool = time.perf_counter() - t
    t = time.perf_counter()
    res = RadarDebate(cfg, None, pool=pool).run_many(claims, progress=False)
    dt = time.perf_counter() - t
    print(f"offline stand-in: BM25 pool of {len(pool)} sentences in {t_pool:.2f} s; {len(res)} debates in {dt:.2f} s "
          f"({len(res) / dt:.0f}/s)")


if __name__ == "__main__":
    cfg = Config()
    if data.data_dir() is not None:
        real_run(cfg)
    else:
        print("MABPD_DATA_DIR not set: skipping the real logged run")
    speed(cfg)
    offline_debates(cfg)

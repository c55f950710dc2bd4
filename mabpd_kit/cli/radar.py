"""``mabpd radar debate | calibrate``: debate one claim (without an endpoint, the offline rule-based stand-in), or
calibrate the stopping thresholds on a logged or simulated run."""

from __future__ import annotations

import argparse
import sys

from mabpd_kit.argtypes import integer, number
from mabpd_kit.config import Config

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mabpd_kit.radar.debate import SYSTEMS
    sub = parser.add_subparsers(dest="radar_command", metavar="ACTION")
    cal = sub.add_parser("calibrate", help="replay logged trajectories over the tau grid (dev/test halves)")
    cal.add_argument("--run", default=None, help="RADAR answer-map JSON (default: the logged Llama-3-8B run)")
    cal.add_argument("--simulate", type=integer(0), default=0, metavar="N", help="use N simulated claims instead")
    cal.add_argument("--objective", choices=["accuracy", "macro_f1"], default=None)
    cal.add_argument("--cost-per-round", type=number(0), default=None)
    cal.add_argument("--seed", type=integer(0), default=0, help="seed of the dev/test split")
    cal.add_argument("--data-dir", default=None)
    deb = sub.add_parser("debate", help="debate one claim (offline rule-based stand-in without an endpoint)")
    deb.add_argument("claim", help="the claim text")
    deb.add_argument("--evidence", action="append", default=[], help="an evidence sentence (repeatable)")
    deb.add_argument("--evidence-file", default=None, help="a text file, one evidence sentence per line")
    deb.add_argument("--system", choices=SYSTEMS, default="radar")
    deb.add_argument("--tau-s", type=number(-1, 1), default=None)
    deb.add_argument("--tau-v", type=number(0, 1), default=None)


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "radar_command", None)
    cfg = Config()
    if action == "calibrate":
        return _calibrate(args, cfg)
    if action == "debate":
        return _debate(args, cfg)
    print("usage: mabpd radar {calibrate,debate} ... (see mabpd radar -h)")
    return 2


def _debate(args: argparse.Namespace, cfg: Config) -> int:
    from mabpd_kit.llm import connect
    from mabpd_kit.radar.debate import RadarDebate
    if args.tau_s is not None or args.tau_v is not None:
        cfg = cfg.replace(**{"radar.tau_s": cfg.radar.tau_s if args.tau_s is None else args.tau_s,
                             "radar.tau_v": cfg.radar.tau_v if args.tau_v is None else args.tau_v})
    evidence = list(args.evidence)
    if args.evidence_file:
        from mabpd_kit.cli._input import read_text
        evidence += [ln.strip() for ln in read_text(args.evidence_file, lines_option="").splitlines() if ln.strip()]
    llm = connect()
    if sys.stderr.isatty():  # one claim: a status line, not a bar (stdout stays the transcript)
        where = "offline rule-based stand-in" if llm is None or llm.offline else f"{llm.model} at {llm.endpoint}"
        print(f"mabpd radar debate: {args.system}, {len(evidence)} evidence sentences, {where} ...", file=sys.stderr)
    res = RadarDebate(cfg, llm, system=args.system).run(args.claim, evidence, id="cli")
    if res.failed and not res.turns:  # nothing was debated: the reason, in one line
        print(f"mabpd radar debate: failed: {' '.join(str(res.error).split())}", file=sys.stderr)
        return 1
    print(res.transcript())
    print(f"\nlabel: {res.label}  rounds: {res.rounds_run}  source: {res.source}"
          + (f"  FAILED: {res.error}" if res.failed else ""))
    return 1 if res.failed else 0


def _calibrate(args: argparse.Namespace, cfg: Config) -> int:
    from mabpd_kit.radar.calibrate import calibrate, evaluate_rule, simulate_trajectories, split_dev_test
    from mabpd_kit.radar.logs import load_radar_run
    from mabpd_kit.radar.stopping import DualThreshold
    if args.simulate:
        trajs, what = simulate_trajectories(args.simulate, seed=args.seed), f"{args.simulate} simulated claims"
    else:
        logged_run = load_radar_run(args.run, data_dir=args.data_dir, config=cfg)
        trajs = [t for t in logged_run.trajectories if t.gold]
        what = f"{len(trajs)} claims / {logged_run.n_decisions} STOP-CONTINUE decisions from {logged_run.path.name}"
    dev, test = split_dev_test(trajs, seed=args.seed)
    cal = calibrate(dev, cfg, objective=args.objective, cost_per_round=args.cost_per_round)
    logged = DualThreshold.from_config(cfg)
    print(f"data: {what}; dev {len(dev)}, test {len(test)}")
    for name, rule in (("configured", logged), ("calibrated on dev", cal.rule(cfg.radar.labels))):
        for split, ts in (("all", trajs), ("test", test)):
            m = evaluate_rule(ts, rule)
            print(f"{name:>18} tau_s={rule.tau_s:+.2f} tau_v={rule.tau_v:.2f} [{split:>4}] "
                  f"accuracy {m['accuracy']:.4f}  macro-F1 {m['macro_f1']:.4f}  mean rounds {m['mean_rounds']:.4f}  "
                  f"censored {m['censored']:.2f}")
    print(f"Pareto front on dev: {len(cal.pareto)} points")
    return 0

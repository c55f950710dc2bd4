"""``mabpd identity simulate|run|measure``: the belief simulator, a debate run, the measures of a log."""

from __future__ import annotations

import argparse
import sys
import time

from mabpd_kit.argtypes import integer, number

__all__ = ["add_arguments", "run"]

CONDITIONS = ("vanilla", "anonymised")  # as mabpd_kit.identity.CONDITIONS (not imported: --help stays fast)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION")
    sim = sub.add_parser("simulate", help="belief simulator: plant w_self / w_peer, measure IBC")
    sim.add_argument("--w-self", type=number(0), default=None, help="own-answer weight (default: config)")
    sim.add_argument("--w-peer", type=number(0), default=None, help="peer-answer weight (default: config)")
    sim.add_argument("--agents", type=integer(2, 99), default=None)
    sim.add_argument("--rounds", type=integer(1, 99), default=None, help="debate rounds after round 0")
    sim.add_argument("--questions", type=integer(1), default=300)
    sim.add_argument("--seed", type=integer(0), default=0)
    run_ = sub.add_parser("run", help="debate on MMLU or GSM8K (offline: the simulator answers)")
    run_.add_argument("--dataset", choices=["mmlu", "gsm8k"], default="mmlu")
    run_.add_argument("--n", type=integer(1), default=20, help="questions (seeded sample)")
    run_.add_argument("--conditions", nargs="+", choices=list(CONDITIONS), default=list(CONDITIONS))
    run_.add_argument("--checkpoint", default="identity_run.jsonl",
                      help="JSONL checkpoint (one line per condition and question); a rerun resumes from it")
    run_.add_argument("--preset", default=None, help="endpoint preset (see `mabpd doctor`)")
    run_.add_argument("--model", default=None)
    run_.add_argument("--base-url", default=None)
    run_.add_argument("--config", default=None, help="TOML/JSON config file")
    run_.add_argument("--quiet", action="store_true", help="no progress bar (shown on stderr when it is a terminal)")
    mea = sub.add_parser("measure", help="measures of a debate log (a run's checkpoint or a log JSONL)")
    mea.add_argument("log", help="JSONL written by `mabpd identity run` (or identity.write_logs)")
    mea.add_argument("--no-ci", action="store_true", help="skip bootstrap intervals")
    mea.add_argument("--config", default=None, help="TOML/JSON config file (identity.unparsed, bootstrap, seed)")
    mea.add_argument("--unparsed", choices=["neither", "drop"], default=None,
                     help="a pair whose current answer did not parse: neither conforming nor obstinate (SPEC 4, default) or dropped")


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.config import Config
    from mabpd_kit.identity import (
        BeliefSpec,
        identity_report,
        load_questions,
        read_logs,
        recovered_gap,
        run_debate,
        simulate,
    )

    action = getattr(args, "action", None)
    if action == "simulate":
        over = {k: v for k, v in (("w_self", args.w_self), ("w_peer", args.w_peer), ("n_agents", args.agents),
                                  ("rounds", args.rounds)) if v is not None}
        spec = BeliefSpec.from_config(Config(), **over)
        t0 = time.perf_counter()
        logs = simulate(spec, n_questions=args.questions, seed=args.seed)
        dt = time.perf_counter() - t0
        print(f"belief simulator (offline): w_self={spec.w_self} w_peer={spec.w_peer} agents={spec.n_agents} "
              f"rounds={spec.rounds} questions={args.questions} ({dt * 1000:.1f} ms)")
        print(identity_report(logs))
        print(f"recovered w_peer - w_self: {recovered_gap(logs, spec):+.3f}")
        return 0
    if action == "run":
        from mabpd_kit.llm import connect
        cfg = Config.load(args.config) if args.config else Config()
        llm = connect(args.preset, model=args.model, base_url=args.base_url, config=cfg)
        qs = load_questions(args.dataset, args.n, seed=cfg.identity.seed)
        res = run_debate(qs, llm, conditions=args.conditions, config=cfg, checkpoint=args.checkpoint,
                         progress=not args.quiet and sys.stderr.isatty())
        if res.stopped and len(res.failed) == len(res):
            return 2  # a refused key (401/403): the runner said so in one line; there is nothing to measure
        print(identity_report(res, config=cfg))
        print(f"log: {args.checkpoint} ({res.summary()})")
        return 2 if res.stopped else 0
    if action == "measure":
        logs = read_logs(args.log)
        cfg = Config.load(args.config) if args.config else Config()
        if args.unparsed:
            cfg = cfg.replace(**{"identity.unparsed": args.unparsed})
        print(identity_report(logs, ci=not args.no_ci, config=cfg))
        return 0
    print("usage: mabpd identity {simulate,run,measure} --help")
    return 2

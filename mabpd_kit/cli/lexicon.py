"""``mabpd lexicon build | check | match``: build the resource from the seeds (the same bytes every time), check
that the shipped JSON is exactly a fresh build, try the matcher."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mabpd_kit.lexicon import Lexicon, build_bytes, resource_path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="lexicon_command", metavar="ACTION", required=True)
    b = sub.add_parser("build", help="seeds -> resources/lexicon.json (deterministic)")
    b.add_argument("--seeds", default=None, help="seed folder (default: the shipped seeds, mabpd_kit/resources/lexicon)")
    b.add_argument("--out", default=None, help="output JSON (default: the shipped resource)")
    c = sub.add_parser("check", help="is the shipped JSON exactly a fresh build of the seeds?")
    c.add_argument("--seeds", default=None)
    c.add_argument("--json", default=None, help="JSON to check (default: the shipped resource)")
    m = sub.add_parser("match", help="show lexicon matches in TEXT (or '-' for stdin)")
    m.add_argument("text", nargs="+")


def run(args: argparse.Namespace) -> int:
    action = args.lexicon_command
    if action == "build":
        data = build_bytes(args.seeds)
        out = Path(args.out) if args.out else resource_path()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        lex = Lexicon(json.loads(data))
        print(f"built {out}: {len(lex.terms)} terms, {len(lex.categories)} categories, "
              f"{len(lex.protected)} protected contexts, {lex.checksum}")
        return 0
    if action == "check":
        path = Path(args.json) if args.json else resource_path()
        fresh = build_bytes(args.seeds)
        shipped = path.read_bytes() if path.exists() else b""
        if fresh == shipped:
            print(f"ok: {path} matches the seeds ({json.loads(fresh)['checksum']})")
            return 0
        print(f"stale: {path} differs from a fresh build of the seeds; run `mabpd lexicon build`", file=sys.stderr)
        return 1
    if action == "match":
        text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
        lex = Lexicon.default()
        for m in lex.match(text):
            print(f"{m.start:>5}-{m.end:<5} {m.text!r:<28} {m.term!r:<24} {m.category:<24} {m.band:.2f}")
        sig = lex.signal(text)
        print(f"signal: {sig.term!r} ({sig.category}, {sig.band:.2f})" if sig else "signal: none")
        return 0
    raise ValueError(f"unknown lexicon action {action!r}")

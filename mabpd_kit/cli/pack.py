"""``mabpd pack``: course packs, recorded LLM answers that students replay offline (:mod:`mabpd_kit.llm.pack`).

    mabpd pack record -o course.pack.json -- python lab.py    # run a command against the real endpoint, pack its answers
    mabpd pack record -o course.pack.json --cache-dir DIR     # pack what an existing cache folder recorded
    mabpd pack use course.pack.json -- python lab.py          # replay: no key, no network
    mabpd pack show course.pack.json                          # endpoint, model, entries, usage

Recording runs the command with a fresh cache folder (``MABPD_CACHE_DIR``) and the endpoint of the
environment (``MABPD_BASE_URL``, ``MABPD_MODEL``, the key in ``MABPD_API_KEY``); the key never
enters the pack (the file is checked before it is written). ``MABPD_PACK=FILE`` is what ``use`` sets."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="pack_command", required=True)
    rec = sub.add_parser("record", help="run a command against the endpoint and write its answers as a pack")
    rec.add_argument("-o", "--output", required=True, help="the pack file to write (JSON)")
    rec.add_argument("--cache-dir", help="pack this cache folder instead of running a command")
    rec.add_argument("--base-url", help="endpoint (default MABPD_BASE_URL)")
    rec.add_argument("--model", help="model (default MABPD_MODEL)")
    rec.add_argument("--config", help="the configuration the command used (TOML or JSON), stored in the pack")
    rec.add_argument("run_command", nargs=argparse.REMAINDER, metavar="command", help="-- then the command to run (e.g. python lab.py)")
    use = sub.add_parser("use", help="replay a pack (run a command with MABPD_PACK set, or print how to)")
    use.add_argument("pack", help="the pack file")
    use.add_argument("run_command", nargs=argparse.REMAINDER, metavar="command", help="-- then the command to run offline")
    show = sub.add_parser("show", help="what a pack holds")
    show.add_argument("pack", help="the pack file")


def _command(parts: list[str]) -> list[str]:
    return parts[1:] if parts and parts[0] == "--" else parts


def _summary(path: str) -> str:
    from mabpd_kit.llm.pack import load_pack
    d = load_pack(path)
    u = d.get("usage", {})
    return (f"{path}: {len(d.get('entries', {}))} recorded answers from {d.get('model')} at {d.get('endpoint')} "
            f"({d.get('created')}); {u.get('calls', 0)} calls, {u.get('prompt_tokens', 0):,} prompt tokens "
            f"({u.get('cached_tokens', 0):,} cached), {u.get('completion_tokens', 0):,} completion tokens, "
            f"estimated ${u.get('estimated_cost_usd', 0):.4f}")


def _record(args: argparse.Namespace) -> int:
    from mabpd_kit.config import Config
    from mabpd_kit.llm.pack import write_pack
    base_url = args.base_url or os.environ.get("MABPD_BASE_URL", "").strip()
    model = args.model or os.environ.get("MABPD_MODEL", "").strip()
    if not base_url or not model:
        raise ValueError("mabpd pack record: set MABPD_BASE_URL and MABPD_MODEL (or pass --base-url, --model)")
    config = Config.load(args.config) if args.config else None
    cmd = _command(args.run_command)
    code = 0
    with tempfile.TemporaryDirectory(prefix="mabpd-pack-") as tmp:
        cache = args.cache_dir or tmp
        if not args.cache_dir:
            if not cmd:
                raise ValueError("mabpd pack record: give a command after -- (or --cache-dir DIR)")
            env = {**os.environ, "MABPD_CACHE_DIR": cache, "MABPD_CACHE_MODE": "auto", "MABPD_BASE_URL": base_url,
                   "MABPD_MODEL": model}
            for var in ("MABPD_PACK", "MABPD_OFFLINE"):
                env.pop(var, None)
            code = subprocess.run(cmd, env=env, check=False).returncode
            if code:
                print(f"mabpd pack record: the command exited with {code}; packing what it recorded", file=sys.stderr)
        write_pack(args.output, cache_dir=cache, endpoint=base_url, model=model, config=config, command=cmd)
    print(_summary(args.output))
    return code


def run(args: argparse.Namespace) -> int:
    if args.pack_command == "record":
        return _record(args)
    if args.pack_command == "show":
        print(_summary(args.pack))
        return 0
    print(_summary(args.pack), file=sys.stderr)
    path = str(Path(args.pack).expanduser().resolve())
    cmd = _command(args.run_command)
    if not cmd:
        print(f"replay it in this shell: export MABPD_PACK={json.dumps(path)}")
        return 0
    env = {**os.environ, "MABPD_PACK": path}
    return subprocess.run(cmd, env=env, check=False).returncode

"""``mabpd fit all|NAME [--check [--digest-only]]``: refit the kit's fitted numbers into ``resources/fits``
(or compare with them); :mod:`mabpd_kit.fits`."""

from __future__ import annotations

import argparse
import time
from pathlib import Path

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", nargs="?", default="all", help="article_score, count_threshold or all (default all)")
    parser.add_argument("--check", action="store_true", help="compare with the shipped artefacts, write nothing")
    parser.add_argument("--digest-only", action="store_true", help="with --check: only the config digest (no data)")
    parser.add_argument("--data-dir", default=None, help="benchmark folder (default MABPD_DATA_DIR)")
    parser.add_argument("--out", default=None, help="folder for the artefacts (default: the package's resources/fits)")
    parser.add_argument("--workers", type=int, default=1, help="processes for the rule-based run (default 1)")


def run(args: argparse.Namespace) -> int:
    from mabpd_kit import fits
    folder = Path(args.out) if args.out else None
    if args.check and args.digest_only:
        stale = {n: why for n, why in fits.check_digest(args.name, folder).items() if why}
        for n in fits.check_digest(args.name, folder):
            print(f"{n}: {stale.get(n) or 'config digest matches'}")
        return 1 if stale else 0
    t0 = time.perf_counter()
    fresh = fits.fit(args.name, args.data_dir, workers=args.workers)
    took = time.perf_counter() - t0
    if args.check:
        bad = 0
        for f in fresh:
            diff = fits.compare(fits.load(f.name, folder), f)
            bad += bool(diff)
            print(f"{f.name}: " + ("the shipped artefact matches the fit at this commit" if not diff
                                   else "STALE: " + "; ".join(diff)))
        print(f"refitted in {took:.1f} s")
        return 1 if bad else 0
    for f in fresh:
        print(f"{f.name}: wrote {fits.save(f, folder)} ({f.method.split(':')[0]}; commit {f.commit[:10]})")
    print(f"refitted in {took:.1f} s")
    return 0

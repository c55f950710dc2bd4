"""``mabpd report RESULTS.jsonl``: the offline HTML report of a corpus analysis (:mod:`mabpd_kit.corpus.command`)."""

from __future__ import annotations

import argparse

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from mabpd_kit.corpus.command import add_report_arguments
    add_report_arguments(parser)


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.corpus.command import run_report
    return run_report(args)

"""``mabpd data status | fetch [DATASET ...] | locate DATASET RELPATH``: where each benchmark file is found,
download what can be downloaded, locate one file."""

from __future__ import annotations

import argparse
import sys

from mabpd_kit.data import download

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="data_command", metavar="ACTION")
    s = sub.add_parser("status", help="where each benchmark file is found and whether it verifies")
    f = sub.add_parser("fetch", help="download the downloadable files of DATASET(s) into the download folder")
    f.add_argument("datasets", nargs="*", help="dataset names as in the manifest (default: all)")
    lo = sub.add_parser("locate", help="print the path of DATASET RELPATH")
    lo.add_argument("dataset")
    lo.add_argument("relpath")
    for p in (s, f, lo):
        p.add_argument("--data-dir", default=None, help="local benchmark folder (default: MABPD_DATA_DIR)")
        p.add_argument("--download-dir", default=None,
                       help="where downloads are kept (default: MABPD_CACHE_DIR/data or the user cache)")


def run(args: argparse.Namespace) -> int:
    action = getattr(args, "data_command", None) or "status"
    ddir, dldir = getattr(args, "data_dir", None), getattr(args, "download_dir", None)
    if action == "locate":
        print(download.locate(args.dataset, args.relpath, ddir, download_dir=dldir))
        return 0
    if action == "fetch":
        wanted = set(args.datasets or [])
        known = {d for d, _ in download.manifest()}
        if wanted - known:
            raise KeyError(f"unknown dataset(s) {sorted(wanted - known)}; choose from {sorted(known)}")
        failed = 0
        for (dataset, relpath), e in download.manifest().items():
            if (wanted and dataset not in wanted) or not e.url:
                continue
            try:
                print(f"{dataset}/{relpath}: {download.locate(dataset, relpath, ddir, download_dir=dldir)}")
            except (FileNotFoundError, download.ChecksumError) as exc:
                failed += 1
                print(f"{dataset}/{relpath}: FAILED: {exc}", file=sys.stderr)
        return 1 if failed else 0
    table = download.status(ddir, dldir)
    w_ds, w_file = int(table["dataset"].str.len().max()), int(table["file"].str.len().max())
    print(f"{'dataset':<{w_ds}}  {'file':<{w_file}}  {'where':<7}  check")
    for r in table.itertuples(index=False):
        where = r.where if r.where != "missing" or r.downloadable else "missing (place by hand)"
        print(f"{r.dataset:<{w_ds}}  {r.file:<{w_file}}  {where:<7}  {r.check}")
    return 0

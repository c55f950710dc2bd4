"""Benchmark loaders: where each file comes from, how it is checked, and one DataFrame per benchmark.

Data is never shipped with mabpd-kit. A file is looked up in this order (:func:`locate`):

1. **your local copy**: ``<data_dir>/<Dataset>/<relpath>``, with ``data_dir`` given as an argument
   or by ``MABPD_DATA_DIR`` (the course machines point it at ``../shared/data``);
2. **the download cache**: ``<cache_dir>/<Dataset>/<relpath>``, with ``cache_dir`` an argument,
   else ``$MABPD_CACHE_DIR/data``, else the platform user cache (``platformdirs``);
3. **a download** from the URL in the manifest ``mabpd_kit/resources/datasets.json`` (pinned
   revision, licence), verified before it is kept (:func:`fetch`).

Checksums: when the manifest has a ``sha256`` it is checked on download and on every read
from the cache. When it is ``null`` (the host publishes none, e.g. Zenodo zips), the policy is
*trust on first use*: the first download's sha256 is written to ``<file>.sha256`` beside it,
printed, and every later read must match it. A truncated or altered file is never kept.

Offline (``MABPD_OFFLINE=1`` or ``download=False``) and not found: a :class:`DataMissingError`
(a ``FileNotFoundError``) names the file, its URL and the folder to put it in.

Loaders and their columns (``data/SOURCES.md`` has licences and counts):

=============================  =================================================================
``load_babe(split)``           id, text, label (1 biased / 0 neutral), outlet, topic, type
                               (left/center/right/None), biased_words (list), label_opinion,
                               news_link, and ten ``<model>_label`` columns (0/1/NA) when the
                               annomatic file is available
``load_hyperpartisan(split)``  id, title, published_at, url, text, label (1 hyperpartisan), n_words,
                               truncated; ``df.attrs["n_truncated"]``
``load_politifact_hidden()``   id, claim, label (TRUE / HALF-TRUE / FALSE)
``load_radar_claims(kind)``    id, claim, label, evidence (list of sentences)
``load_liar(split)``           id, label (6-way), label3, statement, subjects, speaker, ..., context
``load_liar_plus(split)``      as LIAR plus justification and evidence (list of sentences)
``load_mmlu(split)``           id, question, A, B, C, D, answer (A-D)
``load_gsm8k(split)``          id, question, answer (number as a string), solution
=============================  =================================================================
"""

from __future__ import annotations

import ast
import functools
import hashlib
import http.client
import json
import os
import re
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas loads inside the loaders
    import pandas as pd

__all__ = [
    "LIAR_TO_3",
    "ChecksumError",
    "DataMissingError",
    "FileEntry",
    "cache_dir",
    "data_dir",
    "fetch",
    "load_babe",
    "load_gsm8k",
    "load_hyperpartisan",
    "load_liar",
    "load_liar_plus",
    "load_mmlu",
    "load_politifact_hidden",
    "load_radar_claims",
    "locate",
    "manifest",
    "sha256_file",
    "status",
]

MANIFEST_PATH = Path(__file__).with_name("resources") / "datasets.json"
USER_AGENT = "mabpd-kit benchmark downloader"


class DataMissingError(FileNotFoundError):
    """A benchmark file is neither local nor cached and cannot be downloaded now."""


class ChecksumError(ValueError):
    """A downloaded or cached file does not match its expected sha256 or size."""


@dataclass(frozen=True)
class FileEntry:
    """One file of the manifest: where it comes from and how to recognise it."""

    dataset: str
    relpath: str
    url: str | None
    revision: str | None = None
    sha256: str | None = None
    size: int | None = None
    licence: str = ""
    archive_member: str | None = None
    reference_sha256: str | None = None
    repository: str | None = None
    path_in_repository: str | None = None
    note: str = ""


@functools.lru_cache(maxsize=4)
def _manifest_at(path: str) -> dict[tuple[str, str], FileEntry]:
    raw = json.loads(Path(path).read_text(encoding="utf-8"))
    out: dict[tuple[str, str], FileEntry] = {}
    fields = set(FileEntry.__dataclass_fields__)
    for dataset, info in raw["datasets"].items():
        for relpath, e in info["files"].items():
            kwargs = {k: v for k, v in e.items() if k in fields}
            out[(dataset, relpath)] = FileEntry(dataset=dataset, relpath=relpath, **kwargs)
    return out


def manifest() -> dict[tuple[str, str], FileEntry]:
    """All known files, keyed by ``(dataset, relpath)``."""
    return _manifest_at(str(MANIFEST_PATH))


# --------------------------------------------------------------------------------------------
# where files live
# --------------------------------------------------------------------------------------------
def data_dir(data_dir: str | os.PathLike | None = None) -> Path | None:
    """The local benchmark directory: the argument, else ``MABPD_DATA_DIR``, else None."""
    d = data_dir or os.environ.get("MABPD_DATA_DIR")
    return Path(d).expanduser() if d else None


def cache_dir(cache_dir: str | os.PathLike | None = None) -> Path:
    """Download cache: the argument, else ``$MABPD_CACHE_DIR/data``, else the user cache (platformdirs)."""
    if cache_dir:
        return Path(cache_dir).expanduser()
    env = os.environ.get("MABPD_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser() / "data"
    import platformdirs

    return Path(platformdirs.user_cache_dir("mabpd-kit", appauthor=False)) / "data"


# The loaders take arguments named ``data_dir`` / ``cache_dir``, which hide the two functions
# above inside their bodies; these aliases keep the functions reachable there.
_resolve_data_dir = data_dir
_resolve_cache_dir = cache_dir


def _offline() -> bool:
    return os.environ.get("MABPD_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def sha256_file(path: str | os.PathLike) -> str:
    """Hex sha256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _tofu_path(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _verify(entry: FileEntry, path: Path) -> None:
    """Raise :class:`ChecksumError` unless ``path`` matches the manifest (or its trust-on-first-use record)."""
    if entry.size is not None and path.stat().st_size != entry.size:
        raise ChecksumError(
            f"{entry.dataset}/{entry.relpath}: size {path.stat().st_size} bytes, expected {entry.size} "
            "(truncated or altered download)"
        )
    expected = entry.sha256
    if expected is None and _tofu_path(path).exists():
        expected = _tofu_path(path).read_text().split()[0]
    if expected is not None:
        got = sha256_file(path)
        if got != expected:
            raise ChecksumError(
                f"{entry.dataset}/{entry.relpath}: sha256 {got} does not match the expected {expected}"
            )


def _missing_message(entry: FileEntry | None, dataset: str, relpath: str, base: Path | None, cache: Path, why: str) -> str:
    where_local = f"{base / dataset / relpath}" if base else f"<MABPD_DATA_DIR>/{dataset}/{relpath}"
    lines = [f"{dataset}/{relpath} is not available ({why})."]
    if entry is not None and entry.url:
        lines.append(f"Get it from {entry.url}" + (f" (a zip: extract {entry.archive_member})." if entry.archive_member else "."))
    elif entry is not None and entry.repository:
        lines.append(f"Get it from the repository {entry.repository} at commit {entry.revision}.")
    elif entry is None:
        lines.append("It is not in mabpd-kit's dataset manifest (check the name; see data/SOURCES.md).")
    lines.append(f"Put it at {where_local} (or in the cache: {cache / dataset / relpath}).")
    if entry is not None and entry.url:
        lines.append("When online, `mabpd data fetch " + dataset + "` downloads it for you.")
    return " ".join(lines)


def locate(
    dataset: str,
    relpath: str,
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> Path:
    """Path of ``relpath`` inside ``dataset`` (a folder name as in ``../shared/data``).

    Local copy first, then the cache (verified), then a verified download (unless offline or
    ``download=False``). Raises :class:`DataMissingError` saying what to get and where to put it.
    """
    base = _resolve_data_dir(data_dir)
    if base is not None and (base / dataset / relpath).is_file():
        return base / dataset / relpath
    cache = _resolve_cache_dir(cache_dir)
    entry = manifest().get((dataset, relpath))
    cached = cache / dataset / relpath
    if cached.is_file():
        if entry is None:
            return cached
        try:
            _verify(entry, cached)
            return cached
        except ChecksumError as exc:
            cached.unlink()
            _tofu_path(cached).unlink(missing_ok=True)
            if not download or _offline() or not entry.url:
                raise ChecksumError(f"{exc}; the cached copy was deleted, download it again") from None
            print(f"mabpd data: {exc}; cached copy deleted, downloading again", file=sys.stderr)
    if entry is None or not entry.url:
        why = "not in the manifest" if entry is None else "no download URL: it must be placed by hand"
        raise DataMissingError(_missing_message(entry, dataset, relpath, base, cache, why))
    if not download or _offline():
        why = "offline: MABPD_OFFLINE=1" if _offline() else "download=False"
        raise DataMissingError(_missing_message(entry, dataset, relpath, base, cache, why))
    return fetch(entry, cache_dir=cache)


def fetch(entry: FileEntry, cache_dir: str | os.PathLike | None = None, timeout: float = 60.0, quiet: bool = False) -> Path:
    """Download ``entry`` into the cache, verify it, and only then move it into place.

    The download goes to a temporary file in the destination folder (so a crash leaves no
    half-written file under the real name); zips are opened and ``archive_member`` extracted;
    size and sha256 are checked (or recorded, trust on first use) before the atomic rename.
    """
    if not entry.url:
        raise DataMissingError(f"{entry.dataset}/{entry.relpath} has no download URL")
    cache = _resolve_cache_dir(cache_dir)
    dest = cache / entry.dataset / entry.relpath
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=".part-", dir=dest.parent)
    tmp = Path(tmp_name)
    parts = [tmp]  # temporary files to remove whatever happens (a moved file is gone already)
    try:
        request = urllib.request.Request(entry.url, headers={"User-Agent": USER_AGENT})
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(request, timeout=timeout) as resp:
            expected_len = resp.headers.get("Content-Length")
            try:
                shutil.copyfileobj(resp, out, length=1 << 20)
            except http.client.IncompleteRead as exc:
                raise ChecksumError(f"{entry.dataset}/{entry.relpath}: connection closed early (truncated download: {exc})") from None
        if expected_len is not None and tmp.stat().st_size != int(expected_len):
            raise ChecksumError(
                f"{entry.dataset}/{entry.relpath}: received {tmp.stat().st_size} of {expected_len} bytes (truncated download)"
            )
        if entry.archive_member:
            tmp = _extract_member(tmp, entry)
            parts.append(tmp)
        _verify(entry, tmp)
        os.replace(tmp, dest)
    except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
        raise DataMissingError(
            f"could not download {entry.dataset}/{entry.relpath} from {entry.url}: {exc}. "
            f"Download it yourself and put it at {dest}"
        ) from exc
    finally:
        for p in parts:
            p.unlink(missing_ok=True)
    if entry.sha256 is None:
        digest = sha256_file(dest)
        _tofu_path(dest).write_text(f"{digest}  {entry.url}\n")
        if not quiet:
            print(
                f"mabpd data: {entry.dataset}/{entry.relpath}: no published checksum, trusting this first download; "
                f"recorded sha256 {digest}",
                file=sys.stderr,
            )
            if entry.reference_sha256 and entry.reference_sha256 != digest:
                print(
                    f"mabpd data: note: the course's reference copy has sha256 {entry.reference_sha256} "
                    "(a mirror; the bytes differ, the content may not)",
                    file=sys.stderr,
                )
    elif not quiet:
        print(f"mabpd data: {entry.dataset}/{entry.relpath}: downloaded, sha256 verified", file=sys.stderr)
    return dest


def _extract_member(archive: Path, entry: FileEntry) -> Path:
    """Pull ``entry.archive_member`` (matched by file name) out of a downloaded zip into a temporary file."""
    try:
        with zipfile.ZipFile(archive) as zf:
            names = [n for n in zf.namelist() if Path(n).name == entry.archive_member]
            if not names:
                raise ChecksumError(f"{entry.url} does not contain {entry.archive_member}")
            fd, out_name = tempfile.mkstemp(prefix=".part-", dir=archive.parent)
            try:
                with os.fdopen(fd, "wb") as out, zf.open(names[0]) as src:
                    shutil.copyfileobj(src, out, length=1 << 20)
            except Exception:
                Path(out_name).unlink(missing_ok=True)
                raise
    except zipfile.BadZipFile as exc:
        raise ChecksumError(f"{entry.dataset}/{entry.relpath}: the download is not a valid zip ({exc})") from None
    return Path(out_name)


def status(data_dir: str | os.PathLike | None = None, cache_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """One row per manifest file: where it is found (local / cache / missing) and whether it verifies."""
    import pandas as pd

    base = _resolve_data_dir(data_dir)
    cache = _resolve_cache_dir(cache_dir)
    rows = []
    for (dataset, relpath), e in manifest().items():
        where, path, check = "missing", None, ""
        if base is not None and (base / dataset / relpath).is_file():
            where, path = "local", base / dataset / relpath
        elif (cache / dataset / relpath).is_file():
            where, path = "cache", cache / dataset / relpath
        if path is not None:
            try:
                _verify(e, path)
                if e.sha256 or _tofu_path(path).exists():
                    check = "ok"
                elif e.reference_sha256:
                    same = sha256_file(path) == e.reference_sha256
                    check = "ok (same as the reference copy)" if same else "differs from the reference copy (no sha256 published)"
                else:
                    check = "unchecked (no sha256 published)"
            except ChecksumError as exc:
                check = f"MISMATCH: {exc}"
        rows.append({"dataset": dataset, "file": relpath, "where": where, "check": check,
                     "downloadable": bool(e.url), "licence": e.licence})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------------------------
# BABE
# --------------------------------------------------------------------------------------------
BABE = "BABE"
LLM_LABEL_MODELS = ("falcon_7b", "flan_ul2", "gpt_3_5", "gpt_4", "llama_7b", "llama_13b", "mistral_7b",
                    "mixtral_8x7b", "openchat", "zephyr")


def _parse_list(value: Any) -> list[str]:
    if isinstance(value, (list, tuple)):
        return [str(v) for v in value]
    if hasattr(value, "tolist"):
        return [str(v) for v in value.tolist()]
    if not isinstance(value, str) or not value.strip():
        return []
    try:
        parsed = ast.literal_eval(value)
    except (ValueError, SyntaxError):
        return [value]
    return [str(v) for v in parsed] if isinstance(parsed, (list, tuple)) else [str(parsed)]


def _stable_id(prefix: str, text: str) -> str:
    return f"{prefix}-{hashlib.sha1(text.encode('utf-8')).hexdigest()[:12]}"


def load_babe(
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    llm_labels: bool = True,
    download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """BABE sentences with expert labels (1 = biased, 0 = neutral).

    ``split="train"`` (3,121 rows: 1,740 biased / 1,381 neutral) reads the local reconstructed CSV
    when present, else the pinned Hugging Face parquet. ``split="test"`` (1,000 rows) is the
    held-out split: evaluate on it once at the end, never choose thresholds or prompts on it.

    ``llm_labels``: add the ten LLMs' zero-shot ``<model>_label`` columns (nullable 0/1; ``?``
    and empty answers are NA) from the annomatic file when it is available (3,021 train rows;
    the other rows get NA). Useful as reference anchors, never as training signal.
    """
    import pandas as pd

    if split not in ("train", "test"):
        raise ValueError(f"BABE split must be 'train' or 'test', not {split!r}")
    path: Path | None = None
    if split == "train":
        try:
            path = locate(BABE, "derived/babe_hf_train3121_reconstructed.csv", data_dir, download=False, cache_dir=cache_dir)
        except FileNotFoundError:
            path = None
    if path is None:
        path = locate(BABE, f"data/{split}-00000-of-00001.parquet", data_dir, download=download, cache_dir=cache_dir)
    raw = pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path, dtype={"uuid": "string"})
    if "label" not in raw.columns and "label_bias" in raw.columns:  # some BABE releases name it label_bias
        raw = raw.assign(label=raw["label_bias"].map(lambda v: 1 if str(v).lower().startswith("biased") else 0))
    df = pd.DataFrame({
        "id": [u if isinstance(u, str) and u else _stable_id("babe", t) for u, t in zip(raw.get("uuid", [None] * len(raw)), raw["text"])],
        "text": raw["text"].astype(str),
        "label": raw["label"].astype(int),
    })
    for col in ("outlet", "topic", "type", "label_opinion", "news_link"):
        df[col] = raw[col].where(raw[col].notna(), None) if col in raw.columns else None
    df["biased_words"] = [_parse_list(v) for v in raw["biased_words"]] if "biased_words" in raw.columns else [[] for _ in range(len(raw))]
    sources = [str(path)]
    if llm_labels and split == "train":
        try:
            anno_path = locate(BABE, "annomatic_hf_split/babe_train_dev_annomatic.csv", data_dir, download=False, cache_dir=cache_dir)
        except FileNotFoundError:
            anno_path = None
        if anno_path is not None:
            anno = pd.read_csv(anno_path, dtype=str)
            label_cols = [c for c in anno.columns if c.endswith("_label")]
            keyed = anno.drop_duplicates("uuid").set_index("uuid")[label_cols]
            for c in label_cols:
                vals = pd.to_numeric(keyed[c].str.strip(), errors="coerce")  # '?' / empty -> NaN
                vals = vals.where(vals.isin([0, 1]))
                df[c] = df["id"].map(vals).astype("Int64")
            df.attrs["llm_label_columns"] = label_cols
            sources.append(str(anno_path))
    df.attrs["source"] = sources
    df.attrs["dataset"] = f"BABE/{split}"
    return df


# --------------------------------------------------------------------------------------------
# SemEval-2019 Task 4 HyperPartisan (by article)
# --------------------------------------------------------------------------------------------
HYPERPARTISAN = "SemEval2019-Task4-Hyperpartisan"
_HP_FILES = {
    "train": ("articles-training-byarticle-20181122.xml", "ground-truth-training-byarticle-20181122.xml"),
    "test": ("articles-test-byarticle-20181207.xml", "ground-truth-test-byarticle-20181207.xml"),
}
_BLOCK_TAGS = {"p", "q", "blockquote", "h1", "h2", "h3", "h4", "li"}


_SPACES = re.compile(r"[ \t\u00a0\u200b]+")


def _clean_article(text: str) -> str:
    """Decode HTML entities (repeatedly: the files hold double-escaped ones such as ``&amp;amp;``)
    and normalise whitespace, keeping paragraph breaks.

    A fast loader-level clean: the pipeline cleans again with :func:`mabpd_kit.text.clean`,
    which also keeps the offset map back to the raw text (too slow to run here on every article).
    """
    import html

    for _ in range(3):
        decoded = html.unescape(text)
        if decoded == text:
            break
        text = decoded
    lines = (_SPACES.sub(" ", line).strip() for line in text.splitlines())
    return "\n".join(line for line in lines if line)


def _article_text(elem) -> str:
    """Text of an <article> element: every text node in order, block elements (``<p>``, ``<q>``, ...) on their own lines."""
    parts: list[str] = [elem.text or ""]
    for child in elem:
        block = child.tag in _BLOCK_TAGS
        parts += ["\n" if block else "", "".join(child.itertext()), "\n" if block else "", child.tail or ""]
    return "".join(parts)


def load_hyperpartisan(
    split: str = "train",
    data_dir: str | os.PathLike | None = None,
    truncate: int | None = None,
    download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """SemEval-2019 Task 4 by-article news: whole articles, label 1 = hyperpartisan.

    Train: 645 articles (238 hyperpartisan / 407 not); test (held out, downloaded from Zenodo):
    628 (314 / 314). HTML entities are decoded (double-escaped ones such as ``&amp;amp;`` too),
    whitespace normalised, one paragraph per line.
    ``truncate=N`` keeps the first N words (the paper used 600) with
    :func:`mabpd_kit.text.truncate_words`; ``n_words`` is the length before cutting,
    ``truncated`` says whether the article was cut, and ``df.attrs["n_truncated"]`` counts them.
    """
    import xml.etree.ElementTree as ET

    import pandas as pd

    from mabpd_kit.text import truncate_words

    if split not in _HP_FILES:
        raise ValueError(f"HyperPartisan split must be 'train' or 'test', not {split!r}")
    art_name, gt_name = _HP_FILES[split]
    art_path = locate(HYPERPARTISAN, art_name, data_dir, download=download, cache_dir=cache_dir)
    gt_path = locate(HYPERPARTISAN, gt_name, data_dir, download=download, cache_dir=cache_dir)
    truth = {
        a.get("id"): (a.get("hyperpartisan", "").lower() == "true", a.get("url"))
        for a in ET.parse(gt_path).getroot().iter("article")
    }
    rows = []
    for a in ET.parse(art_path).getroot().iter("article"):
        aid = a.get("id")
        if aid not in truth:
            raise ValueError(f"article {aid} of {art_path.name} has no label in {gt_path.name}")
        text = _clean_article(_article_text(a))
        title = _clean_article(a.get("title") or "")
        n_words = len(text.split())
        cut = False
        if truncate is not None:
            t = truncate_words(text, truncate)
            text, cut = t.text, t.truncated
        rows.append({"id": aid, "title": title, "published_at": a.get("published-at"), "url": truth[aid][1],
                     "text": text, "label": int(truth[aid][0]), "n_words": n_words, "truncated": cut})
    df = pd.DataFrame(rows)
    df.attrs.update(source=[str(art_path), str(gt_path)], dataset=f"HyperPartisan/{split}",
                    truncate=truncate, n_truncated=int(df["truncated"].sum()))
    return df


# --------------------------------------------------------------------------------------------
# half-truth: PolitiFact-Hidden, RADAR evidence, LIAR, LIAR-PLUS
# --------------------------------------------------------------------------------------------
LABELS3 = ("TRUE", "HALF-TRUE", "FALSE")

#: LIAR's six PolitiFact ratings folded into the three half-truth labels used here.
#: true, mostly-true -> TRUE; half-true -> HALF-TRUE; barely-true, false, pants-fire -> FALSE.
#: (TRACER/PolitiFact-Hidden folds differently: Mostly True joins HALF-TRUE there. LIAR has no
#: "mostly false" rating; its "barely-true" is PolitiFact's old name for it.)
LIAR_TO_3 = {
    "true": "TRUE",
    "mostly-true": "TRUE",
    "half-true": "HALF-TRUE",
    "barely-true": "FALSE",
    "false": "FALSE",
    "pants-fire": "FALSE",
}
LIAR_COLUMNS = ["id", "label", "statement", "subjects", "speaker", "speaker_job", "state", "party",
                "barely_true_counts", "false_counts", "half_true_counts", "mostly_true_counts",
                "pants_on_fire_counts", "context"]


def _politifact_labels(data_dir, download, cache_dir) -> dict[str, str]:
    path = locate("PolitiFact-Hidden", "GT_test_all.json", data_dir, download=download, cache_dir=cache_dir)
    return {str(k): str(v).upper() for k, v in json.loads(path.read_text(encoding="utf-8")).items()}


def load_politifact_hidden(
    data_dir: str | os.PathLike | None = None, download: bool = True, cache_dir: str | os.PathLike | None = None
) -> pd.DataFrame:
    """PolitiFact-Hidden test split: 2,000 claims (ids 12994-14993), labels FALSE 1,501 / HALF-TRUE 406 / TRUE 93."""
    import pandas as pd

    labels = _politifact_labels(data_dir, download, cache_dir)
    path = locate("PolitiFact-Hidden", "example_to_claim.json", data_dir, download=download, cache_dir=cache_dir)
    claims = json.loads(path.read_text(encoding="utf-8"))
    missing = set(labels) ^ {str(k) for k in claims}
    if missing:
        raise ValueError(f"claims and labels disagree on {len(missing)} ids, e.g. {sorted(missing)[:3]}")
    df = pd.DataFrame({"id": list(labels), "claim": [claims[k] for k in labels], "label": list(labels.values())})
    df = df.sort_values("id", key=lambda s: s.astype(int), ignore_index=True)
    df.attrs.update(source=[str(path)], dataset="PolitiFact-Hidden/test")
    return df


_RADAR_KINDS = {
    "gold": "matching_evidence_full.json",
    "retrieved": "retrieved_evidence_bgebase_20_veracity150.json",
    "matching": "matching_evidence.json",
    "400": "intent_enhanced_con_pro_bge_large_400_top20_by_score_with_evi.json",
}


def load_radar_claims(
    kind: str = "gold",
    data_dir: str | os.PathLike | None = None,
    download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """RADAR claims with evidence sentences and their PolitiFact-Hidden labels.

    ``kind``: ``"gold"`` (150 balanced claims, the fact-check article's sentences, 3-46 each),
    ``"retrieved"`` (the same 150, top-20 sentences from a bge-base index over the pooled
    evidence of all test claims: noisy), ``"matching"`` (the same 150, another top-20
    retrieval), ``"400"`` (400 claims, 20 sentences from intent-based pro/con retrieval;
    FALSE 304 / HALF-TRUE 84 / TRUE 12).
    """
    import pandas as pd

    if kind not in _RADAR_KINDS:
        raise ValueError(f"kind must be one of {sorted(_RADAR_KINDS)}, not {kind!r}")
    path = locate("RADAR", _RADAR_KINDS[kind], data_dir, download=download, cache_dir=cache_dir)
    data = json.loads(path.read_text(encoding="utf-8"))
    labels = _politifact_labels(data_dir, download, cache_dir)
    rows = [{"id": str(k), "claim": v["claim"], "label": labels.get(str(k)), "evidence": list(v.get("evidence_full_text", []))}
            for k, v in data.items()]
    df = pd.DataFrame(rows)
    if df["label"].isna().any():
        raise ValueError(f"{int(df['label'].isna().sum())} RADAR claims have no PolitiFact-Hidden label")
    df.attrs.update(source=[str(path)], dataset=f"RADAR/{kind}")
    return df


def _liar_records(path: Path, n_fields: int, has_index: bool) -> list[list[str]]:
    """Split a LIAR/LIAR-PLUS TSV into records.

    The files use no quoting, and LIAR-PLUS's test2.tsv has fields with raw newlines and stray
    quotes (pandas reads 1,267 or 1,299 rows instead of 1,283). A record always starts with
    ``[index<TAB>]NNNN.json<TAB>``, so a line that does not start that way continues the previous one.
    """
    start = re.compile(r"^\d+\t\d+\.json\t" if has_index else r"^\d+\.json\t")
    records: list[str] = []
    for line in path.read_text(encoding="utf-8").split("\n"):
        if start.match(line):
            records.append(line)
        elif records and line:
            records[-1] += "\n" + line
    out = []
    for r in records:
        fields = r.rstrip("\r").split("\t")
        if len(fields) < n_fields:
            fields += [""] * (n_fields - len(fields))
        elif len(fields) > n_fields:  # stray tabs inside the last free-text field
            fields = fields[: n_fields - 1] + ["\t".join(fields[n_fields - 1 :])]
        out.append(fields)
    return out


def _liar_frame(records: list[list[str]], columns: list[str]) -> pd.DataFrame:
    import pandas as pd

    df = pd.DataFrame(records, columns=columns)
    df["id"] = df["id"].str.replace(".json", "", regex=False)
    unknown = set(df["label"]) - set(LIAR_TO_3)
    if unknown:
        raise ValueError(f"unknown LIAR labels {sorted(unknown)}")
    df.insert(2, "label3", df["label"].map(LIAR_TO_3))
    for c in columns:
        if c.endswith("_counts"):
            df[c] = pd.to_numeric(df[c], errors="coerce").astype("Int64")
    return df


def load_liar(
    split: str = "train", data_dir: str | os.PathLike | None = None, download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """LIAR statements (train 10,269 / valid 1,284 / test 1,283) with the 6-way ``label`` and the 3-way ``label3`` (:data:`LIAR_TO_3`)."""
    if split not in ("train", "valid", "test"):
        raise ValueError(f"LIAR split must be train, valid or test, not {split!r}")
    path = locate("LIAR", f"{split}.tsv", data_dir, download=download, cache_dir=cache_dir)
    df = _liar_frame(_liar_records(path, len(LIAR_COLUMNS), has_index=False), LIAR_COLUMNS)
    df.attrs.update(source=[str(path)], dataset=f"LIAR/{split}")
    return df


def load_liar_plus(
    split: str = "val", data_dir: str | os.PathLike | None = None, download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """LIAR-PLUS (val 1,284 / test 1,283 / train): LIAR's columns plus ``justification`` (sentences
    from the article's "Our ruling" with the verdict sentence removed) and ``evidence`` (the
    justification split into sentences, ready for a debate's evidence pool)."""
    from mabpd_kit.text import split_sentences

    names = {"train": "train2.tsv", "val": "val2.tsv", "valid": "val2.tsv", "test": "test2.tsv"}
    if split not in names:
        raise ValueError(f"LIAR-PLUS split must be train, val or test, not {split!r}")
    path = locate("LIAR-PLUS", names[split], data_dir, download=download, cache_dir=cache_dir)
    cols = ["row"] + LIAR_COLUMNS + ["justification"]
    df = _liar_frame(_liar_records(path, len(cols), has_index=True), cols).drop(columns="row")
    df["evidence"] = [[j[s:e].strip() for s, e in split_sentences(j) if j[s:e].strip()] for j in df["justification"]]
    df.attrs.update(source=[str(path)], dataset=f"LIAR-PLUS/{split}")
    return df


# --------------------------------------------------------------------------------------------
# identity-bias question sets: MMLU professional medicine, GSM8K
# --------------------------------------------------------------------------------------------
MMLU = "MMLU-professional_medicine"


def load_mmlu(
    split: str = "test", data_dir: str | os.PathLike | None = None, download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """MMLU professional medicine, 4 options (test 272 rows: answers A 50 / B 55 / C 45 / D 122,
    so "always D" already scores 44.9%; validation 31; dev 5)."""
    import pandas as pd

    if split not in ("test", "validation", "dev"):
        raise ValueError(f"MMLU split must be test, validation or dev, not {split!r}")
    path: Path | None = None
    if split == "test":
        try:
            path = locate(MMLU, "professional_medicine_test.csv", data_dir, download=False, cache_dir=cache_dir)
        except FileNotFoundError:
            path = None
    if path is not None:
        df = pd.read_csv(path, header=None, names=["question", "A", "B", "C", "D", "answer"], dtype=str)
    else:
        path = locate(MMLU, f"professional_medicine/{split}-00000-of-00001.parquet", data_dir, download=download, cache_dir=cache_dir)
        raw = pd.read_parquet(path)  # Hugging Face cais/mmlu: question, subject, choices (4), answer (0-3)
        choices = pd.DataFrame([list(c) for c in raw["choices"]], columns=["A", "B", "C", "D"])
        df = pd.concat([raw[["question"]].reset_index(drop=True), choices], axis=1)
        df["answer"] = [("A", "B", "C", "D")[int(a)] for a in raw["answer"]]
    df["answer"] = df["answer"].str.strip().str.upper()
    if not df["answer"].isin(["A", "B", "C", "D"]).all():
        raise ValueError(f"{path.name}: answers outside A-D")
    df.insert(0, "id", [f"mmlu-pm-{split}-{i:03d}" for i in range(len(df))])
    df.attrs.update(source=[str(path)], dataset=f"MMLU-professional_medicine/{split}")
    return df


_GSM_FINAL = re.compile(r"####\s*(.+?)\s*$", re.DOTALL)


def load_gsm8k(
    split: str = "test", data_dir: str | os.PathLike | None = None, download: bool = True,
    cache_dir: str | os.PathLike | None = None,
) -> pd.DataFrame:
    """GSM8K maths word problems (test 1,319, train 7,473). ``answer`` is the gold number after
    ``####`` with thousands separators removed (a string, e.g. ``"18"``); ``solution`` the worked text."""
    import pandas as pd

    if split not in ("test", "train"):
        raise ValueError(f"GSM8K split must be test or train, not {split!r}")
    path = locate("GSM8K", f"{split}.jsonl", data_dir, download=download, cache_dir=cache_dir)
    rows = []
    for i, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        if not line.strip():
            continue
        rec = json.loads(line)
        m = _GSM_FINAL.search(rec["answer"])
        if m is None:
            raise ValueError(f"{path.name} line {i + 1}: no '#### <answer>' marker")
        rows.append({"id": f"gsm8k-{split}-{len(rows):04d}", "question": rec["question"],
                     "answer": m.group(1).replace(",", "").strip(), "solution": rec["answer"]})
    df = pd.DataFrame(rows)
    df.attrs.update(source=[str(path)], dataset=f"GSM8K/{split}")
    return df


# --------------------------------------------------------------------------------------------
# `mabpd data`
# --------------------------------------------------------------------------------------------
def cli_add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="data_command", metavar="ACTION")
    s = sub.add_parser("status", help="where each benchmark file is found and whether it verifies")
    f = sub.add_parser("fetch", help="download the downloadable files of DATASET(s) into the cache")
    f.add_argument("datasets", nargs="*", help="dataset names as in the manifest (default: all)")
    lo = sub.add_parser("locate", help="print the path of DATASET RELPATH")
    lo.add_argument("dataset")
    lo.add_argument("relpath")
    for p in (s, f, lo):
        p.add_argument("--data-dir", default=None, help="local benchmark folder (default: MABPD_DATA_DIR)")
        p.add_argument("--cache-dir", default=None, help="download cache (default: MABPD_CACHE_DIR/data or the user cache)")


def cli_run(args) -> int:
    action = getattr(args, "data_command", None) or "status"
    ddir, cdir = getattr(args, "data_dir", None), getattr(args, "cache_dir", None)
    if action == "locate":
        print(locate(args.dataset, args.relpath, ddir, cache_dir=cdir))
        return 0
    if action == "fetch":
        wanted = set(args.datasets or [])
        known = {d for d, _ in manifest()}
        if wanted - known:
            raise KeyError(f"unknown dataset(s) {sorted(wanted - known)}; choose from {sorted(known)}")
        failed = 0
        for (dataset, relpath), e in manifest().items():
            if (wanted and dataset not in wanted) or not e.url:
                continue
            try:
                print(f"{dataset}/{relpath}: {locate(dataset, relpath, ddir, cache_dir=cdir)}")
            except (FileNotFoundError, ChecksumError) as exc:
                failed += 1
                print(f"{dataset}/{relpath}: FAILED: {exc}", file=sys.stderr)
        return 1 if failed else 0
    table = status(ddir, cdir)
    w_ds, w_file = int(table["dataset"].str.len().max()), int(table["file"].str.len().max())
    print(f"{'dataset':<{w_ds}}  {'file':<{w_file}}  {'where':<7}  check")
    for r in table.itertuples(index=False):
        where = r.where if r.where != "missing" or r.downloadable else "missing (place by hand)"
        print(f"{r.dataset:<{w_ds}}  {r.file:<{w_file}}  {where:<7}  {r.check}")
    return 0

"""Without benchmark data a lesson names its data as it is and prints no score it cannot back (issue 40).

A student with only the course bundle runs every lesson on the sentences shipped with the kit (28 teaching
sentences, 12 hard ones). Two rules hold for what such a run prints:

1. **Name**: the data is called what it is. No output calls it BABE (unless it says BABE is *not* there), and
   a count of teaching or hard sentences is the count the kit ships.
2. **Scores**: every macro F1, F1, accuracy, precision, recall or AUC printed on fewer than
   ``Config().metrics.min_items`` items carries its interval (``[lo, hi]``) or says it is too few to conclude;
   a sentence that states its n (``n = 300``, ``600 simulated items``) at or above that is free to give a number.

The library makes this hold by construction (``mk.data.lesson_data`` names the data, ``mk.data.metric_text`` never
prints a score without its interval); the slow test below executes each lesson (FAST, no data) and reads its
outputs, so a lesson that prints a bare score or a wrong name fails. It runs with ``MABPD_RUN_LESSONS=1`` (or
``MABPD_RUN_EXERCISES=1``, the switch of the other notebook-executing tests), about 30 s a lesson. The rules are first checked on hand-made text.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path

import pytest

import mabpd_kit as mk

ROOT = Path(__file__).resolve().parents[1]
#: every lesson but 09 (corpus analysis, owned and checked on its own branch)
LESSONS = [p for p in sorted((ROOT / "notebooks").glob("[0-9][0-9]_*.ipynb")) if not p.name.startswith("09_")]

METRIC = re.compile(r"\b(macro[ -]?F1|F1|accuracy|precision|recall|AUC)\b.*?(?<![\d.])[-+]?[01]\.\d{2,}", re.I)
INTERVAL = re.compile(r"\[\s*[-+]?\d*\.?\d+%?\s*,\s*[-+]?\d*\.?\d+%?\s*\]")
REFUSE = re.compile(r"too few|cannot be concluded|cannot conclude", re.I)
COUNT = r"(\d{1,3}(?:,\d{3})+|\d+)"
N_STATED = re.compile(rf"\bn\s*=\s*{COUNT}|\b{COUNT}\s+(?:simulated\s+)?(?:items|sentences|claims|trajectories|articles)\b|'n': {COUNT}", re.I)
NO_BABE = re.compile(r"not on this machine|no BABE|cannot run|needs BABE|\(MABPD_DATA_DIR\)|is not available", re.I)


def _n(text: str) -> int | None:
    found = [int(g.replace(",", "")) for m in N_STATED.finditer(text) for g in m.groups() if g]
    return max(found) if found else None


def score_problems(text: str, min_items: int = 100) -> list[str]:
    """Sentences of ``text`` that state a score with no interval, no refusal and no n of at least ``min_items``."""
    out = []
    for line in text.splitlines():
        for part in re.split(r"(?<=[.;])\s+(?=[A-Z])", line):
            if not METRIC.search(part) or INTERVAL.search(part) or REFUSE.search(part):
                continue
            n = _n(part)
            if n is None or n < min_items:
                out.append(part.strip()[:160])
    return out


def name_problems(text: str, n_teaching: int, n_hard: int) -> list[str]:
    """Lines of a run without data that call the data BABE, or miscount the shipped sentences."""
    out = []
    for line in text.splitlines():
        if re.search(r"\bBABE train\b", line) and not NO_BABE.search(line):
            out.append(f"calls its data BABE train: {line.strip()[:160]}")
        for m in re.finditer(r"\b(\d+) teaching (?:sentences|samples)\b", line):
            if int(m.group(1)) != n_teaching:
                out.append(f"{m.group(1)} teaching sentences (the kit ships {n_teaching}): {line.strip()[:120]}")
        for m in re.finditer(r"\b(\d+) hard (?:ones|sentences)\b", line):
            if int(m.group(1)) != n_hard:
                out.append(f"{m.group(1)} hard sentences (the kit ships {n_hard}): {line.strip()[:120]}")
    return out


def output_text(nb: dict) -> str:
    """Everything a student reads in a run's outputs: streams, plain text, markdown and HTML without charts."""
    parts = []
    for cell in nb["cells"]:
        for o in cell.get("outputs", []):
            if o.get("output_type") == "stream":
                parts.append("".join(o["text"]) if isinstance(o["text"], list) else o["text"])
                continue
            data = o.get("data", {})
            for kind in ("text/markdown", "text/html", "text/plain"):
                if kind in data:
                    t = "".join(data[kind]) if isinstance(data[kind], list) else data[kind]
                    if kind == "text/html":
                        t = re.sub(r"<svg.*?</svg>|<img[^>]*>|<style.*?</style>", " ", t, flags=re.S)
                        t = re.sub(r"<[^>]+>", " ", re.sub(r"<(p|br|tr|div|li)\b[^>]*>", "\n", t))
                        t = html.unescape(t)
                    parts.append(t)
                    break
    return "\n".join(parts)


# ------------------------------------------------------------------------------------------------
# the rules on hand-made text (so the slow test is known to catch what it should)
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "bad"), [
    ("full scores macro F1 0.850 on 40 items.", True),
    ("Macro F1 on the samples: full 1.000, no-debate 0.816", True),
    ("precision 0.889 against 0.733, recall 0.800 against 0.550", True),
    ("full macro F1 0.850 [0.723, 0.949] (n = 40: too few items to conclude anything)", False),
    ("macro F1 0.850 (n = 40): too few items to conclude anything", False),
    ("n = 300 simulated items: macro F1 full 0.892, no-debate 0.926", False),
    ("no-verifier: precision -0.044, recall +0.037 against full (n = 300 simulated items)", False),
    ("macro F1 0.797 on 60 simulated items", True),
    ("3 of 8 sentences flagged at floor 0.85", False),
])
def test_score_rule(text, bad):
    assert bool(score_problems(text)) is bad


def test_name_rule():
    assert name_problems("BABE train, 28 items, rule-based agents", 28, 12)
    assert not name_problems("BABE train is not on this machine (MABPD_DATA_DIR): using the samples", 28, 12)
    assert name_problems("the 40 teaching sentences shipped with the kit", 28, 12)
    assert not name_problems("the 28 teaching sentences shipped with the kit plus 12 hard ones (40 sentences)", 28, 12)


def test_metric_text_always_carries_an_interval_and_refuses_small_n():
    gold = [1, 0] * 20
    pred = [1, 0] * 15 + [0, 0] * 5
    text = mk.data.metric_text(gold, pred, n_resamples=300, seed=0)
    est, lo, hi = mk.metrics.metric_ci(gold, pred, n_resamples=300, seed=0)
    assert text == f"macro F1 {est:.3f} [{lo:.3f}, {hi:.3f}] (n = 40: too few items to conclude anything)"
    assert not score_problems(text)
    big = mk.data.metric_text(gold * 3, pred * 3, "accuracy", n_resamples=300, seed=0)
    assert big.startswith("accuracy ") and big.endswith("(n = 120)") and not score_problems(big)
    with pytest.raises(ValueError, match="metric must be one of"):
        mk.data.metric_text(gold, pred, "kappa")


def test_lesson_data_without_a_benchmark_names_the_shipped_sentences(tmp_path, monkeypatch):
    monkeypatch.delenv("MABPD_DATA_DIR", raising=False)
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path))
    data = mk.data.lesson_data(200)
    n_teaching, n_hard = len(mk.data.samples()), len(mk.data.hard_samples())
    assert (data.n, data.benchmark) == (n_teaching + n_hard, False) and len(data.frame) == data.n
    assert data.name == f"the {n_teaching} teaching sentences shipped with the kit plus {n_hard} hard ones ({data.n} sentences)"
    assert not name_problems(data.name + "\n" + mk.data.describe(), n_teaching, n_hard)
    assert "too few items" in data.score(data.frame["label"], n_resamples=100)


@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_every_code_cell_of_a_lesson_parses(path):
    """A cheap guard for the slow run below: an edited lesson whose cell no longer parses fails here, in seconds."""
    import ast

    for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"]):
        if cell["cell_type"] == "code":
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            src = "\n".join(line for line in src.splitlines() if not line.lstrip().startswith(("%", "!")))
            try:
                ast.parse(src)
            except SyntaxError as exc:
                pytest.fail(f"{path.name}, cell {i + 1}: {exc.msg} (line {exc.lineno})")


# ------------------------------------------------------------------------------------------------
# every lesson, executed as a student without data would run it
# ------------------------------------------------------------------------------------------------


RUN_LESSONS = os.environ.get("MABPD_RUN_LESSONS") == "1" or os.environ.get("MABPD_RUN_EXERCISES") == "1"


@pytest.mark.slow
@pytest.mark.skipif(not RUN_LESSONS, reason="executes every lesson (about 30 s each): set MABPD_RUN_LESSONS=1")
@pytest.mark.parametrize("path", LESSONS, ids=[p.name for p in LESSONS])
def test_a_lesson_run_without_data_names_its_data_and_backs_its_scores(path, tmp_path, monkeypatch):
    nbclient = pytest.importorskip("nbclient")
    import nbformat

    for var in ("MABPD_DATA_DIR", "MABPD_BASE_URL", "MABPD_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MABPD_PACK"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path))  # no download folder with benchmark copies either
    monkeypatch.setenv("MABPD_OFFLINE", "1")
    monkeypatch.setenv("FAST", "1")
    monkeypatch.setenv("PYTHONPATH", str(ROOT))
    nb = nbformat.reads(path.read_text(encoding="utf-8"), as_version=4)
    nbclient.NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(path.parent)}}).execute()
    text = output_text(json.loads(nbformat.writes(nb)))
    cfg = mk.Config()
    problems = (name_problems(text, len(mk.data.samples()), len(mk.data.hard_samples()))
                + score_problems(text, cfg.metrics.min_items))
    assert not problems, f"{path.name} without data:\n" + "\n".join(problems)

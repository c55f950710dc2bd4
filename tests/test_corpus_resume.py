"""Kill -9 and resume: a two-process corpus run killed mid-way recomputes no finished article, and
the resumed results equal an uninterrupted run's."""

from __future__ import annotations

import json
import sys
import textwrap

import pandas as pd

from mabpd_kit.corpus import CorpusConfig, analyze, read
from mabpd_kit.testing import kill_9_when

N = 240
SENTS = ["The council met on Monday to discuss the annual budget.", "Critics slammed the disastrous so-called reform.",
         "Officials said the plan would be reviewed next year.", "Lawmakers rammed the bill through in one night."]
RUN = textwrap.dedent("""
    import sys, time
    import pandas as pd
    from mabpd_kit.corpus import CorpusConfig, analyze, read
    from mabpd_kit.corpus import articles

    src, out = sys.argv[1], sys.argv[2]
    real = articles.analyze_doc

    def slow(*a, **kw):  # slow enough to be killed mid-way
        time.sleep(0.01)
        return real(*a, **kw)

    articles.analyze_doc = slow
    import mabpd_kit.corpus.parallel as par
    par.analyze_doc = slow
    analyze(read(src, id_col="doc"), out, workers=2, settings=CorpusConfig(chunk_articles=4))
""")


def _corpus(path):
    rows = [{"doc": f"d{k:03d}", "outlet": f"o{k % 4}",
             "text": " ".join(SENTS[(k + j) % 4] for j in range(1 + k % 7))} for k in range(N)]
    pd.DataFrame(rows).to_json(path, orient="records", lines=True)


def _valid_ids(path) -> list[str]:
    ids = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            ids.append(json.loads(line)["id"])
        except ValueError:  # the torn last line of the killed run
            continue
    return ids


def test_kill_9_mid_run_then_resume_repeats_nothing(tmp_path):
    src, out = tmp_path / "c.jsonl", tmp_path / "run.jsonl"
    _corpus(src)
    script = tmp_path / "run.py"
    script.write_text(RUN)

    def some_done() -> bool:
        return out.exists() and out.read_text(encoding="utf-8").count("\n") >= 40

    kill_9_when([sys.executable, str(script), str(src), str(out)], some_done, timeout_s=120)
    _workers_end_with_the_run(script)
    before = _valid_ids(out)
    assert 40 <= len(before) < N and len(set(before)) == len(before)

    res = analyze(read(src, id_col="doc"), out, workers=2, settings=CorpusConfig(chunk_articles=4))
    assert res.resumed == len(before) and res.computed == N - len(before)  # nothing finished is redone
    after = _valid_ids(out)
    assert len(after) == N and sorted(after) == sorted(f"d{k:03d}" for k in range(N))  # each id written once
    again = analyze(read(src, id_col="doc"), out, workers=1)  # the same fingerprint on one process
    assert again.resumed == N and again.computed == 0

    fresh = analyze(read(src, id_col="doc"), tmp_path / "fresh.jsonl", workers=1)
    key = lambda r: sorted((a.id, a.n_sentences, a.n_biased, a.n_spans, a.meta["outlet"]) for a in r)  # noqa: E731
    assert key(res) == key(fresh)


def _workers_end_with_the_run(script, timeout_s: float = 10.0) -> None:
    """The killed run's worker processes notice and exit (no orphan keeps a core or waits forever)."""
    import os
    import time

    def orphans() -> list[int]:
        found = []
        for pid in (p for p in os.listdir("/proc") if p.isdigit()):
            try:
                with open(f"/proc/{pid}/cmdline", "rb") as fh:
                    if str(script).encode() in fh.read():
                        found.append(int(pid))
            except OSError:
                continue
        return found

    if not os.path.isdir("/proc"):
        return
    deadline = time.monotonic() + timeout_s
    while orphans() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not orphans(), f"worker processes outlived the killed run: {orphans()}"


def test_a_changed_text_or_setting_is_computed_again(tmp_path):
    df = pd.DataFrame({"text": SENTS})
    out = tmp_path / "r.jsonl"
    analyze(read(df), out, workers=1)
    changed = df.assign(text=df["text"].where(df.index != 2, "A new text, entirely rewritten here."))
    res = analyze(read(changed), out, workers=1)
    assert (res.resumed, res.computed) == (3, 1) and res["2"].text == "A new text, entirely rewritten here."
    res = analyze(read(df), out, workers=1, settings=CorpusConfig(min_sentence_words=5))
    assert (res.resumed, res.computed) == (0, 4)  # another sentence setting: another fingerprint
    res = analyze(read(df), out, workers=1, settings=CorpusConfig(min_sentence_words=5, article_decision="count",
                                                                  article_threshold=1))
    assert (res.resumed, res.computed) == (4, 0) and res.threshold == 1  # the threshold only re-decides

"""The results file of a corpus run, on the one runner (issue 21, points 1, 4 and 5):

1. a corpus ``--llm`` run at 50% faults, rerun on a healthy server with the same cache and results
   file, decides every article whole (failed *sentences* are asked again, not only failed
   articles), asks nothing again for calls that had succeeded, and the failed count the CLI prints
   equals the count in the file, on the first run and on the resumed one;
4. a second process cannot write a results file another run holds: one line naming it, no traceback;
5. the file is reconciled with the corpus: rerunning with another ``--id-col`` leaves exactly the
   corpus's rows in it (the earlier records go to ``FILE.stale.jsonl``, not lost), once each, in order.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import textwrap
import time

import pandas as pd
from test_corpus_llm import _script

from mabpd_kit import cli
from mabpd_kit.config import Config
from mabpd_kit.corpus import CorpusConfig, analyze, read
from mabpd_kit.llm import connect
from mabpd_kit.testing import all_text
from mabpd_kit.testing.faults import FaultyScript

ARTICLES = [" ".join(f"{w} the plan of district {a} on day {k}." for k in range(6))
            for a in range(6) for w in ("Critics slammed", "The council read")]  # every sentence its own


def _records(path):
    return [json.loads(ln) for ln in path.read_text(encoding="utf-8").splitlines() if ln.strip()]


def _sentence_of(request) -> str:
    return all_text(request).split("<article>")[-1].split("</article>")[0].strip()


def test_a_faulty_llm_corpus_run_is_completed_by_a_healthy_rerun_without_paying_twice(fake_server, tmp_path):
    answered: set[str] = set()  # requests that got a healthy answer

    class Faulty(FaultyScript):
        def __call__(self, request):
            reply = super().__call__(request)
            if isinstance(reply, dict):
                answered.add(json.dumps([request.get("messages"), request.get("response_format")], sort_keys=True))
            return reply

    faulty = Faulty(_script, rate=0.5, seed=3, kinds=("500", "malformed", "empty", "refusal", "truncated"))
    srv = fake_server(faulty, latency=0.0)
    cfg = Config().replace(**{"llm.concurrency": 2, "llm.max_retries": 0})
    llm = connect(base_url=srv.base_url, model="fake", config=cfg, cache_dir=tmp_path / "cache", quiet=True)
    df = pd.DataFrame({"text": ARTICLES, "outlet": ["a", "b"] * 6})
    out = tmp_path / "run.jsonl"
    st = CorpusConfig(article_threshold=1, min_analysed_share=0.5)
    first = analyze(read(df), out, config=cfg, llm=llm, settings=st, load_results=False)
    recs = _records(out)
    assert first["failed"] == sum(r["record"]["failed"] for r in recs)  # what is said is what the file holds
    hurt = [r for r in recs if r["record"]["failed"] or r["record"]["n_failed_sentences"]]
    assert hurt, "at 50% faults some articles must have failed sentences"

    faulty.enabled = False
    n_before, answered_before = len(srv.requests), set(answered)
    again = analyze(read(df), out, config=cfg, llm=llm, settings=st, load_results=False)
    recs = _records(out)
    assert len(recs) == len(df) and again["failed"] == 0 and again["resumed"] == len(df) - len(hurt)
    assert all(not r["record"]["failed"] and r["record"]["n_failed_sentences"] == 0 for r in recs)
    new = srv.requests[n_before:]
    assert new, "the healthy rerun must ask again what had failed"
    # the rerun asks only what a fault had left unanswered: no call that had a healthy answer is sent again
    assert not [r for r in new if json.dumps([r.get("messages"), r.get("response_format")], sort_keys=True) in answered_before]
    assert {_sentence_of(r) for r in new} <= {_sentence_of(r) for r in srv.requests[:n_before]}


def test_the_cli_prints_the_failed_count_of_the_file_also_after_a_resume(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"id": ["a", "b", "c"], "text": ["The council met on Monday.", "", "Critics slammed the plan."]}) \
        .to_csv("c.csv", index=False)
    for _ in range(2):  # the second run resumes everything: it still says 1 failed, as the file does
        assert cli.main(["analyze", "c.csv", "--quiet"]) == 0
        err = capsys.readouterr().err
        n_file = sum(r["record"]["failed"] for r in _records(tmp_path / "c.csv.mabpd.jsonl"))
        assert n_file == 1 and re.search(r"\b1 failed\b", err), err


HOLD = textwrap.dedent("""
    import sys, time
    from mabpd_kit.runs.checkpoint import Checkpoint
    ck = Checkpoint(sys.argv[1]); ck.lock(); print("locked", flush=True); time.sleep(60)
""")


def test_a_second_process_cannot_write_a_results_file_in_use(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    pd.DataFrame({"text": ["The council met on Monday."]}).to_csv("c.csv", index=False)
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(tmp_path / "c.csv.mabpd.jsonl")],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        code = cli.main(["analyze", "c.csv", "--quiet"])
        err = capsys.readouterr().err
        assert code == 2 and "Traceback" not in err
        lines = [ln for ln in err.splitlines() if ln.startswith("mabpd analyze:")]
        assert len(lines) == 1 and "is being written by process" in lines[0], err
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.1)
    assert cli.main(["analyze", "c.csv", "--quiet"]) == 0  # free again once that process is gone


def test_another_id_col_leaves_exactly_the_corpus_in_the_file(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    df = pd.DataFrame({"doc": [f"d{k}" for k in range(6)], "alt": [f"x{k}" for k in range(6)],
                       "text": [f"The council met on day {k}." for k in range(6)]})
    df.to_csv("c.csv", index=False)
    assert cli.main(["analyze", "c.csv", "--quiet", "--id-col", "doc"]) == 0
    assert cli.main(["analyze", "c.csv", "--quiet", "--id-col", "alt", "--report", "r.html"]) == 0
    capsys.readouterr()
    recs = _records(tmp_path / "c.csv.mabpd.jsonl")
    assert [r["id"] for r in recs] == [f"x{k}" for k in range(6)]  # the corpus, once each, in its order
    stale = _records(tmp_path / "c.csv.mabpd.stale.jsonl")
    assert sorted(r["id"] for r in stale) == [f"d{k}" for k in range(6)]  # moved aside, not lost
    assert "6 articles" in (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "12 articles" not in (tmp_path / "r.html").read_text(encoding="utf-8")
    res = analyze(read(df, id_col="alt"), tmp_path / "c.csv.mabpd.jsonl", settings=CorpusConfig())
    assert len(res) == 6 and res.resumed == 6

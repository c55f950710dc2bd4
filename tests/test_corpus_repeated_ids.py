"""One policy for a repeated id in a results file (a killed run's retried article): the last record of the id
wins, in file order, for every reader: the runner's index, iterating the results, the summary the CLI and the
report read, and the export."""

from __future__ import annotations

import json

from mabpd_kit.corpus.articles import ArticleResult
from mabpd_kit.corpus.reporting import summary_of
from mabpd_kit.corpus.store import Writer, export, load
from mabpd_kit.runs.checkpoint import Checkpoint


def _file(tmp_path):
    path = tmp_path / "run.jsonl"
    with Writer(path) as w:
        w.write(ArticleResult(id="a", failed=True, error="HTTP 500", meta={"outlet": "x"}))
        w.write(ArticleResult(id="b", n_sentences=3, n_biased=1, share_biased=1 / 3, meta={"outlet": "y"}))
        w.write(ArticleResult(id="a", n_sentences=2, n_biased=2, share_biased=1.0, meta={"outlet": "x"}))
    return path


def test_the_last_record_of_an_id_wins_for_every_reader(tmp_path):
    path = _file(tmp_path)
    res = load(path)
    assert len(res) == 2 and res.n_failed == 0
    assert [(a.id, a.failed, a.n_biased) for a in res] == [("b", False, 1), ("a", False, 2)]
    assert [a.id for a in res.articles] == ["b", "a"] and res["a"].n_biased == 2
    s = summary_of(path, by="outlet")
    assert s.frame[["id", "failed", "n_biased"]].values.tolist() == [["b", False, 1], ["a", False, 2]]
    assert s.counts()["articles"] == 2 and s.counts()["failed"] == 0 and s.counts()["sentences"] == 5
    assert res.counts()["articles"] == 2 and res.counts()["sentences"] == 5
    out = tmp_path / "rows.jsonl"
    assert export(path, out) == 2
    assert [(r["id"], r["n_biased"]) for r in map(json.loads, out.read_text().splitlines())] == [("b", 1), ("a", 2)]
    idx = Checkpoint(path).index()
    assert len(idx) == 2 and idx.lines == 3 and not idx.failed.any()

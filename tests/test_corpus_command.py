"""The corpus command entry points (for `mabpd analyze CORPUS` and `mabpd report`): a CSV analysed
into a resumable results file with export and report; an unreadable corpus is one line, exit 2."""

from __future__ import annotations

import argparse

import pandas as pd

from mabpd_kit.cli.analyze import add_arguments
from mabpd_kit.cli.analyze import run as run
from mabpd_kit.corpus.command import add_report_arguments, is_corpus, run_report


def _parse(adder, argv):
    p = argparse.ArgumentParser()
    adder(p)
    return p.parse_args(argv)


def test_analyze_a_csv_then_resume_export_and_report(tmp_path, capsys):
    src = tmp_path / "news.csv"
    pd.DataFrame({"body": ["Critics slammed the disastrous plan.", "The vote is next week.", ""],
                  "url": ["u1", "u2", "u3"], "outlet": ["a", "b", "b"]}).to_csv(src, index=False)
    assert is_corpus(str(src)) and is_corpus(str(tmp_path)) and not is_corpus(str(tmp_path / "notes.txt"))
    argv = [str(src), "--text-col", "body", "--id-col", "url", "--workers", "1", "--threshold", "0.25",
            "--export", str(tmp_path / "sent.csv"), "--level", "sentence", "--report", str(tmp_path / "r.html"),
            "--by", "outlet", "--quiet"]
    assert run(_parse(add_arguments, argv)) == 0
    err = capsys.readouterr().err
    assert "3 articles analysed now, 0 from the results file: 3 articles (2 sentences analysed), 1 failed" in err
    assert (tmp_path / "news.csv.mabpd.jsonl").exists()  # the default results file, next to the corpus
    sent = pd.read_csv(tmp_path / "sent.csv")
    assert sent["label"].tolist() == ["biased", "neutral"] and set(sent["outlet"]) == {"a", "b"}
    assert "2 decided articles judged biased (the hyperpartisan-style article score p_biased >= 0.25" in err
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    assert "p_biased &ge; 0.25</code>" in page and "<th>p_biased</th>" in page and "Why: p_biased" in page
    assert run(_parse(add_arguments, argv)) == 0
    assert "0 articles analysed now, 3 from the results file" in capsys.readouterr().err  # resumed

    args = _parse(add_report_arguments, [str(tmp_path / "news.csv.mabpd.jsonl"), "-o", str(tmp_path / "r2.html"),
                                         "--by", "outlet"])
    assert run_report(args) == 0 and (tmp_path / "r2.html").read_text(encoding="utf-8").count("<tr class='row'") == 3


def test_an_unreadable_corpus_is_one_line_and_exit_2(tmp_path, capsys):
    src = tmp_path / "x.csv"
    src.write_text("title,words\nA,b\n", encoding="utf-8")
    assert run(_parse(add_arguments, [str(src), "--quiet"])) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("mabpd analyze: which column holds the text?") and "\n" not in err
    assert run_report(_parse(add_report_arguments, [str(tmp_path / "none.jsonl")])) == 2
    assert capsys.readouterr().err.strip() == f"mabpd report: no results file {tmp_path / 'none.jsonl'}"

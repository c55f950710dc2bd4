"""The corpus path's probe (points 2 and 6-13): rows must come in as written, every physical row and
every folder entry once (decided, or flagged with its reason), one decoder for the corpus and the
text layer, the language decided per article, and no option accepted only to be ignored."""

from __future__ import annotations

import json
import os
import sys

import pandas as pd
import pytest

from mabpd_kit import cli
from mabpd_kit.corpus import CorpusConfig, Doc, analyze, analyze_doc, read
from mabpd_kit.mabpd import Pipeline

BIASED = "Critics slammed the disastrous so-called reform."
NEUTRAL = "The council met on Monday to discuss the budget."


@pytest.fixture(scope="module")
def pipe() -> Pipeline:
    return Pipeline()


def _docs(src, **kw):
    return list(read(src, **kw))


def _cli(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return code, out, err


def _line(err: str) -> str:
    lines = [ln for ln in err.strip().splitlines() if ln.startswith("mabpd analyze:")]
    assert len(lines) == 1, err
    return lines[0]


# -- 2: when an article fails ----------------------------------------------------------------------


def test_an_article_with_18_of_19_sentences_refused_is_failed_and_the_share_analysed_is_reported(pipe):
    text = "\n".join(f"The council met on day {k} to vote." for k in range(18)) + "\n" + BIASED
    refused = pipe.analyze("", id="refused")  # a failed decision (nothing to analyse)
    decisions = {k: refused for k in range(18)} | {18: pipe.analyze(BIASED, id="x#18")}
    a = analyze_doc(pipe, Doc("x", text), decisions=decisions)
    assert a.failed and a.error.startswith("only 1 of 19 sentences could be analysed")
    assert (a.n_sentences, a.n_failed_sentences, a.share_analysed) == (1, 18, pytest.approx(1 / 19))
    row = a.row(10.5)
    assert row["pred"] is None and row["share_analysed"] == pytest.approx(1 / 19)
    assert row["n_failed_sentences"] == 18 and row["n_sentences"] == 1
    keep = analyze_doc(pipe, Doc("x", text), CorpusConfig(min_analysed_share=0.0), decisions=decisions)
    assert not keep.failed and keep.share_biased == 1.0  # the threshold is the setting's


def test_every_article_row_says_how_many_sentences_were_analysed(tmp_path):
    res = analyze(read(pd.DataFrame({"text": [f"{NEUTRAL} {BIASED}"]})), tmp_path / "r.jsonl", workers=1)
    row = res.to_frame().iloc[0]
    assert row["n_sentences"] == 2 and row["n_failed_sentences"] == 0 and row["share_analysed"] == 1.0


# -- 6: direct mode decides by the one decision --------------------------------------------------


def test_direct_mode_pred_is_the_decisions_label(tmp_path):
    df = pd.DataFrame({"text": [BIASED, NEUTRAL, "Lawmakers rammed the so-called reform through."]})
    res = analyze(read(df), tmp_path / "d.jsonl", workers=1, settings=CorpusConfig(mode="direct"))
    labels = [a.sentences[0].label for a in res]
    assert labels == ["biased", "neutral", "biased"]
    assert res.to_frame()["pred"].tolist() == [1, 0, 1]  # not the article rule's 10.5 biased sentences
    from mabpd_kit.corpus.summary import summarize

    frame = summarize(tmp_path / "d.jsonl", threshold=10.5).frame  # what the report counts: the same decisions
    assert frame["pred"].tolist() == [1, 0, 1]


# -- 7: an extra field never shifts the columns ----------------------------------------------------


def test_an_extra_comma_in_the_first_data_row_is_flagged_not_shifting_every_column(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(f"id,text,outlet\na1,{BIASED},x,EXTRA\na2,{NEUTRAL},y\na3,{NEUTRAL},z\n", encoding="utf-8")
    docs = _docs(p, id_col="id")
    assert [d.id for d in docs[1:]] == ["a2", "a3"] and all(d.ok for d in docs[1:])
    assert docs[1].text == NEUTRAL and docs[1].meta == {"outlet": "y"}
    assert docs[0].reason.startswith("malformed line 2: 4 fields, the header has 3")
    trailing = tmp_path / "t.csv"  # empty trailing fields (a comma at the end of a line) are harmless
    trailing.write_text(f"text,outlet\n{NEUTRAL},y,\n", encoding="utf-8")
    assert [(d.ok, d.meta) for d in _docs(trailing)] == [(True, {"outlet": "y"})]


# -- 8: ids and metadata as written, made-up ids that never collide ------------------------------


def test_ids_and_metadata_come_back_exactly_as_written(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(f"id,text,zip,score,note\n0000645,{NEUTRAL},02134,1.50,NA\n,{BIASED},00501,2,null\n"
                 f"77,{NEUTRAL},,3,n/a\n", encoding="utf-8")
    docs = _docs(p, id_col="id")
    assert docs[0].id == "0000645" and docs[2].id == "77"  # not 645, not 645.0
    assert docs[0].meta == {"zip": "02134", "score": "1.50", "note": "NA"}
    assert docs[1].meta["note"] == "null" and docs[2].meta["note"] == "n/a" and docs[2].meta["zip"] is None
    assert docs[1].ok and docs[1].id not in {"0000645", "77"}  # a missing id: made up, and the text analysed


def test_made_up_ids_never_collide_with_real_ones(tmp_path):
    p = tmp_path / "c.csv"
    p.write_text(f"id,text\nd1,{NEUTRAL}\nd1,{BIASED}\nd1#dup1,{NEUTRAL}\n,{NEUTRAL}\nline5,{NEUTRAL}\n"
                 f"row3,{NEUTRAL}\n3,{NEUTRAL}\n", encoding="utf-8")
    docs = _docs(p, id_col="id")
    ids = [d.id for d in docs]
    assert len(ids) == 7 and len(set(ids)) == 7
    real = ["d1", "d1#dup1", "line5", "row3", "3"]
    assert [d.id for d in docs if d.id in real] == real  # every real id kept, once
    assert all(d.ok for d in docs if d.id in real)  # a real id is never taken for a duplicate
    assert docs[1].reason == "duplicate id 'd1' (ids must be unique)"


def test_the_cli_keeps_ids_as_written_too(tmp_path, capsys):
    p = tmp_path / "c.csv"
    p.write_text(f"url,text\n0000645,{NEUTRAL}\n,{BIASED}\n", encoding="utf-8")
    code, _, _ = _cli(capsys, "analyze", p, "--id-col", "url", "--quiet")
    assert code == 0
    ids = [json.loads(ln)["id"] for ln in (tmp_path / "c.csv.mabpd.jsonl").read_text().splitlines()]
    assert ids[0] == "0000645" and ids[1] != "0000645" and not ids[1].endswith(".0")


# -- 9: every physical row once ---------------------------------------------------------------------


def test_an_unterminated_quote_loses_no_row(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text(f'id,text\n1,{NEUTRAL}\n2,"{BIASED}\n3,{NEUTRAL}\n4,{NEUTRAL}\n', encoding="utf-8")
    docs = _docs(p, id_col="id")
    assert len(docs) == 4
    assert [d.id for d in docs if d.ok] == ["1", "3", "4"]
    bad = [d for d in docs if not d.ok]
    assert len(bad) == 1 and "line 3" in bad[0].reason and "quote" in bad[0].reason


def test_an_unterminated_quote_at_row_2500_of_3000(tmp_path):
    rows = [f"{k},Row {k} is an ordinary sentence here." for k in range(3000)]
    rows[2500] = '2500,"Row 2500 opens a quote it never closes.'
    p = tmp_path / "big.csv"
    p.write_text("id,text\n" + "\n".join(rows) + "\n", encoding="utf-8")
    docs = _docs(p, id_col="id", settings=CorpusConfig(chunk_rows=1000))
    assert len(docs) == 3000
    assert [d.id for d in docs if not d.ok] == ["line2502"]  # the row's line: header 1, row 0 on line 2
    assert "line 2502" in docs[2500].reason and docs[-1].id == "2999" and docs[-1].ok


def test_two_stray_quotes_still_give_every_row(tmp_path):
    p = tmp_path / "q.csv"
    p.write_text(f'text,outlet\n{NEUTRAL},a\n"{BIASED},b\n{NEUTRAL},c\n"{NEUTRAL},d\n{NEUTRAL},e\n', encoding="utf-8")
    docs = _docs(p)
    assert len(docs) == 5
    assert [d.meta.get("outlet") for d in docs if d.ok] == ["a", "c", "e"]
    assert [d.reason.split(":")[0] for d in docs if not d.ok] == ["malformed line 3", "malformed line 5"]


def test_a_quoted_multiline_text_is_one_row(tmp_path):
    p = tmp_path / "m.csv"
    p.write_text(f'id,text\n1,"{NEUTRAL}\n{BIASED}"\n2,{NEUTRAL}\n', encoding="utf-8")
    docs = _docs(p, id_col="id")
    assert [(d.id, d.ok) for d in docs] == [("1", True), ("2", True)]
    assert docs[0].text == f"{NEUTRAL}\n{BIASED}"


# -- 10: one decoder -----------------------------------------------------------------------------


def test_cp1252_rows_are_decoded_and_flagged_not_refused(tmp_path):
    p = tmp_path / "l.csv"
    p.write_bytes(b"text,outlet\nThe caf\xe9 owner said the plan \x93works\x94.,a\nPlain text is here.,b\n")
    docs = _docs(p)
    assert all(d.ok for d in docs)
    assert docs[0].text == "The café owner said the plan “works”." and "encoding:cp1252" in docs[0].flags
    assert docs[1].flags == []


def test_a_utf16_csv_is_read(tmp_path):
    p = tmp_path / "u.csv"
    p.write_bytes(f"id,text\n1,{NEUTRAL} Café.\n".encode("utf-16"))
    docs = _docs(p, id_col="id")
    assert [(d.id, d.text) for d in docs] == [("1", f"{NEUTRAL} Café.")]


def test_a_utf8_bom_jsonl_keeps_its_first_record(tmp_path):
    p = tmp_path / "b.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json.dumps({"id": "a", "text": NEUTRAL}).encode() + b"\n"
                  + json.dumps({"id": "b", "text": BIASED}).encode() + b"\n")
    assert [(d.id, d.ok) for d in _docs(p, id_col="id")] == [("a", True), ("b", True)]


def test_a_utf16_txt_is_text_and_a_real_replacement_character_is_kept(tmp_path):
    from mabpd_kit.text import decode

    d = tmp_path / "f"
    d.mkdir()
    blobs = {"u16.txt": f"{BIASED} Café.".encode("utf-16"), "fffd.txt": f"{NEUTRAL} \ufffd".encode(),
             "l1.txt": b"The caf\xe9 is \x93open\x94 today.", "bom.txt": b"\xef\xbb\xbf" + NEUTRAL.encode()}
    for name, raw in blobs.items():
        (d / name).write_bytes(raw)
    docs = {x.id: x for x in read(d)}
    assert all(x.ok for x in docs.values()), {k: x.reason for k, x in docs.items()}
    for name, raw in blobs.items():  # the corpus reader and text.decode agree
        assert docs[name].text == decode(raw)
    assert "encoding:cp1252" in docs["l1.txt"].flags and docs["u16.txt"].flags == []


def test_a_utf8_csv_text_with_a_replacement_character_is_analysed(tmp_path):
    p = tmp_path / "r.csv"
    p.write_text(f"text\n{NEUTRAL} \ufffd\n", encoding="utf-8")
    (doc,) = _docs(p)
    assert doc.ok and doc.text.endswith("\ufffd")


# -- 11: the language of an article --------------------------------------------------------------


def test_short_english_is_not_refused_as_another_language(pipe):
    for text in ("Why? To pay for Obamacare.", "Rennie wrote:", "Jemele Hill in September 2016."):
        for mode in ("article", "direct"):
            a = analyze_doc(pipe, Doc("s", text), CorpusConfig(mode=mode, min_sentence_words=1))
            assert not a.failed, (mode, a.error)
            assert a.language == "en" and not any(s.label == "failed" for s in a.sentences)


def test_the_language_is_decided_per_article_not_per_sentence(pipe):
    text = ("Jemele Hill in September 2016.\n" + f"{NEUTRAL} {BIASED}\n"
            + "The network said the host would return to the show next week after a short break.")
    a = analyze_doc(pipe, Doc("en", text))
    assert not a.failed and a.language == "en"
    assert [s.label for s in a.sentences].count("failed") == 0 and a.n_sentences == 4
    malay = ("Presiden Turki menyatakan kesediaan Turki membuka kedutaannya di Baitulmaqdis Timur dalam usaha "
             "meningkatkan tentangan terhadap pengiktirafan kota itu. Beliau berkata orang Yahudi tidak mempunyai "
             "hak untuk merampas kota yang merupakan ibu negara Palestin.")
    m = analyze_doc(pipe, Doc("ms", malay))
    assert m.failed and m.error.startswith("unsupported language 'ms'") and m.sentences == []


# -- 12: folders ---------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks and FIFOs")
def test_a_folder_never_reads_outside_itself_and_gives_every_entry_a_record(tmp_path):
    outside = tmp_path / "secret.txt"
    outside.write_text("root:x:0:0:root:/root:/bin/bash is a secret line.", encoding="utf-8")
    d = tmp_path / "news"
    d.mkdir()
    (d / "a.txt").write_text(f"{NEUTRAL} {BIASED}", encoding="utf-8")
    (d / "inside.txt").symlink_to(d / "a.txt")
    (d / "passwd.txt").symlink_to(outside)
    (d / "gone.txt").symlink_to(tmp_path / "nothing-here.txt")
    os.mkfifo(d / "pipe.txt")
    (d / ".hidden.txt").write_text(NEUTRAL, encoding="utf-8")
    docs = {x.id: x for x in read(d)}
    assert set(docs) == {"a.txt", "inside.txt", "passwd.txt", "gone.txt", "pipe.txt", ".hidden.txt"}
    assert docs["a.txt"].ok and docs["inside.txt"].ok  # a link that stays inside the folder is read
    assert "outside the folder" in docs["passwd.txt"].reason and docs["passwd.txt"].text == ""
    assert "broken symbolic link" in docs["gone.txt"].reason
    assert "FIFO" in docs["pipe.txt"].reason
    assert "hidden" in docs[".hidden.txt"].reason
    res = analyze(read(d), tmp_path / "r.jsonl", workers=1)
    assert "root:x" not in (tmp_path / "r.jsonl").read_text(encoding="utf-8") and len(res) == 6
    followed = {x.id: x for x in read(d, follow_symlinks=True)}
    assert followed["passwd.txt"].ok and "root:x" in followed["passwd.txt"].text  # only when asked


@pytest.mark.skipif(sys.platform == "win32", reason="symlinks")
def test_the_cli_refuses_to_follow_a_link_out_of_the_folder_unless_asked(tmp_path, capsys):
    d = tmp_path / "news"
    d.mkdir()
    (d / "a.txt").write_text(f"{NEUTRAL} {BIASED}", encoding="utf-8")
    (d / "passwd.txt").symlink_to("/etc/passwd")
    code, _, err = _cli(capsys, "analyze", d, "--quiet", "--report", tmp_path / "r.html")
    assert code == 0
    assert "root:" not in (tmp_path / "news.mabpd.jsonl").read_text() + (tmp_path / "r.html").read_text()
    assert "2 articles analysed" in err and "1 failed" in err


# -- 13: no option accepted and ignored ----------------------------------------------------------


@pytest.fixture
def csv_corpus(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    p = tmp_path / "c.csv"
    p.write_text(f"text,outlet,date\n{BIASED},a,last Tuesday\n{NEUTRAL},b,2017-09-10\n", encoding="utf-8")
    return p


@pytest.mark.parametrize("flags,named", [
    (["-o", "x.txt"], "-o/--output"), (["--format", "json"], "--format"), (["--checkpoint", "c.jsonl"], "--checkpoint"),
    (["--lines"], "--lines"), (["--by", "outlet"], "--by"), (["--date", "date"], "--date"),
    (["--level", "sentence"], "--level"), (["--mode", "direct", "--threshold", "2"], "--threshold"),
])
def test_options_a_corpus_cannot_honour_are_refused_in_one_line(csv_corpus, capsys, flags, named):
    code, out, err = _cli(capsys, "analyze", csv_corpus, "--quiet", *flags)
    assert code == 2 and out == ""
    line = _line(err)
    assert line.startswith("mabpd analyze: error: ") and named in line
    assert not (csv_corpus.parent / "c.csv.mabpd.jsonl").exists()  # refused before anything ran


def test_ablation_is_honoured_on_a_corpus(csv_corpus, capsys):
    assert _cli(capsys, "analyze", csv_corpus, "--quiet", "--out", "full.jsonl")[0] == 0
    assert _cli(capsys, "analyze", csv_corpus, "--quiet", "--out", "one.jsonl", "--ablation", "single-agent")[0] == 0
    full = [json.loads(ln)["record"] for ln in open("full.jsonl")]
    one = [json.loads(ln)["record"] for ln in open("one.jsonl")]
    assert full[0]["fingerprint"] != one[0]["fingerprint"]
    assert {s["route"] for a in one for s in a["sentences"]} != {s["route"] for a in full for s in a["sentences"]}


@pytest.mark.parametrize("flags", [["--text-col", "body"], ["--id-col", "u"], ["--out", "o.jsonl"],
                                   ["--mode", "direct"], ["--workers", "2"], ["--threshold", "3"],
                                   ["--export", "e.csv"], ["--level", "span"], ["--report", "r.html"],
                                   ["--by", "outlet"], ["--date", "d"], ["--follow-symlinks"]])
def test_corpus_options_on_plain_text_are_refused(tmp_path, monkeypatch, capsys, flags):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "a.txt").write_text(BIASED, encoding="utf-8")
    code, out, err = _cli(capsys, "analyze", "a.txt", *flags)
    assert code == 2 and out == ""
    line = _line(err)
    assert flags[0] in line and "plain text" in line


def test_free_text_dates_print_no_pandas_warning(csv_corpus, capsys):
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a pandas UserWarning would end the run
        code, _, err = _cli(capsys, "analyze", csv_corpus, "--quiet", "--report", "r.html", "--date", "date")
    assert code == 0 and "Could not infer format" not in err
    assert "1 of 2 values of 'date' are not dates" in err

"""mk.corpus.read: every input format, default ids, metadata kept, bad rows flagged while the batch
goes on, chunked reading, and the export writer (article / sentence / span rows)."""

from __future__ import annotations

import importlib.util
import json
from itertools import islice

import pandas as pd
import pytest

from mabpd_kit.corpus import CorpusConfig, CorpusError, analyze, export, read, rows

TEXTS = ["The council approved the budget on Monday.", "Critics slammed the disastrous so-called reform."]


def _frame() -> pd.DataFrame:
    return pd.DataFrame({"text": TEXTS, "outlet": ["a.com", "b.com"], "year": [2017, 2018]})


def _docs(src, **kw):
    return list(read(src, **kw))


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "json", "parquet", "frame"])
def test_every_table_format_reads_text_ids_and_metadata(tmp_path, fmt):
    df = _frame()
    if fmt == "frame":
        src = df
    else:
        src = tmp_path / f"c.{fmt}"
        if fmt == "csv":
            df.to_csv(src, index=False)
        elif fmt == "tsv":
            df.to_csv(src, sep="\t", index=False)
        elif fmt == "jsonl":
            df.to_json(src, orient="records", lines=True)
        elif fmt == "json":  # one JSON array of objects
            df.to_json(src, orient="records")
        else:
            df.to_parquet(src)
    docs = _docs(src)
    assert [d.id for d in docs] == ["0", "1"]  # default id: the row number
    assert [d.text for d in docs] == TEXTS
    # every other column kept: as written in a CSV/TSV (strings), as JSON types otherwise
    assert docs[1].meta == {"outlet": "b.com", "year": "2018" if fmt in ("csv", "tsv") else 2018}
    assert all(d.ok for d in docs)


def test_id_and_text_columns_by_name(tmp_path):
    df = pd.DataFrame({"body": TEXTS, "url": ["http://a/1", "http://b/2"], "topic": ["x", "y"]})
    docs = _docs(df, text_col="body", id_col="url")
    assert [d.id for d in docs] == ["http://a/1", "http://b/2"]
    assert docs[0].meta == {"topic": "x"}
    with pytest.raises(CorpusError, match="which column holds the text"):
        _docs(df.rename(columns={"body": "words"}))
    with pytest.raises(CorpusError, match="no text column 'nope'"):
        _docs(df, text_col="nope")


def test_folder_of_txt_and_html_files_cleans_html_later_and_flags_the_rest(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.txt").write_text(TEXTS[0], encoding="utf-8")
    (tmp_path / "sub" / "b.html").write_text(f"<html><body><p>{TEXTS[1]}</p></body></html>", encoding="utf-8")
    (tmp_path / "c.txt").write_bytes(b"caf\xe9 au lait costs more")  # Windows-1252, decodable
    (tmp_path / "d.txt").write_bytes(b"\x00\x01\x02 binary")
    (tmp_path / "e.txt").write_bytes(b"\x81\x8d\x8f\x90\x9d bad")  # bytes Windows-1252 leaves undefined
    (tmp_path / "f.pdf").write_bytes(b"%PDF")
    (tmp_path / "g.txt").write_text("   \n ", encoding="utf-8")
    docs = {d.id: d for d in read(tmp_path)}
    assert docs["a.txt"].text == TEXTS[0] and docs["a.txt"].meta["format"] == "txt"
    assert docs["sub/b.html"].ok and "<p>" in docs["sub/b.html"].text  # raw kept: the text layer cleans it
    assert docs["c.txt"].text == "café au lait costs more" and docs["c.txt"].flags == ["encoding:cp1252"]
    assert docs["d.txt"].reason.startswith("binary content")
    # decoded as the text layer decodes it (Windows-1252, its undefined bytes as Latin-1), and flagged
    assert docs["e.txt"].ok and docs["e.txt"].text == "\x81\x8d\x8f\x90\x9d bad" and docs["e.txt"].flags == ["encoding:cp1252"]
    assert "not a .txt/.html file" in docs["f.pdf"].reason
    assert docs["g.txt"].reason == "empty text"
    res = analyze(read(tmp_path), tmp_path / "out.jsonl", workers=1)
    by_id = {a.id: a for a in res}
    assert "<p>" not in by_id["sub/b.html"].text and by_id["sub/b.html"].n_sentences == 1  # cleaned HTML
    assert by_id["sub/b.html"].n_biased == 1
    assert by_id["d.txt"].failed and by_id["d.txt"].error.startswith("binary content")


def test_bad_rows_are_flagged_with_a_reason_and_the_batch_goes_on(tmp_path):
    big = "word " * 220_000  # 1.1 MB
    p = tmp_path / "bad.jsonl"
    lines = [json.dumps({"text": TEXTS[0], "outlet": "a"}), json.dumps({"text": "", "outlet": "b"}),
             json.dumps({"text": None, "outlet": "c"}), json.dumps({"text": "a\x00b", "outlet": "d"}),
             json.dumps({"text": big, "outlet": "e"}), "{not json", json.dumps([1, 2]),
             json.dumps({"text": TEXTS[1], "outlet": "f"})]
    raw = "\n".join(lines).encode("utf-8") + b"\n" + b'{"text": "caf\xff au lait", "outlet": "g"}\n'
    p.write_bytes(raw)
    docs = _docs(p)
    assert [d.id for d in docs] == [str(k) for k in range(9)]  # the row number, bad rows counted too
    reasons = {d.meta.get("outlet", d.id): d.reason for d in docs}
    assert reasons["a"] is None and reasons["f"] is None
    assert reasons["b"] == "empty text"
    assert reasons["c"].startswith("missing text")
    assert reasons["d"].startswith("binary content")
    assert reasons["e"].startswith("too large (1.1 MB > 1 MB")
    assert reasons["5"].startswith("malformed line 6 (not JSON")
    assert reasons["6"].startswith("malformed line 7 (a JSON list")
    assert reasons["g"] is None and docs[8].text == "cafÿ au lait" and docs[8].flags == ["encoding:cp1252"]
    res = analyze(read(p), tmp_path / "out.jsonl", workers=1)  # the batch goes on
    df = res.to_frame()
    assert df["failed"].sum() == 6 and (~df["failed"]).sum() == 3
    assert df.loc[~df["failed"], "n_sentences"].tolist() == [1, 1, 1]
    assert df.loc[8, "flags"] == "encoding:cp1252"


def test_csv_bad_cells_and_malformed_lines(tmp_path):
    p = tmp_path / "c.csv"
    p.write_bytes(b"id,text,outlet\n1,Fine text here.,a\n2,,b\n3,one,too,many\n4,caf\xff bytes,c\n1,dup id,d\n")
    docs = _docs(p, id_col="id")
    by = {d.id: d for d in docs}
    assert by["1"].ok and by["1"].text == "Fine text here."
    assert by["2"].reason.startswith("missing text")
    assert by["4"].ok and by["4"].text == "cafÿ bytes" and by["4"].flags == ["encoding:cp1252"]  # decoded, flagged
    assert by["line4"].reason == "malformed line 4: 4 fields, the header has 3"
    assert by["1#dup2"].reason == "duplicate id '1' (ids must be unique)"
    assert [d.id for d in docs] == ["1", "2", "line4", "4", "1#dup2"]  # every row once, in order


def test_reading_is_lazy_and_re_iterable(tmp_path, monkeypatch):
    p = tmp_path / "many.csv"
    pd.DataFrame({"text": [f"Sentence number {k} is here." for k in range(50)]}).to_csv(p, index=False)
    corpus = read(p, settings=CorpusConfig(chunk_rows=7))
    pulled = []
    real = rows.iter_lines

    def spy(fh, *bound):
        for item in real(fh, *bound):
            pulled.append(item)
            yield item

    monkeypatch.setattr(rows, "iter_lines", spy)
    first = list(islice(iter(corpus), 3))
    assert [d.id for d in first] == ["0", "1", "2"] and len(pulled) <= 5  # a few lines read, not the file
    assert len(list(corpus)) == 50 and len(pulled) <= 5 + 51  # re-iterable, line by line
    frame = pd.DataFrame({"text": [f"Row {k} of a frame." for k in range(20)]})
    assert [d.id for d in read(frame, settings=CorpusConfig(chunk_rows=7))] == [str(k) for k in range(20)]


def test_parquet_without_an_engine_says_what_to_install(tmp_path, monkeypatch):
    p = tmp_path / "c.parquet"
    _frame().to_parquet(p)
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None)
    with pytest.raises(CorpusError, match=r"^reading Parquet needs pyarrow or fastparquet: pip install pyarrow$"):
        read(p)


def test_unknown_format_and_missing_file(tmp_path):
    with pytest.raises(CorpusError, match="no such file"):
        read(tmp_path / "nope.csv")
    (tmp_path / "x.docx").write_text("x")
    with pytest.raises(CorpusError, match="cannot tell the format"):
        read(tmp_path / "x.docx")


@pytest.mark.parametrize("ext", ["jsonl", "csv", "parquet"])
def test_export_one_row_per_article_sentence_and_span(tmp_path, ext):
    df = pd.DataFrame({"text": ["The council met on Monday. Critics slammed the disastrous so-called plan.",
                                "Rain is expected on Tuesday in the north."], "outlet": ["a", "b"]})
    out = tmp_path / "run.jsonl"
    analyze(read(df), out, workers=1)
    reader = {"jsonl": lambda f: pd.read_json(f, lines=True), "csv": pd.read_csv, "parquet": pd.read_parquet}[ext]
    n = {lvl: export(out, tmp_path / f"{lvl}.{ext}", level=lvl) for lvl in ("article", "sentence", "span")}
    art, sent, span = (reader(tmp_path / f"{lvl}.{ext}") for lvl in ("article", "sentence", "span"))
    assert n["article"] == len(art) == 2 and n["sentence"] == len(sent) == 3 and n["span"] == len(span) > 0
    assert list(art["outlet"]) == ["a", "b"] and list(art["n_biased"]) == [1, 0]
    assert list(sent["label"]) == ["neutral", "biased", "neutral"]
    assert "slammed" in set(span["span"]) and set(span["id"].astype(str)) == {"0"}


@pytest.mark.parametrize("ext", ["csv", "parquet"])
def test_export_gives_one_type_per_column_across_chunks(tmp_path, ext):
    records = ([{"text": "Critics slammed the plan.", "year": 2017, "tag": "x"}] * 3
               + [{"text": "The vote is next week.", "year": None, "tag": None}] * 3
               + [{"text": "Rain today in the north.", "year": "unknown", "tag": 5, "extra": 1.5}])
    out = tmp_path / "r.jsonl"
    analyze(read(pd.DataFrame(records)), out, workers=1)
    assert export(out, tmp_path / f"a.{ext}", chunk=2) == 7  # chunks of 2 rows: the types differ between them
    df = pd.read_csv(tmp_path / f"a.{ext}", dtype=str) if ext == "csv" else pd.read_parquet(tmp_path / f"a.{ext}")
    assert df["year"].tolist()[:3] == ["2017"] * 3 and df["year"].iloc[6] == "unknown"  # numbers and words: text
    assert df["year"].iloc[3:6].isna().all()
    assert df["tag"].iloc[6] == "5" and str(df["n_sentences"].iloc[0]) == "1"
    assert "extra" in df.columns and float(df["extra"].iloc[6]) == 1.5  # a column first seen in a later chunk

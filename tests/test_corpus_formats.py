"""Corpus readers are one table keyed by suffix (mabpd_kit.corpus.rows.READERS): a new format is one class,
and read(), the format's name and `mabpd analyze`'s choice of the corpus path all know it."""

from __future__ import annotations

import pytest

from mabpd_kit.corpus import rows
from mabpd_kit.corpus.command import is_corpus
from mabpd_kit.corpus.inputs import CorpusError, read


def test_a_new_format_is_one_class(tmp_path, monkeypatch):
    monkeypatch.setattr(rows, "READERS", dict(rows.READERS))  # the class below registers into this copy

    class Pipes(rows.Reader):
        """'id|text' lines."""

        name, suffixes = "pipes", (".pipes",)

        def rows(self, source, settings):
            yield ["id", "text"]
            for k, line in enumerate(open(source, encoding="utf-8").read().splitlines(), start=1):
                yield rows.Row(f"line{k}", dict(zip(["id", "text"], line.split("|", 1))))

    src = tmp_path / "news.pipes"
    src.write_text("a1|The council met on Monday.\na2|\n", encoding="utf-8")
    docs = list(read(src, id_col="id"))
    assert [(d.id, d.ok, d.reason) for d in docs] == [("a1", True, None), ("a2", False, "empty text")]
    assert read(src).format == "pipes" and is_corpus(str(src))
    gz = tmp_path / "news.pipes.gz"  # a compression suffix before the format's
    gz.write_bytes(b"")
    assert is_corpus(str(gz))


def test_the_table_names_every_format_and_refuses_others(tmp_path):
    assert {r.name for r in rows.READERS.values()} >= {"csv", "tsv", "jsonl", "json", "parquet", "frame", "folder"}
    assert is_corpus(str(tmp_path)) and is_corpus("x.tab") and not is_corpus("notes.txt")
    (tmp_path / "a.txt").write_text("x", encoding="utf-8")
    with pytest.raises(CorpusError, match="cannot tell the format"):
        read(tmp_path / "a.txt")
    with pytest.raises(CorpusError, match="unknown format 'xml'"):
        read(tmp_path / "a.txt", format="xml")

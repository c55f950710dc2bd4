"""`mabpd demo` runs offline on the shipped samples and writes the HTML report."""

from __future__ import annotations

import json
from collections import Counter

from mabpd_kit.demo import load_samples, samples_path


def test_samples_are_balanced_and_cover_the_taxonomy():
    from mabpd_kit.lexicon import TAXONOMY_TYPES

    rows = load_samples()
    assert len(rows) >= 24
    labels = Counter(r["label"] for r in rows)
    assert labels[0] == labels[1]
    assert set(TAXONOMY_TYPES) <= {r["taxonomy"] for r in rows if r["label"] == 1}
    assert all(r["rationale"].strip() and r["text"].strip() and r["id"] for r in rows)
    assert len({r["id"] for r in rows}) == len(rows)
    assert samples_path().with_name("README.md").exists()


def test_demo_writes_the_report_and_exits_zero(tmp_path, capsys):
    from mabpd_kit.cli import main

    out = tmp_path / "demo.html"
    assert main(["demo", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "offline" in printed and "agreement with the authors' labels" in printed
    page = out.read_text()
    assert page.count("<section>") == len(load_samples())
    assert "<svg" in page and "Reading:" in page
    assert 'title="' in page  # highlighted spans carry their tooltip
    assert "route" in page and "neutral_veto" in page


def test_demo_with_an_ablation_and_custom_samples(tmp_path, capsys):
    from mabpd_kit.cli import main

    f = tmp_path / "s.jsonl"
    f.write_text("\n".join(json.dumps(r) for r in load_samples()[:4]) + "\n")
    out = tmp_path / "d.html"
    assert main(["demo", "--samples", str(f), "--out", str(out), "--ablation", "no-debate"]) == 0
    assert "no_debate" in capsys.readouterr().out and out.read_text().count("<section>") == 4

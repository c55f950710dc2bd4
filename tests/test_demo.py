"""`mabpd demo` runs offline on the shipped samples and writes the HTML report."""

from __future__ import annotations

import json
import re
from collections import Counter

from test_lesson_honesty import score_problems

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
    n = len(load_samples())
    line = next(x for x in printed.splitlines() if x.startswith("agreement with the authors' labels"))
    assert f"of {n}:" in line and re.search(r"\[0\.\d{3}, 1\.000\]", line), line   # its Wilson interval, never bare
    assert f"(n = {n}: too few items to conclude anything)" in line                   # 28 < metrics.min_items
    assert not score_problems(printed)
    page = out.read_text()
    assert "too few items to conclude anything" in page
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


def test_samples_and_seeds_are_package_data_and_the_repo_paths_still_work():
    from pathlib import Path

    import mabpd_kit as mk

    root = Path(mk.__file__).resolve().parent
    assert samples_path() == root / "resources" / "samples" / "samples.jsonl"
    assert mk.lexicon.seeds_dir() == root / "resources" / "lexicon"
    repo = root.parent
    if (repo / "data").is_dir():  # a checkout: data/samples and data/lexicon lead to the same files
        assert (repo / "data" / "samples" / "samples.jsonl").read_bytes() == samples_path().read_bytes()
        assert (repo / "data" / "lexicon" / "taxonomy.toml").is_file()


def test_samples_frame_have_dev_sample_and_describe(tmp_path, monkeypatch):
    import pandas as pd

    import mabpd_kit as mk

    monkeypatch.delenv("MABPD_DATA_DIR", raising=False)
    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path / "cache"))
    df = mk.data.samples()
    assert list(df.columns) == ["id", "text", "label", "taxonomy", "rationale"] and len(df) == 28
    assert not mk.data.have("babe") and not mk.data.have("hyperpartisan") and not mk.data.have("no-such-thing")
    dev = mk.data.dev_sample(10, quiet=True)
    hard = mk.data.hard_samples()
    assert len(hard) == 12 and list(hard.columns) == list(df.columns) and sorted(hard.label) == [0] * 6 + [1] * 6
    assert not set(hard.id) & set(df.id) and not set(hard.text) & set(df.text)
    assert len(dev) == 28 + 12 and list(dev.columns) == ["id", "text", "label"] and "teaching sentences" in dev.attrs["source"]
    assert dev.id.tolist() == df.id.tolist() + hard.id.tolist() and "hard ones" in dev.attrs["source"]
    assert "no benchmark copy" in mk.data.describe()
    # a local copy: have() sees it without reading it, dev_sample() balances a seeded sample of it
    babe = tmp_path / "data" / "BABE" / "derived"
    babe.mkdir(parents=True)
    pd.DataFrame({"text": [f"sentence {i}" for i in range(40)], "label_bias": ["Biased", "Non-biased"] * 20}).to_csv(
        babe / "babe_hf_train3121_reconstructed.csv", index=False)
    monkeypatch.setenv("MABPD_DATA_DIR", str(tmp_path / "data"))
    assert mk.data.have("babe") and mk.data.have("BABE", "train") and not mk.data.have("babe", "test")
    assert "benchmark copies found (MABPD_DATA_DIR): BABE" in mk.data.describe()

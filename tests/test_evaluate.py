"""Evaluation harness: scores, paired comparisons, resumable checkpoints, files, CLI."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from mabpd_kit import evaluate as E
from mabpd_kit import metrics as M

SENTENCES = [
    ("Democrats rammed through a so-called reform that radical activists demanded.", 1),
    ("The senator's reckless scheme is a disgraceful attack on hardworking families.", 1),
    ("Critics slammed the outrageous, job-killing bill as a shameless power grab.", 1),
    ("The extremist mob stormed the meeting, spewing hateful lies.", 1),
    ("Republicans want to destroy what little is left of the safety net.", 1),
    ("The bill passed the Senate 52 to 48 on Tuesday.", 0),
    ("The report was released by the Department of Labor on Friday.", 0),
    ("The city council will meet again next month to discuss the budget.", 0),
    ("Officials said the bridge would reopen after inspections are complete.", 0),
    ("The company reported quarterly revenue of $3.2 billion.", 0),
    ("", 0),  # empty input: the pipeline flags it as failed; it must count as neutral
]


@pytest.fixture
def frame():
    return pd.DataFrame({"id": [f"s{i}" for i in range(len(SENTENCES))], "text": [t for t, _ in SENTENCES],
                         "label": [y for _, y in SENTENCES], "type": ["left", "right"] * 5 + ["center"]})


def test_evaluate_scores_compares_and_writes(frame, tmp_path):
    ev = E.evaluate("toy", "dev", ["full", "no-debate"], frame=frame, out_dir=tmp_path, n_resamples=300, progress=False)
    assert ev.n_items == len(frame) and len(ev.predictions) == 2 * len(frame)
    pipe = ev.metrics.set_index("system")
    for name in ("full", "no-debate"):
        p = ev.predictions[ev.predictions["system"] == name]
        assert pipe.loc[name, "macro_f1"] == pytest.approx(M.macro_f1(p["gold"], p["pred"]))
        assert pipe.loc[name, "recall"] == pytest.approx(M.recall(p["gold"], p["pred"]))
        assert pipe.loc[name, "macro_f1_lo"] <= pipe.loc[name, "macro_f1"] <= pipe.loc[name, "macro_f1_hi"]
        assert pipe.loc[name, "n_failed"] == 1
        assert p.loc[p["id"] == "s10", "pred"].item() == 0 and p.loc[p["id"] == "s10", "failed"].item()
    cmp = ev.comparisons
    assert set(cmp["metric"]) == {"macro_f1", "f1"} and (cmp["baseline"] == "full").all()
    row = cmp[cmp["metric"] == "macro_f1"].iloc[0]
    assert row["diff"] == pytest.approx(pipe.loc["full", "macro_f1"] - pipe.loc["no-debate", "macro_f1"])
    assert 0 < row["p_value"] <= 1
    for key in ("results", "metrics", "comparisons", "report", "chart_svg", "chart_png"):
        assert (tmp_path / Path(ev.files[key]).name).stat().st_size > 0
    report = (tmp_path / "report.md").read_text()
    assert "Paired bootstrap against `full`" in report and "| no-debate |" in report
    assert (tmp_path / "chart.svg").read_text().lstrip().startswith("<svg")
    assert "full - no-debate: macro F1 diff" in ev.closing_note()


def test_checkpoints_make_a_rerun_resume(frame, tmp_path):
    E.evaluate("toy", "dev", ["full"], frame=frame, out_dir=tmp_path, n_resamples=50, progress=False)
    (ckpt,) = list((tmp_path / "checkpoints").glob("full-*.jsonl"))
    n_lines = len(ckpt.read_text().splitlines())
    assert n_lines == len(frame)
    ev2 = E.evaluate("toy", "dev", ["full"], frame=frame, out_dir=tmp_path, n_resamples=50, progress=False)
    # nothing recomputed except the failed item, which analyze_many retries on resume; the checkpoint is then
    # reconciled: one line per item, the retried item's new record in place of its old one
    assert len(ckpt.read_text().splitlines()) == n_lines
    assert ev2.metrics.loc[0, "macro_f1"] == pytest.approx(
        M.macro_f1(ev2.predictions["gold"], ev2.predictions["pred"]))
    # a different configuration gets its own checkpoint (fingerprint), never a stale one
    from mabpd_kit.config import Config

    E.evaluate("toy", "dev", ["full"], frame=frame, out_dir=tmp_path, n_resamples=50, progress=False,
               config=Config().replace(**{"scoring.boundary": 0.6}))
    assert len(list((tmp_path / "checkpoints").glob("full-*.jsonl"))) == 2


def test_unknown_configuration_fails_before_any_work(frame, tmp_path):
    with pytest.raises(KeyError, match="unknown ablation"):
        E.evaluate("toy", "dev", ["full", "no-such-thing"], frame=frame, out_dir=tmp_path, progress=False)
    assert not (tmp_path / "checkpoints").exists()


def test_reference_anchor_columns_are_scored(frame):
    f = frame.copy()
    f["oracle_label"] = pd.array(f["label"].tolist()[:-1] + [pd.NA], dtype="Int64")
    f.attrs["llm_label_columns"] = ["oracle_label"]
    ev = E.evaluate("toy", "dev", ["full"], frame=f, n_resamples=50, progress=False)
    anchor = ev.metrics[ev.metrics["system"] == "oracle"].iloc[0]
    assert anchor["kind"].startswith("reference") and anchor["n"] == len(f) - 1 and anchor["macro_f1"] == 1.0
    assert ev.files == {}  # out_dir=None writes nothing


def test_threshold_sweep_matches_metrics():
    rng = np.random.default_rng(0)
    gold = rng.integers(0, 2, 200)
    score = np.clip(gold * 0.3 + rng.random(200) * 0.7, 0, 1)
    sweep = E.threshold_sweep(gold, score, thresholds=[0.3, 0.5, 0.7])
    assert list(sweep["threshold"]) == [0.3, 0.5, 0.7]
    row = sweep.iloc[1]
    assert row["macro_f1"] == pytest.approx(M.macro_f1(gold, (score >= 0.5).astype(int)))
    assert sweep["recall"].is_monotonic_decreasing


def test_load_benchmark_limit_is_a_seeded_sample(data_dir):
    a = E.load_benchmark("babe", "train", data_dir=data_dir, limit=50)
    b = E.load_benchmark("babe", "train", data_dir=data_dir, limit=50)
    assert len(a) == 50 and a["id"].tolist() == b["id"].tolist()
    assert a["outlet"].nunique() > 3  # a random sample, not the first rows of one outlet
    assert "gpt_4_label" in a.attrs["llm_label_columns"]
    with pytest.raises(KeyError, match="unknown benchmark"):
        E.load_benchmark("nope")


def test_cli_evaluate_babe_sample(data_dir, tmp_path, capsys):
    from mabpd_kit.cli import main

    rc = main(["evaluate", "--dataset", "babe", "--split", "train", "--configs", "full,single-agent", "--limit", "60",
               "--resamples", "200", "--out", str(tmp_path), "--data-dir", str(data_dir), "--quiet"])
    assert rc == 0
    out = capsys.readouterr()
    assert "rule-based agents (offline)" in out.err
    assert "full - single-agent: macro F1 diff" in out.out
    metrics = pd.read_csv(tmp_path / "metrics.csv")
    assert {"full", "single-agent", "gpt_4"} <= set(metrics["system"])


def test_charts_build_from_evaluation(frame):
    from mabpd_kit.viz import evaluation as V

    ev = E.evaluate("toy", "dev", ["full", "no-debate"], frame=frame, n_resamples=50, progress=False)
    spec = ev.chart().to_dict()
    assert len(spec["layer"]) == 2  # bars + macro-F1 CI rules
    err = V.error_rates_chart(ev.predictions, by="type", system="full", min_items=1).to_dict()
    assert {r["rate"] for r in err["datasets"][next(iter(err["datasets"]))]} == {"false-positive rate", "false-negative rate"}
    cm = V.confusion_chart(frame["label"], ev.predictions.query("system == 'full'")["pred"]).to_dict()
    counts = sum(r["count"] for r in cm["datasets"][next(iter(cm["datasets"]))])
    assert counts == len(frame)
    th = V.threshold_chart(E.threshold_sweep(frame["label"], np.linspace(0, 1, len(frame))).assign(half="calibrate"), chosen=0.5)
    assert len(th.to_dict()["layer"]) == 2
    pr = V.precision_recall_chart(ev.metrics).to_dict()
    assert pr["layer"][0]["mark"]["type"] == "point"


def _toy_babe(root):
    d = root / "BABE" / "derived"
    d.mkdir(parents=True)
    rows = [(t, y) for t, y in SENTENCES if t]
    pd.DataFrame({
        "text": [t for t, _ in rows], "outlet": "Toy", "label": [y for _, y in rows], "topic": "toy",
        "news_link": "", "biased_words": "[]", "uuid": [f"u{i}" for i in range(len(rows))],
        "type": "center", "label_opinion": "",
    }).to_csv(d / "babe_hf_train3121_reconstructed.csv", index=False)


def test_cli_evaluate_with_an_endpoint_uses_the_llm(fake_server, tmp_path, monkeypatch, capsys):
    """--endpoint URL: the same harness with LLM agents (FakeLLMServer); usage is counted."""
    from mabpd_kit.cli import main
    from mabpd_kit.testing import all_text, system_prompt

    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path / "cache"))

    def script(req):
        article = all_text(req).split("<article>")[-1].split("</article>")[0]
        loaded = any(w in article for w in ("rammed", "reckless", "slammed", "mob", "destroy"))
        verdict = "biased" if loaded else "neutral"
        sys_ = system_prompt(req).lower()
        if "verifier" in sys_:
            return {"verdict": verdict, "reason": "-", "strongest_quote": ""}
        return {"verdict": verdict, "confidence": 0.9, "bias_score": 0.9 if loaded else 0.1,
                "evidence_score": 0.9 if loaded else 0.1, "framing_score": 0.9 if loaded else 0.1,
                "spans": [], "evidence": [], "patterns": [], "rationale": "-", "counter_argument": "-"}

    srv = fake_server(script)
    _toy_babe(tmp_path / "data")
    rc = main(["evaluate", "--dataset", "babe", "--configs", "full,no-debate", "--resamples", "100",
               "--endpoint", srv.base_url, "--model", "fake", "--data-dir", str(tmp_path / "data"),
               "--out", str(tmp_path / "out"), "--quiet"])
    assert rc == 0
    assert srv.calls > 0
    metrics = pd.read_csv(tmp_path / "out" / "metrics.csv").set_index("system")
    assert metrics.loc["full", "calls"] > 0 and metrics.loc["full", "tokens"] > 0
    assert metrics.loc["full", "n_failed"] == 0
    report = (tmp_path / "out" / "report.md").read_text()
    assert "LLM fake at http://127.0.0.1" in report
    assert "mabpd evaluate: rule-based" not in capsys.readouterr().err


def test_flip_counts_partition_the_disagreements():
    gold = [1, 1, 0, 0, 1, 0]
    base = [1, 0, 1, 0, 1, 0]
    syst = [0, 1, 0, 1, 1, 0]
    flips = E.flip_counts(gold, base, syst)
    assert flips == {"fn_rescued": 1, "tp_lost": 1, "fp_added": 1, "fp_removed": 1}
    assert sum(flips.values()) == sum(b != s for b, s in zip(base, syst))


# -- HyperPartisan truncation (issue 13 point 7) and exit codes ---------------------------------


def _toy_articles(n_words=(700, 50, 20)) -> pd.DataFrame:
    body = "The senator slammed the reckless bill and the city council will meet again next month. "
    texts = [" ".join((body * 60).split()[:n]) for n in n_words]
    return pd.DataFrame({"id": [f"a{i}" for i in range(len(texts))], "text": texts,
                         "label": [1, 0, 1][: len(texts)]})


@pytest.fixture
def toy_hyperpartisan(monkeypatch):
    """`load_benchmark` serves three synthetic articles (700, 50 and 20 words): no benchmark data needed."""
    from mabpd_kit.evaluate import benchmark

    asked = {}

    def fake_load(dataset="babe", split="train", **kw):
        asked.update(kw, dataset=dataset)
        assert "truncate" not in kw or kw["truncate"] is None, "the pipeline cuts, so decisions carry the flag"
        return _toy_articles()

    monkeypatch.setattr(benchmark, "load_benchmark", fake_load)
    return asked


def _evaluate_cli(tmp_path, *extra):
    from mabpd_kit.cli import main

    return main(["evaluate", "--dataset", "hyperpartisan", "--configs", "full", "--resamples", "50", "--no-anchors",
                 "--quiet", "--out", str(tmp_path / "out"), *extra])


def test_cli_evaluate_hyperpartisan_cuts_articles_to_600_words_by_default(toy_hyperpartisan, tmp_path, capsys):
    assert _evaluate_cli(tmp_path) == 0
    out = capsys.readouterr().out
    assert "texts cut to 600 words: 1 of 3 (flag 'truncated')" in out
    metrics = pd.read_csv(tmp_path / "out" / "metrics.csv").set_index("system")
    assert metrics.loc["full", "n_truncated"] == 1
    assert "texts cut to 600 words" in (tmp_path / "out" / "report.md").read_text()


@pytest.mark.parametrize("n, cut", [("0", None), ("30", 2)])
def test_cli_evaluate_truncate_words_overrides_the_default(toy_hyperpartisan, tmp_path, capsys, n, cut):
    assert _evaluate_cli(tmp_path, "--truncate-words", n) == 0
    out = capsys.readouterr().out
    metrics = pd.read_csv(tmp_path / "out" / "metrics.csv").set_index("system")
    if cut is None:
        assert "texts cut" not in out and metrics.loc["full", "n_truncated"] == 0
    else:
        assert f"texts cut to {n} words: {cut} of 3" in out and metrics.loc["full", "n_truncated"] == cut


def test_evaluate_truncate_flags_the_decisions(frame):
    ev = E.evaluate("toy", "dev", ["full"], frame=frame, truncate=8, n_resamples=50, progress=False)
    long = sum(len(t.split()) > 8 for t in frame["text"])
    assert ev.n_truncated == {"full": long} and ev.truncate_words == 8
    assert E.evaluate("toy", "dev", ["full"], frame=frame, n_resamples=50, progress=False).n_truncated == {"full": 0}


def test_cli_evaluate_exits_1_when_every_item_of_a_configuration_failed(toy_hyperpartisan, tmp_path, capsys,
                                                                        monkeypatch):
    from mabpd_kit.mabpd import pipeline

    async def broken(self, text, **kw):
        raise ValueError("agent exploded")

    monkeypatch.setattr(pipeline.Pipeline, "aanalyze", broken)
    assert _evaluate_cli(tmp_path) == 1
    err = capsys.readouterr().err
    assert "every item failed under full" in err

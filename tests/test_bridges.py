"""bridges.sad_identity: MABPD's SAD transcripts as identity-bias debate logs, and their measures."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from mabpd_kit.bridges import debate_log, sad_debate_logs, sad_identity_report
from mabpd_kit.config import Config
from mabpd_kit.mabpd import Pipeline

CFG = Config()


@pytest.fixture(scope="module")
def pipe(tiny_lexicon):
    return Pipeline(CFG, None, tiny_lexicon)


# ---------------------------------------------------------------------------------------------
# debate_log(decision) (was Decision.debate_log(); tests moved from tests/test_pipeline.py)
# ---------------------------------------------------------------------------------------------


def test_quoted_loaded_words_are_debated_and_logged(pipe):
    d = pipe.analyze('"This is disgraceful," Senator Maria Lopez said on Thursday.')
    assert d.route == "debate" and d.label == "neutral"
    log = debate_log(d)
    assert list(log.columns) == ["question", "agent", "round", "answer", "correct"]
    assert len(log) == 6 and log.correct.isna().all()


def test_debate_log_marks_correctness_against_gold(pipe):
    d = pipe.analyze("The so-called reform passed.", id="q1", gold="biased")
    assert d.route == "debate"
    log = debate_log(d)
    assert (log.question == "q1").all()
    assert (log.correct == (log.answer == "biased")).all()


def test_undebated_decision_gives_an_empty_log_with_the_columns(pipe):
    n = pipe.analyze("The council approved the budget on Tuesday.")
    assert n.debate is None
    log = debate_log(n)
    assert log.empty and list(log.columns) == ["question", "agent", "round", "answer", "correct"]


# ---------------------------------------------------------------------------------------------
# sad_identity_report / sad_debate_logs (moved from tests/test_identity_measures.py)
# ---------------------------------------------------------------------------------------------


def test_sad_debate_log_shape():
    # bridges.debate_log(decision): role-named agents, biased/neutral answers, rounds from 1.
    rows = []
    for item, (r1, r2, gold) in {"a1": ("BBN", "BBB", "biased"), "a2": ("NNN", None, "neutral")}.items():
        for rnd, votes in ((1, r1), (2, r2)):
            if votes is None:  # stopped on agreement after round 1
                continue
            for agent, v in zip(("bias", "evidence", "framing"), votes):
                ans = "biased" if v == "B" else "neutral"
                rows.append({"question": item, "agent": agent, "round": rnd, "answer": ans, "correct": ans == gold})
    van = pd.DataFrame(rows)
    anon = van.assign(answer=np.where((van["agent"] == "framing") & (van["round"] == 2), "neutral", van["answer"]))
    anon["correct"] = anon["answer"] == np.where(anon["question"] == "a1", "biased", "neutral")
    rep = sad_identity_report(van, anon, ci=False)
    s = rep.summary.set_index("condition")
    # a1 round 2: framing (N) vs bias, evidence (B): vanilla conforms twice; they stay B twice
    assert s.loc["vanilla", "n_pairs"] == 4 and s.loc["vanilla", "conformity"] == 0.5
    assert s.loc["anonymised", "obstinacy"] == 1.0
    assert rep.ibc.estimate == pytest.approx(0.0 - (-1.0))
    assert "IBC" in str(rep)


def test_sad_debate_logs_from_the_offline_pipeline():
    import json
    from pathlib import Path

    rows = [json.loads(x) for x in (Path(__file__).parents[1] / "data" / "samples" / "samples.jsonl").read_text().splitlines()]
    logs = sad_debate_logs([r["text"] for r in rows], [r["label"] for r in rows], ids=[r["id"] for r in rows])
    assert set(logs["condition"]) == {"vanilla", "anonymised"}
    assert {"question", "agent", "round", "answer", "correct"} <= set(logs.columns)
    rep = sad_identity_report(logs[logs["condition"] == "vanilla"].drop(columns="condition"),
                              logs[logs["condition"] == "anonymised"].drop(columns="condition"), ci=False)
    assert rep.summary["n_answers"].sum() == len(logs)

"""RADAR debate: evidence, probability sources against the fake server, a scripted full debate, offline."""

from __future__ import annotations

import json
import math
import re

import pandas as pd
import pytest

from mabpd_kit import prompts
from mabpd_kit.config import Config
from mabpd_kit.llm import connect
from mabpd_kit.radar import (
    OFFLINE_TAG,
    EvidencePool,
    RadarDebate,
    choose_source,
    example_claims,
    format_evidence,
    option_probs_from_logprobs,
    option_probs_from_samples,
    option_probs_from_stated,
    parse_option,
    run_systems,
)
from mabpd_kit.testing import Reply, all_text, last_user, system_prompt

LABELS = ["TRUE", "HALF-TRUE", "FALSE"]


def _lp(first: str, alts: dict[str, float], rest: str = " because") -> list[dict]:
    """An OpenAI-format logprobs payload: first token ``first`` with top alternatives ``alts`` (probabilities)."""
    top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in alts.items()]
    return [
        {"token": first, "logprob": math.log(alts[first]), "bytes": None, "top_logprobs": top},
        {"token": rest, "logprob": -0.01, "bytes": None, "top_logprobs": [{"token": rest, "logprob": -0.01, "bytes": None}]},
    ]


# -- evidence ----------------------------------------------------------------------------------------
def test_format_evidence_numbers_items():
    text = format_evidence(["First  fact.", "Second\nfact."])
    assert text == "[E1] First fact.\n[E2] Second fact."
    assert format_evidence([]) == "(no evidence)"


def test_pool_is_shared_deduplicated_and_ranked():
    claims = pd.DataFrame([
        dict(id="a", evidence=["Gas prices hit $4.11 a gallon in July 2008.", "OPEC cut output."]),
        dict(id="b", evidence=["The state added 40,000 jobs in 2019.", "OPEC cut output."]),
    ])
    pool = EvidencePool.from_claims(claims)
    assert len(pool) == 3
    top = pool.retrieve("gas prices in 2008", m=2)
    assert top[0].owner == "a" and top[0].number == 1 and top[0].score >= top[1].score
    assert len(pool.retrieve("jobs", m=20)) == 3  # m larger than the pool


def test_retrieved_mode_uses_pool_and_gold_mode_the_claims_own_sentences():
    ex = example_claims()
    pool = EvidencePool.from_claims(ex)
    cfg = Config().replace(**{"radar.top_m": 2})
    retrieved = RadarDebate(cfg, pool=pool).evidence_for(ex.claim[1], ex.evidence[1])
    gold = RadarDebate(cfg, pool=pool, system="gold-evidence").evidence_for(ex.claim[1], ex.evidence[1])
    assert len(retrieved) == 2 and all(e.owner is not None for e in retrieved)
    assert [e.text for e in gold] == list(ex.evidence[1][:2])
    res = RadarDebate(cfg, pool=pool).run(ex.claim[1], ex.evidence[1])
    assert res.evidence_mode == "retrieved" and res.evidence[0].owner is not None
    assert RadarDebate(cfg).evidence_mode == "gold"  # no pool: the claim's own sentences
    with pytest.raises(ValueError, match="max_rounds"):
        RadarDebate(Config().replace(**{"radar.max_rounds": 4}))


# -- probability extraction ------------------------------------------------------------------------------
def test_probs_from_a_logprobs_payload_of_the_test_server(fake_server):
    payload = _lp(" HALF", {" HALF": 0.6, " TRUE": 0.2, "TRUE": 0.05, " FALSE": 0.1, " The": 0.05})
    srv = fake_server(lambda req: Reply(content="HALF-TRUE because", logprobs=payload))
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    comp = llm.chat("label?", logprobs=True, top_logprobs=5)
    probs = option_probs_from_logprobs(comp.logprobs, LABELS)
    assert srv.requests[0]["logprobs"] is True and srv.requests[0]["top_logprobs"] == 5
    assert probs == pytest.approx({"TRUE": 0.25 / 0.95, "HALF-TRUE": 0.6 / 0.95, "FALSE": 0.1 / 0.95})


def test_logprobs_skip_leading_tokens_that_begin_no_option():
    payload = [{"token": "Verdict", "logprob": -0.1, "top_logprobs": [{"token": "Verdict", "logprob": -0.1}]},
               {"token": ":", "logprob": -0.1, "top_logprobs": []}] + _lp(" STOP", {" STOP": 0.7, " CONT": 0.3})
    from mabpd_kit.llm import TokenLogprob, TopLogprob

    toks = [TokenLogprob(token=p["token"], logprob=p["logprob"],
                         top=[TopLogprob(token=t["token"], logprob=t["logprob"]) for t in p.get("top_logprobs", [])])
            for p in payload]
    assert option_probs_from_logprobs(toks, ["STOP", "CONTINUE"]) == pytest.approx({"STOP": 0.7, "CONTINUE": 0.3})
    assert option_probs_from_logprobs(toks[:2], ["STOP", "CONTINUE"]) is None


def test_probs_from_k_samples_of_the_test_server(fake_server):
    answers = iter(["STOP", "CONTINUE - more needed", "stop.", "I think STOP", "no idea"])
    srv = fake_server(lambda req: next(answers))
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    texts = [llm.chat("stop?", temperature=0.7, sample_index=i).text for i in range(5)]
    assert srv.calls == 5  # sample_index keeps the samples apart in the cache
    assert option_probs_from_samples(texts, ["STOP", "CONTINUE"]) == {"STOP": 0.75, "CONTINUE": 0.25}


def test_probs_from_a_structured_reply(fake_server):
    from mabpd_kit.radar import JudgeProbabilities

    reply = {"p_true": 0.1, "p_half_true": 0.5, "p_false": 0.2, "p_stop": 0.3, "p_continue": 0.6, "reason": "r"}
    srv = fake_server(lambda req: json.dumps(reply))
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    v = llm.structured("probs?", JudgeProbabilities).value
    probs = option_probs_from_stated({"TRUE": v.p_true, "HALF-TRUE": v.p_half_true, "FALSE": v.p_false}, LABELS)
    assert probs == pytest.approx({"TRUE": 0.125, "HALF-TRUE": 0.625, "FALSE": 0.25})
    assert option_probs_from_stated({"STOP": -1, "CONTINUE": 1}, ["STOP", "CONTINUE"]) is None
    assert option_probs_from_stated({"STOP": 0, "CONTINUE": 0}, ["STOP", "CONTINUE"]) is None


def test_parse_option_prefers_half_true():
    assert parse_option("HALF-TRUE. It is true that ...", LABELS) == "HALF-TRUE"
    assert parse_option("half_true", LABELS) == "HALF-TRUE"
    assert parse_option("FALSE: the record shows", LABELS) == "FALSE"
    assert parse_option("maybe", LABELS) is None


def test_source_follows_probed_capabilities(fake_server):
    with_lp = fake_server()
    no_lp = fake_server(supports_logprobs=False, supports_top_logprobs=False)
    assert choose_source(connect(base_url=with_lp.base_url, model="fake", quiet=True)) == "logprobs"
    llm = connect(base_url=no_lp.base_url, model="fake", quiet=True)
    assert choose_source(llm) == "samples"
    assert choose_source(llm, Config().replace(**{"radar.k_samples": 1})) == "structured"
    assert choose_source(None) == "rule"
    assert choose_source(llm, Config().replace(**{"radar.prob_source": "structured"})) == "structured"


# -- a full scripted debate ----------------------------------------------------------------------------------
def _round_of(request: dict) -> int:
    """Which round a Judge request follows: count debater turns in its transcript (2 per round)."""
    return max(1, len(re.findall(r"\[Round \d", last_user(request))) // 2)


def _radar_script(plan: dict[int, tuple[dict[str, float], dict[str, float]]]):
    """Debaters cite evidence; the Judge's logprobs after round r come from ``plan[r]``."""

    def script(req: dict):
        sysp = system_prompt(req)
        if "POLITICIAN" in sysp:
            return "The record supports it [E1]."
        if "SCIENTIST" in sysp:
            return "It omits the national trend [E2] and [E99]."
        if "JUDGE" in sysp:
            labels, stop = plan[_round_of(req)]
            if "STOP, CONTINUE" in last_user(req):
                first = max(stop, key=stop.get)
                return Reply(content=first.strip(), logprobs=_lp(first, stop))
            first = max(labels, key=labels.get)
            return Reply(content=first.strip(), logprobs=_lp(first, labels))
        return "ok"  # capability probe

    return script


def test_scripted_debate_stops_where_the_probabilities_say(fake_server):
    plan = {
        1: ({" HALF": 0.6, " TRUE": 0.3, " FALSE": 0.1}, {" STOP": 0.5, " CONT": 0.5}),  # c 0.6 < 0.75: go on
        2: ({" HALF": 0.8, " TRUE": 0.1, " FALSE": 0.1}, {" STOP": 0.2, " CONT": 0.8}),  # s -0.6 >= -0.6, c 0.8: stop
        3: ({" TRUE": 0.9, " HALF": 0.05, " FALSE": 0.05}, {" STOP": 0.9, " CONT": 0.1}),
    }
    srv = fake_server(_radar_script(plan))
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    ex = example_claims().iloc[1]
    res = RadarDebate(Config(), llm).run(ex.claim, ex.evidence, id="c1", gold="HALF-TRUE")
    assert not res.failed, res.error
    assert res.source == "logprobs" and res.rounds_run == 2 and res.label == "HALF-TRUE" and res.correct
    assert [d.reason for d in res.decisions] == ["confidence_below_tau_v", "both_thresholds_met"]
    assert res.decisions[-1].s == pytest.approx(-0.6) and res.decisions[-1].c == pytest.approx(0.8)
    assert [t.agent for t in res.turns] == ["politician", "scientist"] * 2
    assert res.turns[1].cited == [2]  # [E99] is not in the evidence
    judge_calls = [r for r in srv.requests if "JUDGE" in system_prompt(r)]
    assert len(judge_calls) == 4 and all(r.get("logprobs") for r in judge_calls)
    debater = [r for r in srv.requests if "POLITICIAN" in system_prompt(r) or "SCIENTIST" in system_prompt(r)]
    # evidence as numbered lines, never a Python list; each agent sees its own turns and the opponent's
    assert all("[E1] " in last_user(r) and "['" not in all_text(r) for r in debater)
    pol2 = debater[2]
    # one transcript for every role (a shared prefix); the role is told which turns are its own, at the end
    assert "Politician: The record supports it [E1]." in last_user(pol2) and "(you)" not in last_user(pol2)
    assert "the turns marked Politician in the debate above are yours" in last_user(pol2).split("</debate>")[-1]
    assert "Scientist: It omits the national trend" in last_user(pol2)
    assert "rebuttal round" in last_user(pol2)
    assert res.usage.calls == 8 and res.usage.prompt_tokens > 0  # 4 debater turns + 2 x (verdict + continue)
    traj = res.trajectory()
    assert [round(s.c, 6) for s in traj.rounds] == [0.6, 0.8]


def test_no_early_stopping_and_single_agent_baselines(fake_server):
    plan = {r: ({" FALSE": 0.95, " TRUE": 0.03, " HALF": 0.02}, {" STOP": 0.99, " CONT": 0.01}) for r in (1, 2, 3)}
    srv = fake_server(_radar_script(plan))
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    ex = example_claims().iloc[2]
    full = RadarDebate(Config(), llm, system="no-early-stopping").run(ex.claim, ex.evidence, gold="FALSE")
    assert full.rounds_run == 3 and full.decisions[-1].reason == "max_rounds" and full.label == "FALSE"
    single = RadarDebate(Config(), llm, system="single").run(ex.claim, ex.evidence, gold="FALSE")
    assert single.rounds_run == 1 and single.turns == [] and single.label == "FALSE"
    procon = RadarDebate(Config(), llm, system="procon")
    assert procon.roles == ("pro", "con") and "PRO side" in prompts.render("radar", "pro")


def test_samples_source_in_a_debate(fake_server):
    import itertools
    import threading

    lock, counter = threading.Lock(), itertools.count()

    def script(req):
        if "JUDGE" in system_prompt(req):
            if "STOP, CONTINUE" in last_user(req):
                with lock:  # the k samples arrive concurrently: 4 of every 5 say STOP, whatever the order
                    i = next(counter)
                return "STOP" if i % 5 < 4 else "CONTINUE"
            return "FALSE"
        return "Claim is wrong [E1]."

    srv = fake_server(script, supports_logprobs=False, supports_top_logprobs=False)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    ex = example_claims().iloc[2]
    res = RadarDebate(Config().replace(**{"radar.k_samples": 5}), llm).run(ex.claim, ex.evidence, gold="FALSE")
    assert res.source == "samples" and not res.failed, res.error
    assert res.states[0].label_probs["FALSE"] == 1.0
    assert res.states[0].p_stop == pytest.approx(0.8) and res.rounds_run == 1 and res.decisions[0].stop
    sample_reqs = [r for r in srv.requests if "JUDGE" in system_prompt(r)]
    assert len(sample_reqs) == 10 and all(r["temperature"] == 0.7 for r in sample_reqs)


def test_structured_source_in_a_debate(fake_server):
    def script(req):
        if "JUDGE" in system_prompt(req):
            return json.dumps({"p_true": 0.05, "p_half_true": 0.15, "p_false": 0.8, "p_stop": 0.3, "p_continue": 0.7})
        return "It is wrong [E2]."

    srv = fake_server(script)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    cfg = Config().replace(**{"radar.prob_source": "structured"})
    ex = example_claims().iloc[2]
    res = RadarDebate(cfg, llm).run(ex.claim, ex.evidence, gold="FALSE")
    assert res.source == "structured" and not res.failed, res.error
    st = res.states[0]
    assert st.label_probs == pytest.approx({"TRUE": 0.05, "HALF-TRUE": 0.15, "FALSE": 0.8}) and st.p_stop == pytest.approx(0.3)
    assert res.rounds_run == 1 and res.decisions[0].reason == "both_thresholds_met"  # s = -0.4, c = 0.8
    assert res.decisions[0].source == "structured"


def test_unusable_judge_reply_is_flagged_not_fatal(fake_server):
    srv = fake_server(lambda req: "I cannot say." if "JUDGE" in system_prompt(req) else "text [E1]",
                      supports_logprobs=False, supports_top_logprobs=False)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    res = RadarDebate(Config().replace(**{"radar.k_samples": 2}), llm).run_many(example_claims(), progress=False)
    assert all(r.failed and "none of 2 samples" in r.error for r in res)
    assert all(len(r.turns) == 2 for r in res)  # the partial trace is kept


# -- offline ------------------------------------------------------------------------------------------------
def test_offline_stand_in_is_labelled_and_deterministic():
    ex = example_claims()
    a = RadarDebate(llm=None).run_many(ex, progress=False)
    b = RadarDebate(llm=None).run_many(ex, progress=False)
    assert [r.model_dump_json() for r in a] == [r.model_dump_json() for r in b]  # (NaN != NaN in dicts)
    assert all(r.source == "rule" and r.offline and r.usage.calls == 0 for r in a)
    assert all(t.text.startswith(OFFLINE_TAG) for r in a for t in r.turns)
    assert [r.label for r in a] == ["TRUE", "HALF-TRUE", "FALSE"]  # the cues fit these invented examples


def test_run_systems_offline_summary():
    table, results = run_systems(example_claims(), progress=False)
    assert list(table.system) == ["radar", "no-early-stopping", "procon", "single", "gold-evidence"]
    assert (table.set_index("system").mean_rounds["no-early-stopping"] == 3.0)
    assert table.set_index("system").mean_rounds["single"] == 1.0
    assert all(len(v) == 3 for v in results.values())
    frame = results["single"].to_frame()
    assert list(frame.id) == ["ex-true", "ex-half", "ex-false"] and (frame.rounds == 1).all()
    assert (frame.stop_reason == "max_rounds").all() and (frame.source == "rule").all()


def test_cli_offline(capsys, monkeypatch):
    from mabpd_kit.cli import main

    monkeypatch.setenv("MABPD_OFFLINE", "1")
    assert main(["radar", "debate", "The senator voted against the bill.", "--evidence",
                 "Records show the senator did not vote against the bill; the claim is false."]) == 0
    out = capsys.readouterr().out
    assert OFFLINE_TAG in out and "label: FALSE" in out
    assert main(["radar", "calibrate", "--simulate", "80"]) == 0
    out = capsys.readouterr().out
    assert "calibrated on dev" in out and "[test]" in out


@pytest.mark.parametrize("taus", [(-0.6, 0.75), (0.0, 0.6), (-1.0, 0.0), (0.5, 0.9)])
def test_live_debate_and_offline_replay_apply_the_same_rule(taus):
    from mabpd_kit.radar import DualThreshold, replay

    ex = example_claims()
    full = RadarDebate(Config(), system="no-early-stopping").run_many(ex, progress=False)
    rule = DualThreshold(*taus)
    live = RadarDebate(Config(), rule=rule).run_many(ex, progress=False)
    for f, lv in zip(full, live):
        d = replay(f.trajectory(), rule)
        assert (d.round, d.label, d.reason) == (lv.rounds_run, lv.label, lv.stop.reason)

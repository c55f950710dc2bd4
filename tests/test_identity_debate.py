"""The identity-bias debate runner against a real local server with scripted answers."""

from __future__ import annotations

import json

import pytest

from mabpd_kit.config import Config
from mabpd_kit.identity import (
    Question,
    call_seed,
    ibc,
    identity_summary,
    read_logs,
    run_debate,
)
from mabpd_kit.llm import connect
from mabpd_kit.testing import last_user

Q1 = Question(id="q1", question="Which letter comes first?", answer="A", options={"A": "a", "B": "b", "C": "c", "D": "d"})

# (condition, round) -> the answer of agents 0..4. Round 0 is the same prompt in both conditions.
TABLE = {
    ("any", 0): "AAABC",
    ("vanilla", 1): "AAAAC",  # agent 3 conforms to the A majority, agent 4 keeps C
    ("vanilla", 2): "AAAAA",  # agent 4 conforms too
    ("anonymised", 1): "AAABC",  # nobody moves
    ("anonymised", 2): "AAABC",
}
# Each agent words its reply differently, so the parser is exercised too.
FORMATS = ["Reasoning...\nAnswer: {x}", "So the answer is ({x}).", "I choose **{x}**", "answer: {lx}", "({x}) fits.\nAnswer: {x}"]


def scripted(request: dict) -> str:
    seed = request["seed"]
    agent, rnd = seed % 100, (seed // 100) % 100
    user = last_user(request)
    cond = "any" if rnd == 0 else ("anonymised" if "without saying who wrote them" in user else "vanilla")
    x = TABLE[(cond, rnd)][agent]
    return FORMATS[agent].format(x=x, lx=x.lower())


def _llm(srv):
    return connect(base_url=srv.base_url, model="fake", cache_mode="off", quiet=True)


def test_five_agents_two_rounds_exact_conformity_and_obstinacy(fake_server):
    srv = fake_server(scripted)
    logs = run_debate([Q1], _llm(srv), config=Config(), progress=False).to_frame()
    assert len(logs) == 2 * 5 * 3 and srv.calls == 2 * 5 * 3
    assert logs["parsed"].all(), logs.loc[~logs["parsed"], "raw"].tolist()
    s = identity_summary(logs, ci=False).set_index("condition")
    # Hand count, vanilla. Round 1 (prev AAABC): agents 0-2 each disagree with 3 and 4 -> 6 pairs,
    # all obstinate; agent 3 (B) vs 0,1,2,4 -> 4 pairs, now A: conforms with 0,1,2; agent 4 (C)
    # vs 0-3 -> 4 pairs, obstinate. Round 2 (prev AAAAC): agents 0-3 vs 4 -> 4 obstinate pairs;
    # agent 4 vs 0-3 -> 4 pairs, now A: all conform. Total 22 pairs, 7 conform, 14 obstinate.
    assert s.loc["vanilla", "n_pairs"] == 22
    assert s.loc["vanilla", "conformity"] == pytest.approx(7 / 22)
    assert s.loc["vanilla", "obstinacy"] == pytest.approx(14 / 22)
    # Anonymised: nobody moves; 14 pairs per round, all obstinate.
    assert s.loc["anonymised", "n_pairs"] == 28
    assert s.loc["anonymised", "conformity"] == 0.0
    assert s.loc["anonymised", "obstinacy"] == 1.0
    assert ibc(logs, ci=False).estimate == pytest.approx(-7 / 22 - (-1.0))


def test_prompts_label_identity_only_in_vanilla(fake_server):
    srv = fake_server(scripted)
    run_debate([Q1], _llm(srv), config=Config(), progress=False)
    by = {}
    for req in srv.requests:
        agent, rnd = req["seed"] % 100, (req["seed"] // 100) % 100
        cond = "any" if rnd == 0 else ("anonymised" if "without saying who wrote them" in last_user(req) else "vanilla")
        by[(cond, rnd, agent)] = last_user(req)
        assert req["seed"] == call_seed(0, agent, rnd)
        assert req["temperature"] == Config().identity.temperature
    v = by[("vanilla", 1, 3)]
    own_reply = FORMATS[3].format(x="B", lx="b")
    assert "Your own answer" in v and own_reply in v.split("Answers from the other agents")[0]
    assert "Agent 4:" not in v and "Agent 1:" in v and "Agent 5:" in v  # peers named, not itself
    a = by[("anonymised", 1, 3)]
    assert "Your own" not in a and "Agent " not in a
    assert all(f"Answer {k}:" in a for k in range(1, 6))
    assert own_reply in a  # its own reply is listed too, unlabelled
    # Seeded order: each agent gets its own shuffle, so not all five listings are the same.
    listings = {by[("anonymised", 1, k)].split("without saying who wrote them:")[1] for k in range(5)}
    assert len(listings) > 1


def test_unparsed_reply_is_kept_not_dropped(fake_server):
    def script(request):
        agent = request["seed"] % 100
        return "I am not sure, sorry." if agent == 2 else "Answer: A"

    srv = fake_server(script)
    cfg = Config().replace(**{"identity.rounds": 1})
    logs = run_debate([Q1], _llm(srv), conditions=["vanilla"], config=cfg, progress=False).to_frame()
    bad = logs[logs["agent"] == 2]
    assert len(bad) == 2 and (~bad["parsed"]).all() and bad["answer"].isna().all()
    assert (bad["raw"] == "I am not sure, sorry.").all() and not bad["correct"].any()
    s = identity_summary(logs, ci=False).iloc[0]
    assert s["n_unparsed"] == 2 and s["n_pairs"] == 0  # all parsed answers agree: no disagreement pairs


def test_killed_run_resumes_without_repeating_calls(fake_server, tmp_path):
    # The checkpoint holds one line per finished (condition, question): 2 x 2 = 4 records of 15 answers.
    srv = fake_server(scripted)
    ck = tmp_path / "run.jsonl"
    qs = [Q1, Q1.model_copy(update={"id": "q2"})]
    full = run_debate(qs, _llm(srv), config=Config(), checkpoint=ck, progress=False).to_frame()
    assert srv.calls == 60
    lines = ck.read_text().splitlines()
    assert len(lines) == 4
    # Simulate a kill: keep the first finished question and a torn half line of the second.
    ck.write_text(lines[0] + "\n" + lines[1][:30])
    srv.reset_counts()
    again = run_debate(qs, _llm(srv), config=Config(), checkpoint=ck, progress=False)
    assert srv.calls == 45 and again.resumed == 1  # the LLM cache is off here: 3 questions x 15 calls
    cols = ["condition", "question", "agent", "round", "answer", "correct"]
    assert again.to_frame()[cols].equals(full[cols])
    # A third run finds everything done.
    srv.reset_counts()
    run_debate(qs, _llm(srv), config=Config(), checkpoint=ck, progress=False)
    assert srv.calls == 0
    assert read_logs(ck)[cols].equals(full[cols])
    json.loads(ck.read_text().splitlines()[-1])  # the file ends in a complete record


def test_killed_mid_question_resends_no_answered_call_with_the_cache_on(fake_server, tmp_path):
    # With the LLM cache on (the default), a question cut short is debated again but every call
    # answered before the kill comes from the cache: nothing answered is sent twice.
    srv = fake_server(scripted)
    ck = tmp_path / "run.jsonl"
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="auto", quiet=True)
    full = run_debate([Q1], llm, conditions=["vanilla"], config=Config(), checkpoint=ck, progress=False)
    assert srv.calls == 15
    ck.write_text(ck.read_text()[:40])  # killed while writing the only record
    srv.reset_counts()
    again = run_debate([Q1], llm, conditions=["vanilla"], config=Config(), checkpoint=ck, progress=False)
    assert srv.calls == 0 and again.resumed == 0
    assert again.to_frame()["cached"].all()
    cols = ["question", "agent", "round", "answer", "correct"]
    assert again.to_frame()[cols].equals(full.to_frame()[cols])


def _agent_1_fails(fake_server, tmp_path, cache_mode):
    """A server that refuses every call of agent 1 while ``state["fail"]``; one round after round 0."""
    from mabpd_kit.testing import Reply

    state = {"fail": True}

    def script(request):
        if state["fail"] and request["seed"] % 100 == 1:
            return Reply(status=400, error="bad request")
        return "Answer: A"

    srv = fake_server(script)
    cfg = Config().replace(**{"identity.rounds": 1, "llm.max_retries": 0})
    llm = connect(base_url=srv.base_url, model="fake", cache_mode=cache_mode, quiet=True, config=cfg)
    return state, srv, cfg, llm, tmp_path / "run.jsonl"


def test_failed_calls_are_recorded_and_retried_on_resume(fake_server, tmp_path):
    state, srv, cfg, llm, ck = _agent_1_fails(fake_server, tmp_path, "off")
    res = run_debate([Q1], llm, conditions=["vanilla"], config=cfg, checkpoint=ck, progress=False)
    logs = res.to_frame()
    failed = logs[logs["agent"] == 1]
    assert failed["error"].notna().all() and failed["answer"].isna().all()
    assert read_logs(ck)["error"].notna().sum() == 2  # the log file shows the failures too
    # The question is failed, with the reasons (who, which round, what went wrong).
    assert len(res.failed) == 1 and "agent 1 round 0" in res.failed[0].error and "agent 1 round 1" in res.failed[0].error
    assert res.usage.calls == 8  # only answered calls count
    state["fail"] = False
    srv.reset_counts()
    res2 = run_debate([Q1], llm, conditions=["vanilla"], config=cfg, checkpoint=ck, progress=False)
    logs2 = res2.to_frame()
    # The failed question is debated again, whole (its round 1 now shows agent 1's answer); the
    # cache is off here, so that is all 2 x 5 calls (with the cache on, see the kill test, round 0's
    # four answered calls would come from the cache).
    assert srv.calls == 10 and not res2.failed
    assert logs2["error"].isna().all() and (logs2["answer"] == "A").all()
    assert read_logs(ck)["error"].isna().all()  # the retried answers replace the failures


def test_offline_checkpoint_is_not_duplicated_on_rerun(tmp_path):
    ck = tmp_path / "sim.jsonl"
    first = run_debate([Q1], None, checkpoint=ck, progress=False)
    again = run_debate([Q1], None, checkpoint=ck, progress=False)
    assert len(ck.read_text().splitlines()) == len(first) == 2  # one record per condition
    assert again.resumed == 2 and len(read_logs(ck)) == len(first.to_frame()) == 30
    assert read_logs(ck)["answer"].tolist() == first.to_frame()["answer"].tolist()


def test_offline_uses_labelled_simulator(capsys):
    qs = [Q1, Q1.model_copy(update={"id": "q2", "answer": "C"})]
    logs = run_debate(qs, None, config=Config(), progress=False).to_frame()
    assert "belief simulator" in capsys.readouterr().err
    assert (logs["source"] == "simulator").all() and len(logs) == 2 * 2 * 5 * 3
    assert set(logs["answer"]) <= set("ABCD")
    assert (logs["correct"] == (logs["answer"] == logs["gold"])).all()


def test_calls_run_concurrently_and_ids_must_be_unique(fake_server):
    srv = fake_server(scripted, latency=0.05)
    qs = [Q1.model_copy(update={"id": f"q{k}"}) for k in range(3)]
    run_debate(qs, _llm(srv), conditions=["vanilla"], config=Config(), progress=False)
    assert srv.max_in_flight >= 5  # at least one round of five agents in flight together
    with pytest.raises(ValueError, match="unique"):
        run_debate([Q1, Q1], _llm(srv), progress=False)


def test_failed_question_retried_with_the_cache_on_sends_only_what_changed(fake_server, tmp_path):
    state, srv, cfg, llm, ck = _agent_1_fails(fake_server, tmp_path, "auto")
    first = run_debate([Q1], llm, conditions=["vanilla"], config=cfg, checkpoint=ck, progress=False)
    assert len(first.failed) == 1 and srv.calls == 10
    answered = {(last_user(r), r["seed"]) for r in srv.requests if r["seed"] % 100 != 1}
    state["fail"] = False
    srv.reset_counts()
    again = run_debate([Q1], llm, conditions=["vanilla"], config=cfg, checkpoint=ck, progress=False)
    assert not again.failed and (again.to_frame()["answer"] == "A").all()
    # Round 0: only agent 1's call is new. Round 1: every prompt now shows agent 1's answer, so all
    # five are new requests. None of them was answered before.
    assert srv.calls == 1 + 5
    assert not {(last_user(r), r["seed"]) for r in srv.requests} & answered


def test_a_question_past_the_item_deadline_fails_with_the_reason(fake_server):
    import time

    from mabpd_kit.testing import Reply

    slow = Q1.model_copy(update={"id": "slow", "question": "Which letter is the slowest?"})

    def script(request):
        if "slowest" in last_user(request):
            return Reply(content="Answer: A", delay=9.0)
        return scripted(request)

    srv = fake_server(script, hang_limit_s=10.0)
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="off", quiet=True,
                  config=Config().replace(**{"llm.timeout_s": 30.0, "llm.concurrency": 16}))
    # (a deadline also counts time spent waiting for the endpoint's shared limit: room for all ten calls)
    cfg = Config().replace(**{"llm.item_deadline_s": 1.0})
    run_debate([Q1], llm, conditions=["vanilla"], config=Config(), progress=False)  # one-time connection set-up
    t0 = time.perf_counter()
    res = run_debate([Q1, slow], llm, conditions=["vanilla"], config=cfg, progress=False)
    assert time.perf_counter() - t0 < 7.0  # the deadline, not the 9 s the slow replies would take (room for load)
    by_id = {r.id: r for r in res}
    assert not by_id["vanilla/q1"].failed and len(by_id["vanilla/q1"].rows) == 15
    assert by_id["vanilla/slow"].failed
    assert by_id["vanilla/slow"].error == "TimeoutError: deadline: item took more than 1 s (config.llm.item_deadline_s)"

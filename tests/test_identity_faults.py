"""Issue 21.3: an endpoint fault in an identity debate is a failed call, never an answer.

A scripted server answers a share of the calls with a fault (the text-reply kinds of
:mod:`mabpd_kit.testing.faults`: 429, 500, a reply cut at max_tokens, an empty reply, a refusal, an
unreadable body, undecodable text, a reply with its quotes and colons dropped, a slow one). What must
hold: no fault is counted as an "unparsed" answer a healthy server would have parsed; a fault is
retried within the call's retry budget and never cached; an item whose call kept failing fails with
the reason; a healthy rerun with the same cache and checkpoint recomputes exactly the failed items
and sends no request for an item that had succeeded.
"""

from __future__ import annotations

import random
import threading
from collections import Counter

import pytest

from mabpd_kit.config import Config
from mabpd_kit.identity import Question, run_debate
from mabpd_kit.identity.questions import reply_fault
from mabpd_kit.llm import connect
from mabpd_kit.llm.results import Completion
from mabpd_kit.testing import Reply, last_user

N_QUESTIONS = 10
QS = [Question(id=f"q{k}", question=f"Question number {k}: which letter comes first?", answer="A",
               options={"A": "a", "B": "b", "C": "c", "D": "d"}) for k in range(N_QUESTIONS)]
TEXT_FAULTS = ("429", "500", "truncated", "empty", "refusal", "garbled_body", "garbled_text", "malformed", "slow")
#: every agent words its answer differently; each names its option (prose included), all under 120 characters
FORMATS = ["Reasoning about it...\nAnswer: {x}", "So the answer is ({x}).", "I choose **{x}** here.",
           "answer: {lx}", "Option ({x}) fits best.\nAnswer: {x}"]


def who(request: dict) -> tuple[str, str, int, int]:
    """(question id, condition, round, agent) of a debate request; round 0 is shared by the conditions."""
    agent, rnd = request["seed"] % 100, (request["seed"] // 100) % 100
    q = last_user(request).split("Question number ")[1].split(":")[0]
    cond = "any" if rnd == 0 else ("anonymised" if "without saying who wrote them" in last_user(request) else "vanilla")
    return f"q{q}", cond, rnd, agent


def healthy(request: dict) -> str:
    q, cond, rnd, agent = who(request)
    x = "ABCD"[(int(q[1:]) + agent + rnd * (cond == "vanilla")) % 4]
    return FORMATS[agent].format(x=x, lx=x.lower())


class Faulty:
    """``healthy`` except for a seeded share ``rate`` of the requests, which get a fault."""

    def __init__(self, rate: float = 0.2, seed: int = 0) -> None:
        self.rate, self.enabled = rate, True
        self.injected: Counter[str] = Counter()
        self._rng, self._lock = random.Random(seed), threading.Lock()

    def __call__(self, request: dict) -> Reply | str:
        text = healthy(request)
        with self._lock:
            kind = self._rng.choice(TEXT_FAULTS) if self.enabled and self._rng.random() < self.rate else None
            noise = bytes(self._rng.randrange(128, 256) for _ in range(24)).decode("utf-8", "replace")
            if kind is not None:
                self.injected[kind] += 1
        if kind is None:
            return text
        return {
            "429": Reply(status=429, retry_after=0.01, error="rate limited"),
            "500": Reply(status=500, retry_after=0.01, error="internal error"),
            "truncated": Reply(content=text[: max(1, len(text) // 3)], finish_reason="length"),
            "empty": Reply(content=""),
            "refusal": Reply(refusal="I can't help with that."),
            "garbled_body": Reply(raw=b'{"choices": [{"message": {"content": "Answ'),
            "garbled_text": Reply(content="\x00\x1b" + noise),
            # faults.py's malformed JSON, on a text reply: quotes and colons gone, still naming its option
            "malformed": Reply(content=text.replace('"', "").replace(":", " ")[:120]),
            "slow": Reply(content=text, delay=0.02),
        }[kind]


def _llm(srv, tmp_path, **cfg):
    config = Config().replace(**{"llm.timeout_s": 10.0, "llm.concurrency": 16, **cfg})
    return connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", quiet=True, config=config), config


def _unparsed(logs):
    return logs[~logs["parsed"].astype(bool) & logs["error"].isna()]


def test_faults_are_failed_calls_and_a_healthy_rerun_recomputes_only_the_failed_items(fake_server, tmp_path):
    # The reference: a healthy server parses every answer.
    ref_srv = fake_server(healthy)
    ref = run_debate(QS, _llm(ref_srv, tmp_path / "ref")[0], config=Config(), progress=False)
    assert not ref.failed and len(_unparsed(ref.to_frame())) == 0

    script = Faulty(rate=0.2, seed=1)
    srv = fake_server(script)
    llm, cfg = _llm(srv, tmp_path, **{"llm.max_retries": 1})  # a small budget: some calls keep failing
    ck = tmp_path / "run.jsonl"
    first = run_debate(QS, llm, config=cfg, checkpoint=ck, progress=False)
    logs = first.to_frame()
    assert sum(script.injected.values()) >= 40 and set(script.injected) == set(TEXT_FAULTS)
    # 0 faults counted as unparsed answers (a healthy server parses every one of these calls)
    assert len(_unparsed(logs)) == 0, _unparsed(logs)[["question", "agent", "round", "raw", "parse_method"]]
    assert first.metrics()["unparsed"] == 0
    # every answer taken is the healthy server's (a prose reply that names its option is that answer)
    ok = logs[logs["error"].isna()]
    merged = ok.merge(ref.to_frame(), on=["condition", "question", "agent", "round"], suffixes=("", "_ref"))
    assert len(merged) == len(ok) and (merged["answer"] == merged["answer_ref"]).all()
    # faults were retried within the budget: with max_retries=1 most calls recover, a few items fail
    failed = {r.id for r in first.failed}
    assert 0 < len(failed) < len(first)
    reasons = " ".join(r.error for r in first.failed)
    assert any(w in reasons for w in ("empty reply", "refused", "cut at max_tokens", "garbled", "unreadable",
                                      "rate-limiting", "HTTP 500"))
    succeeded = {r.id for r in first if not r.failed}
    answered = {(last_user(r), r["seed"]) for r in srv.requests
                if f"{who(r)[1]}/{who(r)[0]}" in succeeded or (who(r)[2] == 0 and any(
                    f"{c}/{who(r)[0]}" in succeeded for c in ("vanilla", "anonymised")))}

    # Run 2: a healthy server, the same cache and checkpoint.
    script.enabled = False
    srv.reset_counts()
    again = run_debate(QS, llm, config=cfg, checkpoint=ck, progress=False)
    assert not again.failed and again.resumed == len(succeeded)
    sent = [who(r) for r in srv.requests]
    assert sent, "the failed items were not recomputed"
    # only failed items were asked again, and nothing answered for a succeeded item was sent again
    assert all(f"{c}/{q}" in failed or (c == "any" and any(f"{k}/{q}" in failed for k in ("vanilla", "anonymised")))
               for q, c, _, _ in sent)
    assert not {(last_user(r), r["seed"]) for r in srv.requests} & answered
    cols = ["condition", "question", "agent", "round", "answer"]
    assert again.to_frame()[cols].sort_values(cols[:4]).reset_index(drop=True).equals(
        ref.to_frame()[cols].sort_values(cols[:4]).reset_index(drop=True))
    assert again.metrics()["unparsed"] == 0


@pytest.mark.parametrize("kind", ["truncated", "empty", "refusal", "garbled_body", "garbled_text"])
def test_a_fault_that_persists_fails_the_item_with_its_reason_and_is_never_cached(fake_server, tmp_path, kind):
    state = {"bad": True}

    def script(request):
        q, cond, rnd, agent = who(request)
        if state["bad"] and agent == 2 and rnd == 0:
            text = healthy(request)
            return {"truncated": Reply(content="Let me think about (the options", finish_reason="length"),
                    "empty": Reply(content="  \n"), "refusal": Reply(refusal="I can't help with that."),
                    "garbled_body": Reply(raw=b'{"choices": [{"mess'),
                    "garbled_text": Reply(content="\ufffd\ufffd\x00" + text[:4])}[kind]
        return healthy(request)

    srv = fake_server(script)
    llm, cfg = _llm(srv, tmp_path, **{"llm.max_retries": 2, "identity.rounds": 1})
    ck = tmp_path / "run.jsonl"
    res = run_debate(QS[:1], llm, conditions=["vanilla"], config=cfg, checkpoint=ck, progress=False)
    assert len(res.failed) == 1
    err = res.failed[0].error
    assert "agent 2 round 0" in err
    assert {"truncated": "cut at max_tokens", "empty": "empty reply", "refusal": "refused",
            "garbled_body": "unreadable", "garbled_text": "garbled"}[kind] in err, err
    bad = [r for r in srv.requests if who(r)[3] == 2 and who(r)[2] == 0]
    assert len(bad) == 1 + 2  # the first try and max_retries more, then the call failed
    assert res.metrics()["unparsed"] == 0
    state["bad"] = False
    srv.reset_counts()
    again = run_debate(QS[:1], llm, conditions=["vanilla"], config=cfg, checkpoint=ck, progress=False)
    assert not again.failed and again.metrics()["unparsed"] == 0
    # the fault was never cached: agent 2's round 0 is asked again; round 1 shows its answer, so 5 new prompts
    assert srv.calls == 1 + 5


def test_a_complete_reply_that_names_no_option_is_the_models_answer(fake_server, tmp_path):
    # An abstention in full sentences is data (unparsed, kept), not a fault: asked once in the run; only a
    # parsed answer is cached, so a rerun asks the two abstaining calls again (test_identity_cache_usable).
    def script(request):
        return "I cannot decide between these options." if who(request)[3] == 4 else healthy(request)

    srv = fake_server(script)
    llm, cfg = _llm(srv, tmp_path, **{"identity.rounds": 1})
    res = run_debate(QS[:1], llm, conditions=["vanilla"], config=cfg, progress=False)
    assert not res.failed and res.metrics()["unparsed"] == 2
    assert srv.calls == 10  # no retry
    srv.reset_counts()
    run_debate(QS[:1], llm, conditions=["vanilla"], config=cfg, progress=False)
    assert srv.calls == 2  # the other 8 replayed from the cache


@pytest.mark.parametrize("text,finish,refusal,fault", [
    ("Answer: B", "stop", None, None),
    ("Let me weigh (A) against (C). Answer: C", "length", None, None),  # cut, but it named its option
    ("The options are close; I lean to", "length", None, "cut at max_tokens"),
    ("", "stop", None, "empty reply"),
    ("   ", "stop", None, "empty reply"),
    ("", "stop", "I can't help with that.", "refused"),
    ("partial", "content_filter", None, "refused"),
    ("\ufffd\ufffd\x00\x1b", "stop", None, "garbled"),
    ("... --- ***", "stop", None, "garbled"),
    ("I cannot decide between these options.", "stop", None, None),  # the model's own unparsed answer
    ("Hmm \ufffd so the answer is B.", "stop", None, None),  # a stray bad byte, but it names B
])
def test_where_the_line_between_fault_and_answer_is(text, finish, refusal, fault):
    comp = Completion(text=text, model="m", finish_reason=finish, refusal=refusal)
    got = reply_fault(comp, QS[0], max_tokens=1024)
    assert (got is None) if fault is None else (got is not None and fault in got), got


def test_identity_run_on_a_refused_key_says_so_in_one_line(fake_server, data_dir, tmp_path, capsys, monkeypatch):
    # Issue 21, smaller: a 401 printed the runner's line, then "the log has no rows to measure".
    from mabpd_kit import cli

    srv = fake_server(lambda request: Reply(status=401, error="invalid api key"))
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MABPD_OFFLINE", raising=False)
    monkeypatch.delenv("MABPD_DEBUG", raising=False)
    monkeypatch.setenv("MABPD_DATA_DIR", str(data_dir))
    monkeypatch.setenv("MABPD_BASE_URL", srv.base_url)
    monkeypatch.setenv("MABPD_MODEL", "m")
    code = cli.main(["identity", "run", "--n", "3", "--quiet"])
    out, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2 and not out.strip()
    assert len(lines) == 1, lines
    assert "401" in lines[0] and "MABPD_API_KEY" in lines[0] and "Traceback" not in err

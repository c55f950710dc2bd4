"""Issue 37.6: an identity debate caches only usable answers (parsed, no fault, no refusal).

A refusal written as text ("I'm sorry, but I can't help with that.") or a body that is not prose (a
JSON object, an HTML error page) named no option, was neither garbled nor cut, and so was taken as the
model's unparsed answer and cached: at 20% faults over 300 calls 15 such replies were answers, at 50%
36, and a healthy rerun never asked for them again. Now they are faults (retried, never cached), an
unparsed abstention is kept in the log but not cached, and a healthy rerun re-asks exactly the calls
that had no usable answer.
"""

from __future__ import annotations

import json

import pytest
from test_identity_faults import QS, TEXT_FAULTS, Faulty, healthy, who

from mabpd_kit.config import Config
from mabpd_kit.identity import Question, run_debate
from mabpd_kit.identity.questions import reply_fault, usable
from mabpd_kit.llm import connect
from mabpd_kit.llm.results import Completion
from mabpd_kit.testing import Reply

JUNK = {"refusal_text": "I'm sorry, but I can't help with that.",
        "json_junk": json.dumps({"verdict": ["x"], "confidence": "high"}),
        "html_junk": "<html><body><h1>502 Bad Gateway</h1></body></html>"}


class MoreFaults(Faulty):
    """The text faults of test_identity_faults plus the replies that used to pass as answers."""

    kinds = TEXT_FAULTS + tuple(JUNK)

    def __call__(self, request: dict) -> Reply | str:
        with self._lock:
            kind = self._rng.choice(self.kinds) if self.enabled and self._rng.random() < self.rate else None
        if kind in JUNK:
            self.injected[kind] += 1
            return Reply(content=JUNK[kind])
        if kind is None:
            return healthy(request)
        saved, self.rate = self.rate, 1.0  # the parent draws again: make it inject this call
        try:
            return super().__call__(request)
        finally:
            self.rate = saved


@pytest.mark.parametrize("text,fault", [
    ("I'm sorry, but I can't help with that.", "refused"),
    ("I cannot answer questions like this.", "refused"),
    ('{"verdict": ["x"], "confidence": "high"}', "JSON or markup"),
    ("<html><body>502 Bad Gateway</body></html>", "JSON or markup"),
    ("I'm sorry, I can't be sure, but the answer is (B).", None),  # it names its option: an answer
    ("I cannot decide between these options.", None),  # an abstention: the model's own data...
])
def test_refusals_and_bodies_are_faults_and_only_parsed_answers_are_usable(text, fault):
    comp = Completion(text=text, model="m", finish_reason="stop")
    got = reply_fault(comp, QS[0], max_tokens=256)
    assert (got is None) if fault is None else (got is not None and fault in got), got
    assert usable(comp, QS[0]) is ("(B)" in text)  # ...but only a parsed answer is cached


def _run(rate: float, fake_server, tmp_path):
    script = MoreFaults(rate=rate, seed=3)
    srv = fake_server(script)
    cfg = Config().replace(**{"llm.timeout_s": 10.0, "llm.concurrency": 16, "identity.rounds": 0,
                              "llm.max_retries": 0})
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", quiet=True, config=cfg)
    qs = [Question(id=f"q{k}", question=f"Question number {k}: which letter comes first?", answer="A",
                   options=QS[0].options) for k in range(24)]
    first = run_debate(qs, llm, conditions=["vanilla"], config=cfg, progress=False)
    return script, srv, llm, cfg, qs, first


@pytest.mark.parametrize("rate", [0.2, 0.5])
def test_a_healthy_rerun_re_asks_exactly_the_calls_without_a_usable_answer(rate, fake_server, tmp_path):
    script, srv, llm, cfg, qs, first = _run(rate, fake_server, tmp_path)
    logs = first.to_frame()
    assert sum(script.injected[k] for k in JUNK) >= 3
    taken = logs[logs["error"].isna()]
    assert taken["parsed"].astype(bool).all(), taken.loc[~taken["parsed"].astype(bool), "raw"].tolist()
    unusable = {(q, a) for q, a in zip(logs.loc[logs["error"].notna(), "question"], logs.loc[logs["error"].notna(), "agent"])}
    assert unusable
    script.enabled = False
    srv.reset_counts()
    again = run_debate(qs, llm, conditions=["vanilla"], config=cfg, progress=False)
    asked = [(who(r)[0], who(r)[3]) for r in srv.requests]
    assert sorted(asked) == sorted(unusable)  # each unusable call once, nothing that had an answer
    assert not again.failed and again.to_frame()["parsed"].astype(bool).all()


def test_an_unparsed_abstention_is_logged_but_not_cached(fake_server, tmp_path):
    def script(request):
        return "I cannot decide between these options." if who(request)[3] == 4 else healthy(request)

    srv = fake_server(script)
    cfg = Config().replace(**{"llm.timeout_s": 10.0, "identity.rounds": 1})
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "cache", quiet=True, config=cfg)
    res = run_debate(QS[:1], llm, conditions=["vanilla"], config=cfg, progress=False)
    assert not res.failed and res.metrics()["unparsed"] == 2 and srv.calls == 10  # data, asked once in the run
    srv.reset_counts()
    run_debate(QS[:1], llm, conditions=["vanilla"], config=cfg, progress=False)
    assert sorted(who(r)[3] for r in srv.requests) == [4, 4]  # only the two abstentions are asked again

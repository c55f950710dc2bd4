"""The LLM path end to end against FakeLLMServer: scripted role replies, a repaired reply, a failing
item, concurrency, per-agent models, anonymised transcripts, checkpoint + cache resume."""

from __future__ import annotations

import json

from mabpd_kit.config import Config
from mabpd_kit.llm import connect
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.testing import all_text, system_prompt

TEXT = "Democrats slammed the plan, the senator said on Monday."


def _article(req):
    text = all_text(req)
    return text.split("<article>")[-1].split("</article>")[0]


def make_script(*, framing_first_bad=False):
    """Bias says biased (one real, one invented span), evidence and framing say neutral; in the
    debate everybody moves to biased citing "slammed"; the verifier upholds. Items containing
    FAILME always get unusable replies."""

    def script(req):
        sys_ = system_prompt(req).lower()
        if "FAILME" in _article(req):
            return "I am sorry, I cannot answer in JSON."
        if "structured argument debate" in sys_:
            return {"verdict": "biased", "confidence": 0.8, "evidence": ["slammed"],
                    "counter_argument": "it may be a quotation", "rationale": "loaded verb in the writer's voice"}
        if "bias analyst" in sys_:
            return {"verdict": "biased", "confidence": 0.9, "bias_score": 0.8, "rationale": "combat verb",
                    "spans": [{"quote": "slammed", "category": "loaded language"},
                              {"quote": "a made-up quote", "category": "loaded language"}]}
        if "evidence analyst" in sys_:
            return {"verdict": "neutral", "confidence": 0.6, "evidence_score": 0.3, "rationale": "attributed",
                    "evidence": [{"quote": "the senator said", "supports_bias": False}]}
        if "framing analyst" in sys_:
            if framing_first_bad and len(req["messages"]) <= 2:  # first try: confidence out of range
                return {"verdict": "neutral", "confidence": 7, "framing_score": 0.2, "patterns": []}
            return {"verdict": "neutral", "confidence": 0.7, "framing_score": 0.2, "patterns": [], "rationale": "-"}
        if "verifier" in sys_:
            return {"verdict": "biased", "reason": "the verb is the writer's", "strongest_quote": "slammed"}
        return "{}"

    return script


def test_llm_pipeline_end_to_end_with_a_repaired_reply(fake_server):
    srv = fake_server(make_script(framing_first_bad=True), latency=0.05)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    cfg = Config().replace(**{"agents.models": {"framing": "small-model"}})
    d = Pipeline(cfg, llm).analyze(TEXT, id="one")
    assert not d.failed, d.error
    assert d.mode == "llm" and d.route == "debate" and d.label == "biased"
    assert d.reports["framing"].usage.repaired_calls and d.usage.repaired_calls >= 1
    # invented quote kept but invalid; the real one grounded at the right offsets
    spans = {s.text: s for s in d.reports["bias"].spans}
    assert spans["slammed"].valid and TEXT[spans["slammed"].start:spans["slammed"].end] == "slammed"
    assert not spans["a made-up quote"].valid and spans["a made-up quote"] in d.store.invalid()
    # round 1 (no calls) + round 2 (3 calls) + verifier (1): usage adds up from the completions
    assert [r.index for r in d.debate.rounds] == [1, 2]
    assert d.usage.calls == 3 + 1 + 3 + 1 and d.usage.calls == srv.calls
    assert d.usage.prompt_tokens > 0 and d.usage.completion_tokens > 0
    assert d.verifier.check == "llm" and not d.verifier.overturned
    # bias: 1 valid of 2 cited in round 1 -> q = 0.5
    r1 = {w.agent: w for w in d.debate.rounds[0].arguments}
    assert r1["bias"].q == 0.5 and r1["bias"].f == 0.5
    # the article is fenced as data, the lexicon is injected, the agents of a round ran concurrently
    bias_req = next(r for r in srv.requests if "BIAS ANALYST" in system_prompt(r))
    assert "Bias taxonomy" in system_prompt(bias_req)  # lex.prompt_knowledge() injected
    assert f"<article>\n{TEXT}\n</article>" in all_text(bias_req)
    assert srv.max_in_flight >= 2
    models = {(system_prompt(r).split("\n")[0][:40], r["model"]) for r in srv.requests}
    assert any(m == "small-model" and "FRAMING" in s for s, m in models)
    assert all(m == "fake" for s, m in models if "BIAS ANALYST" in s)


def test_one_item_fails_cleanly_and_the_batch_goes_on(fake_server, tmp_path):
    srv = fake_server(make_script(), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    p = Pipeline(Config(), llm)
    ck = tmp_path / "llm.jsonl"
    res = p.analyze_many([TEXT, "FAILME: the plan was slammed.", "Republicans slammed the bill."],
                         checkpoint=ck, progress=False)
    df = res.to_frame()
    assert df.failed.tolist() == [False, True, False]
    assert "StructuredOutputError" in res[1].error or "JSON" in res[1].error
    assert res[0].label == "biased" and res[2].label == "biased"
    # resume: nothing finished is recomputed
    calls_before = srv.calls
    ck.write_text("\n".join(ck.read_text().splitlines()[:2]) + "\n")  # keep items 0 and 1 only
    again = p.analyze_many([TEXT, "FAILME: the plan was slammed.", "Republicans slammed the bill."],
                           checkpoint=ck, progress=False)
    assert again.resumed == 1  # item 0; failed item 1 is retried, item 2 recomputed
    # finished items come from the cache; unusable answers are never cached, so the failed item asks again
    assert again[1].failed and srv.calls == calls_before + again[1].usage.calls
    assert [d.label for d in again] == [d.label for d in res]


def test_anonymised_transcripts_change_the_debate_prompt(fake_server):
    def run(anonymise):
        srv = fake_server(make_script(), latency=0.0)
        llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
        Pipeline(Config().replace(**{"sad.anonymise": anonymise}), llm).analyze(TEXT)
        return [all_text(r) for r in srv.requests if "structured argument debate" in system_prompt(r).lower()]

    named, anon = run(False), run(True)
    assert len(named) == len(anon) == 3
    assert all("The bias analyst argued" in t or "You (the bias analyst)" in t for t in named)
    assert all("An analyst argued" in t and "analyst argued: verdict" in t for t in anon)
    assert not any("You (the" in t or "The framing analyst argued" in t for t in anon)


def test_endpoint_error_is_recorded_not_raised(fake_server):
    from mabpd_kit.testing import Reply

    srv = fake_server(lambda req: Reply(status=400, error="bad request"), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    d = Pipeline(Config(), llm).analyze(TEXT)
    assert d.failed and d.route == "failed" and d.error
    assert "sk-" not in json.dumps(d.to_dict())


def test_redecide_makes_no_new_report_calls(fake_server):
    srv = fake_server(make_script(), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    d = Pipeline(Config(), llm).analyze(TEXT)
    before = srv.calls
    nd = Pipeline(Config().ablation("no-debate"), llm).redecide(d)
    assert nd.route == "no_debate" and nd.reports == d.reports and nd.verifier is None
    assert srv.calls == before  # SPEC 1.9: no debate, no verifier
    before = srv.calls
    ndv = Pipeline(Config().ablation("no-debate+verifier"), llm).redecide(d)
    assert ndv.route == "no_debate" and ndv.pre_verifier_label == "biased"  # bias 0.8 grounded, 0.3, 0.2 -> 0.525
    assert srv.calls == before + 1 and ndv.verifier.check == "llm"  # the verifier only
    before = srv.calls
    single = Pipeline(Config().ablation("single-agent"), llm).redecide(d)
    assert (single.route, single.label, list(single.reports)) == ("single_agent", "biased", ["bias"])
    assert srv.calls == before and single.verifier is None
    before = srv.calls
    nv = Pipeline(Config().ablation("no-verifier"), llm).redecide(d)
    assert srv.calls == before + 3  # only the three round-2 debate moves, no reports, no verifier
    assert nv.verifier is None and nv.label == "biased"


def test_a_failed_item_still_reports_the_calls_it_cost(fake_server):
    """Every agent answers the FAILME item with prose: each tries json_schema, then repairs once.
    The trace must count those calls (the server counts them too), not report 0."""
    srv = fake_server(make_script(), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    llm.capabilities()  # the one-time probe is the endpoint's cost, not the item's
    before = srv.calls
    d = Pipeline(Config(), llm).analyze("FAILME: the plan was slammed.")
    assert d.failed
    assert d.usage.calls == srv.calls - before > 0
    assert d.usage.prompt_tokens > 0


def test_an_unsupported_language_is_decided_by_the_llm_and_keeps_the_flag(fake_server):
    srv = fake_server(make_script(), latency=0.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    d = Pipeline(Config(), llm).analyze("Die Demokraten haben den Plan am Montag scharf kritisiert, sagte der Senator.")
    assert not d.failed and d.label in ("biased", "neutral")
    assert d.language == "de" and "unsupported_language" in d.flags and srv.calls >= 3


def test_an_item_past_its_deadline_fails_and_the_batch_goes_on(fake_server):
    srv = fake_server(make_script(), latency=1.0)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, cache_mode="off")
    llm.capabilities()  # the one-time probe is the endpoint's cost, not the item's
    p = Pipeline(Config().replace(**{"llm.item_deadline_s": 0.3}), llm)
    res = p.analyze_many([TEXT], progress=False)
    assert res[0].failed and "deadline" in res[0].error and "item_deadline_s" in res[0].error

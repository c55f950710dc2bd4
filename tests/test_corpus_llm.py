"""The LLM path of a corpus run: the sentences of each chunk of articles go through
Pipeline.analyze_many (the endpoint's concurrency limit, the LLM cache, a sentence checkpoint), and
a rerun asks the endpoint nothing again."""

from __future__ import annotations

import pandas as pd

from mabpd_kit.config import Config
from mabpd_kit.corpus import CorpusConfig, analyze, read
from mabpd_kit.llm import connect
from mabpd_kit.testing import all_text, system_prompt


def _script(request):
    sys_ = system_prompt(request).lower()
    item = all_text(request).split("<article>")[-1].split("</article>")[0]
    loaded = "slammed" in item
    if "structured argument debate" in sys_:
        return {"verdict": "biased" if loaded else "neutral", "confidence": 0.8,
                "evidence": ["slammed"] if loaded else [], "counter_argument": "-", "rationale": "-"}
    if "bias analyst" in sys_:
        if loaded:
            return {"verdict": "biased", "confidence": 0.9, "bias_score": 0.9, "rationale": "combat verb",
                    "spans": [{"quote": "slammed", "category": "loaded language"}]}
        return {"verdict": "neutral", "confidence": 0.9, "bias_score": 0.05, "rationale": "-", "spans": []}
    if "evidence analyst" in sys_:
        return {"verdict": "neutral", "confidence": 0.6, "evidence_score": 0.2, "rationale": "-", "evidence": []}
    if "framing analyst" in sys_:
        return {"verdict": "neutral", "confidence": 0.7, "framing_score": 0.1, "patterns": [], "rationale": "-"}
    if "verifier" in sys_:
        return {"verdict": "biased", "reason": "the verb is the writer's", "strongest_quote": "slammed"}
    return "{}"


def test_llm_corpus_run_uses_the_limit_the_cache_and_resumes(fake_server, tmp_path):
    srv = fake_server(_script, latency=0.05)
    cfg = Config().replace(**{"llm.concurrency": 2})
    llm = connect(base_url=srv.base_url, model="fake", config=cfg, quiet=True)
    df = pd.DataFrame({"text": ["The council met on Monday. Critics slammed the plan.",
                                "Rain is expected on Tuesday. The vote is next week.", ""],
                       "outlet": ["a", "b", "c"]})
    out = tmp_path / "run.jsonl"
    st = CorpusConfig(article_decision="count", article_threshold=1)
    res = analyze(read(df), out, config=cfg, llm=llm, settings=st)
    assert [a.n_biased for a in res] == [1, 0, 0] and res.to_frame()["pred"].tolist()[:2] == [1, 0]
    assert res["2"].failed and res["2"].error == "empty text"
    assert res["0"].sentences[1].spans[0].text == "slammed"
    assert res["0"].text[res["0"].sentences[1].spans[0].start:res["0"].sentences[1].spans[0].end] == "slammed"
    assert srv.max_in_flight <= 2  # the endpoint's limit
    assert not (tmp_path / "run.jsonl.sentences.jsonl").exists()  # only the chunk in progress is kept there
    calls = len(srv.requests)
    assert calls > 0
    again = analyze(read(df), out, config=cfg, llm=llm, settings=st)
    assert again.resumed == 3 and len(srv.requests) == calls  # finished articles (and the bad row) ask nothing again


def test_llm_direct_mode_sends_each_article_once(fake_server, tmp_path):
    srv = fake_server(_script, latency=0.0)
    cfg = Config().replace(**{"llm.concurrency": 2})
    llm = connect(base_url=srv.base_url, model="fake", config=cfg, quiet=True)
    df = pd.DataFrame({"text": ["The council met on Monday. Critics slammed the plan.",
                                "Rain is expected on Tuesday. The vote is next week."]})
    res = analyze(read(df), tmp_path / "d.jsonl", config=cfg, llm=llm, settings=CorpusConfig(mode="direct"))
    assert [a.mode for a in res] == ["direct", "direct"] and [a.n_biased for a in res] == [1, 0]
    bias_calls = [r for r in srv.requests if "bias analyst" in system_prompt(r).lower()
                  and "structured argument debate" not in system_prompt(r).lower()]
    assert len(bias_calls) == 2  # one whole-article report each, no sentence splitting
    assert "Critics slammed the plan." in all_text(bias_calls[0]) + all_text(bias_calls[1])

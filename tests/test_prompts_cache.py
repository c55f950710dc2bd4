"""Prompts that cache (issue 14): the shared part first, the item next, the role's task last; the
test server emulates a prefix cache and reports cached tokens; usage and cost count them."""

from __future__ import annotations

import pytest

from mabpd_kit import prompts
from mabpd_kit.config import Config
from mabpd_kit.llm import connect
from mabpd_kit.llm.results import cached_tokens
from mabpd_kit.llm.usage import estimate_cost
from mabpd_kit.mabpd import Pipeline
from mabpd_kit.testing import role_instruction, system_prompt
from mabpd_kit.testing.prefix import PrefixCache, common_prefix, prompt_tokens, serialise
from mabpd_kit.types import Usage

TEXT = "Democrats slammed the plan, the senator said on Monday."
OTHER = "The council approved the budget on Tuesday."


def _script(req):
    sys_ = system_prompt(req).lower()
    if "structured argument debate" in sys_:
        return {"rationale": "-", "evidence": ["slammed"], "counter_argument": "-", "verdict": "biased", "confidence": 0.8}
    if "bias analyst" in sys_:
        return {"rationale": "-", "spans": [{"quote": "slammed", "category": "loaded language", "explanation": "-"}],
                "counter_argument": "-", "verdict": "biased", "confidence": 0.9, "bias_score": 0.8}
    if "evidence analyst" in sys_:
        return {"rationale": "-", "evidence": [], "counter_argument": "-", "verdict": "neutral", "confidence": 0.6,
                "evidence_score": 0.3}
    if "framing analyst" in sys_:
        return {"rationale": "-", "patterns": [], "counter_argument": "-", "verdict": "neutral", "confidence": 0.7,
                "framing_score": 0.2}
    return {"reason": "-", "strongest_quote": "slammed", "verdict": "biased"}


def _msgs(name, **kw):
    return prompts.messages("mabpd", name, knowledge="K " * 50, article="A text.", transcript="T", role="bias analyst",
                            round=2, max_spans=5, spans="- x", reply="Reply with JSON.", **kw)


def test_every_mabpd_request_starts_with_one_shared_system_part_and_ends_with_its_role():
    names = ["bias", "evidence", "framing", "debate", "verifier"]
    shared = prompts.render("mabpd", "shared")
    systems = {n: _msgs(n)[0]["content"] for n in names}
    assert all(s.startswith(shared) for s in systems.values())  # every request starts the same
    assert systems["bias"] == systems["evidence"] == systems["framing"]  # the reports: + the lexicon, shared too
    assert "K K K" in systems["bias"] and systems["debate"] == systems["verifier"] == shared  # no lexicon: cheaper
    for n in names:
        user = _msgs(n)[1]["content"]
        assert user.startswith("<article>\nA text.\n</article>")  # the item right after the shared part
        role = role_instruction({"messages": _msgs(n)})
        assert role and "Reply with JSON" in role and user.endswith(role)  # the role's task last


def test_includes_are_expanded_and_an_edited_shared_part_applies_everywhere(tmp_path):
    (tmp_path / "shared.md").write_text("EDITED shared part")
    for n, system in (("bias", "EDITED shared part\n\n" + prompts.render("mabpd", "knowledge", knowledge="K")),
                      ("debate", "EDITED shared part")):
        msgs = prompts.messages("mabpd", n, prompts_dir=tmp_path, knowledge="K", article="a", transcript="t",
                                role="r", round=1, max_spans=3, reply="R")
        assert msgs[0]["content"] == system
    assert "knowledge" in prompts.slots("mabpd", "bias")
    (tmp_path / "loop.md").write_text("<!-- include loop -->")
    with pytest.raises(prompts.PromptError, match="nested"):
        prompts.render("mabpd", "loop", prompts_dir=tmp_path)


def test_prefix_cache_emulation_counts_the_longest_shared_prefix_in_blocks():
    pc = PrefixCache(block=4, min_tokens=8)
    a = prompt_tokens([{"role": "system", "content": "one two three four five six seven eight nine ten"}])
    assert pc.add(a) == (0, 0)
    b = a[:-1] + ("eleven",)
    shared, cached = pc.add(b)
    assert shared == len(a) - 1 and cached == (shared // 4) * 4
    assert pc.add(("x", "y")) == (0, 0)
    assert common_prefix("abc", "abd") == 2
    fmt = {"type": "json_schema", "json_schema": {"schema": {"type": "object"}}}
    assert serialise({"messages": [], "response_format": fmt}, schema_first=True).startswith("schema:")


def test_the_server_reports_cached_tokens_and_usage_and_cost_count_them(fake_server, tmp_path):
    srv = fake_server(_script, prefix_block=16, prefix_min_tokens=64)
    cfg = Config().replace(**{"llm.prices_per_mtok": {"fake": (1.0, 2.0, 0.25)}})
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path, config=cfg, quiet=True)
    pipe = Pipeline(cfg, llm)
    d1 = pipe.analyze(TEXT, id="1")
    d2 = pipe.analyze(OTHER, id="2")
    assert not d1.failed and d1.route == "debate"
    # within one item every request after the first shares the shared part (and the article)
    assert d1.usage.cached_tokens >= 0.6 * d1.usage.prompt_tokens
    assert d2.usage.cached_tokens >= 0.6 * d2.usage.prompt_tokens
    assert Usage.total([d1, d2]).cached_tokens == d1.usage.cached_tokens + d2.usage.cached_tokens
    assert "cached_tokens" in d1.usage.row()
    log = llm.usage
    assert log.cached_tokens == d1.usage.cached_tokens + d2.usage.cached_tokens
    plain = estimate_cost("fake", log.prompt_tokens, log.completion_tokens, {"fake": (1.0, 2.0)})
    assert log.cost_usd == pytest.approx(plain - log.cached_tokens * 0.75 / 1e6)


def test_cached_tokens_are_read_from_every_known_usage_shape_and_priced():
    assert cached_tokens({"prompt_tokens": 10, "prompt_tokens_details": {"cached_tokens": 6}}) == 6
    assert cached_tokens({"prompt_cache_hit_tokens": 3}) == 3  # DeepSeek
    assert cached_tokens({"prompt_tokens_details": None}) == 0 and cached_tokens(None) == 0
    prices = {"m": (1.0, 2.0, 0.1)}
    assert estimate_cost("m", 1000, 0, prices, cached_tokens=400) == pytest.approx((600 + 40) / 1e6)
    assert estimate_cost("m", 1000, 0, {"m": (1.0, 2.0)}, cached_tokens=400) == pytest.approx(1000 / 1e6)
    assert estimate_cost("m-2024", 1000, 500, prices, batch_discount=0.5) == pytest.approx(1000 / 1e6)
    assert Config().replace(**{"llm.prices_per_mtok": {"m": (1.0, 2.0, 0.5)}}).llm.prices_per_mtok["m"][2] == 0.5


# -- RADAR: the shared part, then the item, then the role ------------------------------------------------------
RADAR_CLAIM = "The state cut its budget deficit in half in four years."
RADAR_EVIDENCE = [f"Report {i} says the deficit was {10 - i % 7} billion dollars in {2010 + i}, with aid of {i} billion."
                  for i in range(1, 21)]
QUESTION_END = "Then give one sentence of reasoning on the next line."


def _radar_script(req):
    """Debaters answer by role and turn; the Judge leans HALF-TRUE and asks to CONTINUE: all three rounds run."""
    import math

    from mabpd_kit.testing import Reply, last_user

    sysp, user = system_prompt(req), last_user(req)
    if "JUDGE" in sysp:
        first, alts = ((" CONT", {" CONT": 0.8, " STOP": 0.2}) if "STOP, CONTINUE" in user
                       else (" HALF", {" HALF": 0.5, " TRUE": 0.3, " FALSE": 0.2}))
        top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in alts.items()]
        return Reply(content=first.strip(), logprobs=[{"token": first, "logprob": math.log(alts[first]), "bytes": None,
                                                       "top_logprobs": top}])
    n = user.count("[Round ") + 1
    if "POLITICIAN" in sysp:
        return f"Turn {n}: the deficit fell by half [E1]."
    if "SCIENTIST" in sysp:
        return f"Turn {n}: it leaves out the federal aid [E2]."
    return "ok"


def _radar_run(fake_server, prompts_dir=None, **cfg):
    from mabpd_kit.radar import RadarDebate

    srv = fake_server(_radar_script, prefix_block=1, prefix_min_tokens=0)  # cached = the exact shared prefix
    config = Config().replace(**{"radar.prob_source": "logprobs", "llm.concurrency": 1, **cfg})
    llm = connect(base_url=srv.base_url, model="fake", quiet=True, config=config)
    res = RadarDebate(config, llm, prompts_dir=prompts_dir).run(RADAR_CLAIM, RADAR_EVIDENCE, id="c1")
    assert not res.failed, res.error
    return res, list(srv.requests)


def test_radar_requests_of_a_round_share_the_shared_part_and_the_item_and_end_with_their_role(fake_server):
    res, reqs = _radar_run(fake_server)
    assert res.rounds_run == 3 and len(reqs) == 11  # (2 turns + verdict + continue) x 2, then 2 turns + verdict
    shared = prompts.render("radar", "shared")
    assert all(q["messages"][0] == {"role": "system", "content": shared} for q in reqs)  # one system message
    assert not any(w in shared for w in ("POLITICIAN", "SCIENTIST", "JUDGE", RADAR_CLAIM))
    for r, group in enumerate([reqs[0:4], reqs[4:8], reqs[8:11]], 1):
        texts = [serialise(q) for q in group]
        common = texts[0][:min(common_prefix(texts[0], t) for t in texts)]
        # every request of the round starts with the shared part, the fenced claim, all 20 evidence lines
        # and the debate of the earlier rounds
        assert common.startswith("system: " + shared)
        item = common[common.index("<claim>\n"):]
        assert RADAR_CLAIM in item and "</evidence>" in item[item.index("[E20] "):]
        assert all(t.text in item for t in res.turns if t.round < r) and "<debate>" in item
        # ... and ends with its role: the role's paragraph after the item, then its task; the Judge's question last
        for q, role in zip(group, ["politician", "scientist", "judge", "judge"]):
            tail = role_instruction(q)
            assert tail.startswith(prompts.render("radar", role)), (r, role, tail[:80])
            assert "[E1] " not in tail and RADAR_CLAIM not in tail
            user = q["messages"][-1]["content"]
            assert user.endswith(tail) and user.index("</debate>") > user.index("</evidence>") > user.index("</claim>")
            if role == "judge":
                assert user.endswith(QUESTION_END) and ("TRUE, HALF-TRUE, FALSE" in tail or "STOP, CONTINUE" in tail)
            else:
                assert f"This is the {res.turns[2 * r - 2].stage} round" in tail
        # measured: every request of the round after the first finds at least that prefix already seen
        exact = PrefixCache(block=1)
        for q in reqs[:reqs.index(group[0]) + 1]:
            exact.add(prompt_tokens(q))
        common_tokens = len(prompt_tokens([{"role": "system", "content": common[len("system: "):]}]))
        for q in group[1:]:
            assert exact.add(prompt_tokens(q))[0] >= common_tokens - 1  # the cut may split a token
    # the server's cached_tokens: most of the debate's prompt tokens were a prefix it had seen
    assert res.usage.cached_tokens >= 0.75 * res.usage.prompt_tokens, res.usage  # measured 0.78 (the old layout: 0.71)
    # ... even for a cache that keeps only the previous prompt (llama.cpp, Ollama): consecutive requests come from
    # different roles, and they now share the shared part and the item
    toks = [prompt_tokens(q) for q in reqs]
    one_slot = sum(common_prefix(a, b) for a, b in zip(toks, toks[1:])) / sum(map(len, toks))
    assert one_slot >= 0.7, one_slot  # measured 0.78 (the old layout, role first: 0.31)


def test_radar_override_folder_applies_to_every_part(fake_server, tmp_path):
    (tmp_path / "radar").mkdir()
    (tmp_path / "radar" / "shared.md").write_text("<!-- mine -->\nEDITED SHARED PART")
    (tmp_path / "scientist.md").write_text("EDITED SCIENTIST paragraph")
    (tmp_path / "judge.md").write_text("EDITED JUDGE paragraph")
    (tmp_path / "item.md").write_text("EDITED ITEM\n" + prompts.template("radar", "item"))
    (tmp_path / "stages.md").write_text("## opening\nEDITED opening task.")
    res, reqs = _radar_run(fake_server, tmp_path, **{"radar.max_rounds": 1})
    assert len(reqs) == 3 and all(q["messages"][0]["content"] == "EDITED SHARED PART" for q in reqs)
    assert all(q["messages"][1]["content"].startswith("EDITED ITEM\n") for q in reqs)
    pol, sci, judge = (role_instruction(q) for q in reqs)
    assert pol.startswith(prompts.render("radar", "politician")) and pol.endswith("EDITED opening task.")
    assert sci.startswith("EDITED SCIENTIST paragraph")
    assert judge.startswith("EDITED JUDGE paragraph") and judge.endswith(QUESTION_END)
    assert "[Round 1 · opening] Politician: Turn 1" in reqs[1]["messages"][1]["content"]

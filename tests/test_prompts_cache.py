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
                            round=2, max_spans=5, spans="- x", **kw)


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
                                role="r", round=1, max_spans=3)
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

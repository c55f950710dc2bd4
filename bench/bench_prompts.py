"""Prompt caching and cost of the MABPD pipeline on real-model pricing (prints the figures).

Runs the LLM path against FakeLLMServer (scripted answers: the bias analyst says biased, the others
neutral, so every item takes the debate route: 3 reports + 3 debate moves + the verifier) and
measures, from the requests the server received:

- the **shared-prefix share**: prompt tokens in the longest prefix a request shares with an earlier
  request, over all prompt tokens (exact, token by token; what a prefix cache could reuse);
- the same share counting only the **previous** request (a server that keeps one prompt per slot,
  like llama.cpp and Ollama, with requests in the order the server received them);
- the **emulated cached tokens** the server reports (``usage.prompt_tokens_details.cached_tokens``,
  OpenAI's rule: prefixes of >= 1,024 tokens, in steps of 128);
- the **estimated cost per 1,000 sentences** at a price table: without caching, with cached
  prompt tokens at their discounted price, and with Batch API pricing (50% off, no cache discount
  assumed on top).

Sentences: ``data/samples/samples.jsonl`` then synthetic variants (never benchmark data).
Tokens: words and punctuation marks (``mabpd_kit.testing.prefix.TOKEN``), a stand-in for a
tokenizer. The share ignores the ``response_format`` schema (vLLM, SGLang and llama.cpp apply it
outside the prompt); ``--schema-first`` counts it as OpenAI does, before the system message.

Measured before issue 14 (each role's system prompt with the lexicon first, debate and verifier
without it; run with this file on that commit): share 0.10 for one sentence, 0.97 over 100 sentences
but 0.15 with the previous request only; $0.95 / $0.64 / $0.48 per 1,000 sentences. After: 0.62,
0.84 and 0.79; $1.07 / $0.74 / $0.54 (docs/real-models.md discusses the trade).

RADAR (``--radar-only`` for this line alone): one claim with 20 evidence sentences debated for 3 rounds
(Politician, Scientist, Judge verdict and STOP/CONTINUE; 11 requests, the Judge read through logprobs),
the same shares from the requests, and the prefix all requests of a round start with. Before (commit
3942018: each role's paragraph in the system message, the item after it; measured by running this file
with ``PYTHONPATH`` at a ``git worktree`` of that commit): share 0.70, with the previous request only
0.28, a round's common prefix 0.16 of a request; 11,459 prompt tokens. After (system: the shared part
alone; then the item: claim, evidence, debate so far; the role's paragraph and task last): 0.80, 0.80,
0.83; 11,705 prompt tokens (+2%: the debate's fence and the line telling a role its turns).

Usage: .venv/bin/python bench/bench_prompts.py [--items 100] [--model gpt-4o-mini]
       [--prices 0.15,0.60,0.075] [--batch-discount 0.5] [--schema-first] [--radar-only]
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
from pathlib import Path

os.environ.setdefault("MABPD_OFFLINE", "1")

# gpt-4o-mini, USD per 1M tokens: input 0.15, cached input 0.075, output 0.60, Batch API 50% off (OpenAI's
# prices since the model's launch in July 2024, still the listed figures in 2026 price trackers; checked
# 2026-12-01). Pass --prices for your model and current figures.
DEFAULT_PRICES = (0.15, 0.60, 0.075)


def sentences(n: int) -> list[str]:
    rows = [json.loads(line) for line in Path("data/samples/samples.jsonl").read_text().splitlines() if line.strip()]
    base = [r["text"] for r in rows]
    places = ["in the capital", "at the county board", "in parliament", "at city hall", "in the state senate"]
    out = list(base)
    i = 0
    while len(out) < n:
        out.append(f"{base[i % len(base)].rstrip('.')} {places[(i // len(base)) % len(places)]}, report {i}.")
        i += 1
    return out[:n]


def script(req: dict) -> dict:
    from mabpd_kit.testing import all_text, system_prompt

    sys_ = system_prompt(req).lower()
    article = all_text(req).split("<article>")[-1].split("</article>")[0]
    first = (article.split() or ["text"])[1] if len(article.split()) > 1 else "text"
    if "structured argument debate" in sys_:
        return {"rationale": "the verb is loaded", "evidence": [first], "counter_argument": "it may be quoted",
                "verdict": "biased", "confidence": 0.8}
    if "bias analyst" in sys_:
        return {"spans": [{"quote": first, "category": "loaded language", "explanation": "-"}],
                "rationale": "loaded word", "counter_argument": "-", "verdict": "biased", "confidence": 0.9,
                "bias_score": 0.8}
    if "evidence analyst" in sys_:
        return {"evidence": [], "rationale": "-", "counter_argument": "-", "verdict": "neutral",
                "confidence": 0.6, "evidence_score": 0.3}
    if "framing analyst" in sys_:
        return {"patterns": [], "rationale": "-", "counter_argument": "-", "verdict": "neutral",
                "confidence": 0.7, "framing_score": 0.2}
    return {"rationale": "the word is the writer's", "strongest_quote": first, "reason": "upheld",
            "verdict": "biased"}


def measure(texts: list[str], *, schema_first: bool, prices: tuple[float, float, float], discount: float,
            model: str) -> dict:
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.llm.usage import estimate_cost
    from mabpd_kit.mabpd import Pipeline
    from mabpd_kit.testing import FakeLLMServer
    from mabpd_kit.testing.prefix import PrefixCache, common_prefix, prompt_tokens

    cfg = Config().replace(**{"llm.concurrency": 1})  # requests in a fixed order: figures do not vary by run
    with tempfile.TemporaryDirectory() as cache, FakeLLMServer(script, models=[model]) as srv:
        try:  # emulate OpenAI's prefix cache when this version of the server can
            srv.prefix_cache(block=128, min_tokens=1024, schema_first=schema_first)
        except AttributeError:
            pass
        llm = connect(base_url=srv.base_url, model=model, cache_dir=cache, cache_mode="off", quiet=True, config=cfg)
        res = Pipeline(cfg, llm).analyze_many(texts, progress=False)
        failed = sum(d.failed for d in res)
        reqs = list(srv.requests)
        comps = [r for r in llm.usage.records if not r.cached]
    exact, openai = PrefixCache(block=1), PrefixCache(block=128, min_tokens=1024)  # OpenAI's caching rule
    shared = prompt = cached = last_shared = 0
    last: tuple[str, ...] = ()
    for r in reqs:  # counted here from the requests, so any server (and any version of the kit) compares
        toks = prompt_tokens(r, schema_first=schema_first)
        shared += exact.add(toks)[0]
        cached += openai.add(toks)[1]
        last_shared += common_prefix(toks, last)  # a one-slot cache (llama.cpp / Ollama): the previous prompt only
        last = toks
        prompt += len(toks)
    completion = sum(c.completion_tokens for c in comps)
    reported = sum(getattr(c, "cached_tokens", 0) for c in comps)
    table = {model: prices}
    scale = 1000 / len(texts)
    plain = estimate_cost(model, prompt, completion, {model: prices[:2]}) * scale
    try:
        with_cache = estimate_cost(model, prompt, completion, table, cached_tokens=cached) * scale
    except TypeError:  # older estimate_cost: no cached-token price
        with_cache = ((prompt - cached) * prices[0] + cached * prices[2] + completion * prices[1]) / 1e6 * scale
    return {"items": len(texts), "failed": failed, "requests": len(reqs), "share": shared / max(prompt, 1),
            "last_share": last_shared / max(prompt, 1),
            "prompt_tokens": prompt, "completion_tokens": completion, "cached_tokens": cached, "reported": reported,
            "cost_plain": plain, "cost_cached": with_cache, "cost_batch": plain * (1 - discount)}


def report(name: str, m: dict) -> None:
    print(f"== {name}: {m['items']} sentence(s), {m['requests']} requests, {m['failed']} failed")
    print(f"shared-prefix share of prompt tokens: {m['share']:.2f} (goal >= 0.70); with the previous request "
          f"only (a one-slot cache, llama.cpp / Ollama): {m['last_share']:.2f}")
    print(f"prompt tokens {m['prompt_tokens']:,}, emulated cached tokens {m['cached_tokens']:,} "
          f"({m['cached_tokens'] / max(m['prompt_tokens'], 1):.0%}; the test server reported {m['reported']:,}), "
          f"completion tokens {m['completion_tokens']:,}")
    print(f"cost per 1,000 sentences: ${m['cost_plain']:.3f} without caching, ${m['cost_cached']:.3f} with cached "
          f"prompt tokens, ${m['cost_batch']:.3f} with Batch API pricing")


# -- RADAR: one claim's debate ------------------------------------------------------------------------
RADAR_CLAIM = "The state cut its budget deficit in half in four years."


def radar_evidence(n: int = 20) -> list[str]:
    """``n`` invented evidence sentences (about 20 words each, never benchmark data)."""
    subjects = ["The budget office", "A state audit", "The governor's report", "An independent review",
                "The treasurer", "A university study", "The legislature's analysts", "A ratings agency"]
    facts = ["said the deficit fell from {a} billion to {b} billion dollars between {y} and {z}",
             "found that one-time federal aid covered about {a} billion dollars of the gap in {y}",
             "noted that pension payments of {b} billion dollars were deferred until {z}",
             "reported that tax revenue grew by {a} percent in {y}, mostly from a housing boom",
             "estimated the structural deficit at {b} billion dollars in {z}, close to its {y} level"]
    out = []
    for i in range(n):
        a, b, y = 2 + i % 7, 1 + i % 5, 2016 + i % 5
        out.append(f"{subjects[i % len(subjects)]} {facts[i % len(facts)].format(a=a, b=b, y=y, z=y + 4)}, "
                   f"according to document {i + 1}.")
    return out


def radar_script(req: dict):
    """Debaters argue (text that grows with the round), the Judge leans HALF-TRUE and asks to CONTINUE
    (logprobs), so the debate runs all three rounds: 2 turns + 2 Judge questions, twice, then 2 + 1."""
    import math

    from mabpd_kit.testing import Reply, last_user, synth_logprobs, system_prompt

    sysp, user = system_prompt(req), last_user(req)
    if "JUDGE" in sysp:
        first, alts = ((" CONT", {" CONT": 0.8, " STOP": 0.2}) if "STOP, CONTINUE" in user
                       else (" HALF", {" HALF": 0.5, " TRUE": 0.3, " FALSE": 0.2}))
        top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in alts.items()]
        return Reply(content=first.strip(), logprobs=[{"token": first, "logprob": math.log(alts[first]),
                                                       "bytes": None, "top_logprobs": top}])
    turn = user.count("[Round ") + 1
    if "POLITICIAN" in sysp:
        return (f"Point {turn}: the deficit really did fall by half [E1], revenue grew [E4] and the "
                f"budget office confirms the trend [E6]; my opponent ignores the plain numbers.")
    if "SCIENTIST" in sysp:
        return (f"Point {turn}: the claim leaves out one-time federal aid [E2] and deferred pension "
                f"payments [E3]; the structural deficit barely moved [E5], so the cut is not what it seems.")
    return Reply(content="ok", logprobs=synth_logprobs("ok", 5))


def measure_radar(*, model: str = "gpt-4o-mini") -> dict:
    """One claim (20 evidence sentences) debated for 3 rounds against the test server: the same
    shares as :func:`measure`, from the requests the server received (so any version of the kit
    compares: run this file with ``PYTHONPATH`` set to an older checkout)."""
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.radar import RadarDebate
    from mabpd_kit.testing import FakeLLMServer
    from mabpd_kit.testing.prefix import PrefixCache, common_prefix, prompt_tokens

    cfg = Config().replace(**{"llm.concurrency": 1, "radar.prob_source": "logprobs", "radar.max_rounds": 3,
                              "radar.top_m": 20})
    with tempfile.TemporaryDirectory() as cache, FakeLLMServer(radar_script, models=[model]) as srv:
        llm = connect(base_url=srv.base_url, model=model, cache_dir=cache, cache_mode="off", quiet=True, config=cfg)
        res = RadarDebate(cfg, llm).run(RADAR_CLAIM, radar_evidence(), id="bench")
        reqs = list(srv.requests)
    exact, openai = PrefixCache(block=1), PrefixCache(block=128, min_tokens=1024)
    shared = prompt = cached = last_shared = 0
    last: tuple[str, ...] = ()
    for r in reqs:
        toks = prompt_tokens(r)
        shared += exact.add(toks)[0]
        cached += openai.add(toks)[1]
        last_shared += common_prefix(toks, last)
        last = toks
        prompt += len(toks)
    # the prefix all requests of a round start with (2 debater turns + 1 or 2 Judge questions, in order)
    round_share, i = [], 0
    for st in res.states:
        group = [prompt_tokens(r) for r in reqs[i:i + 2 + len(st.sources)]]
        i += len(group)
        common = min(common_prefix(group[0], g) for g in group)
        round_share.append(common / (sum(map(len, group)) / len(group)))
    return {"failed": res.failed, "error": res.error, "rounds": res.rounds_run, "requests": len(reqs),
            "share": shared / max(prompt, 1), "last_share": last_shared / max(prompt, 1),
            "round_share": sum(round_share) / max(len(round_share), 1),
            "prompt_tokens": prompt, "cached_tokens": cached}


def report_radar(m: dict) -> None:
    print(f"== RADAR, one claim (20 evidence sentences), {m['rounds']} rounds: {m['requests']} requests"
          + (f", FAILED: {m['error']}" if m["failed"] else ""))
    print(f"shared-prefix share of prompt tokens: {m['share']:.2f}; with the previous request only "
          f"(a one-slot cache): {m['last_share']:.2f}; the prefix every request of a round starts with: "
          f"{m['round_share']:.2f} of a request (mean over rounds)")
    print(f"prompt tokens {m['prompt_tokens']:,}, emulated cached tokens at OpenAI's rule (>= 1,024, steps of 128) "
          f"{m['cached_tokens']:,}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--model", default="gpt-4o-mini")
    ap.add_argument("--prices", default=",".join(str(p) for p in DEFAULT_PRICES),
                    help="USD per 1M tokens: prompt,completion,cached prompt")
    ap.add_argument("--batch-discount", type=float, default=0.5)
    ap.add_argument("--schema-first", action="store_true", help="count the json_schema before the prompt (OpenAI)")
    ap.add_argument("--radar-only", action="store_true", help="only the RADAR line (one claim's 3-round debate)")
    a = ap.parse_args()
    if a.radar_only:
        report_radar(measure_radar(model=a.model))
        return
    prices = tuple(float(x) for x in a.prices.split(","))
    if len(prices) == 2:
        prices = (*prices, prices[0])
    print(f"prices for {a.model} (USD per 1M tokens): prompt {prices[0]}, completion {prices[1]}, "
          f"cached prompt {prices[2]}; batch discount {a.batch_discount:.0%}"
          + ("; schema counted first (OpenAI)" if a.schema_first else ""))
    kw = {"schema_first": a.schema_first, "prices": prices, "discount": a.batch_discount, "model": a.model}
    texts = sentences(a.items)
    report("one sentence, debate route", measure(texts[:1], **kw))
    report(f"{len(texts)} sentences", measure(texts, **kw))
    report_radar(measure_radar(model=a.model))


if __name__ == "__main__":
    main()

"""Real figures on a real model (prints them): llama-cpp-python's server with SmolLM2-135M-Instruct here.

Needs the local model (``make local``). A counting proxy (:class:`mabpd_kit.testing.proxy.CountingProxy`)
sits between the kit and the server, so every number below is what really crossed the wire:

1. **MABPD per item**: wall time at concurrency 1 and at the server's own limit (``llm.concurrency=None``:
   1 for this server, which computes one request at a time; ``--also N`` adds a run at N), calls, and the
   server's own prompt and completion tokens (a real tokenizer) beside the word-and-punctuation counts
   the cost estimate of ``bench/bench_prompts.py`` uses; the cost per 1,000 sentences at a price table
   (default gpt-4o-mini's) recomputed from the real counts.
2. **The prompt cache on the real server**: the same agent requests sent twice, once in the pipeline's
   order (each request shares its start with the one before: llama.cpp keeps one prompt per slot and
   reuses its longest common prefix) and once with a unique line at the very start of each system
   message (nothing can be reused); the time per call each way, and the share of prompt tokens the
   server reused (read from its log: ``Llama.generate: N prefix-match hit, remaining M prompt tokens``).

Usage: .venv/bin/python bench/bench_real.py [--items 6] [--model-path FILE.gguf] [--also 4]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
import uuid
from pathlib import Path

DEFAULT_PRICES = (0.15, 0.60, 0.075)  # gpt-4o-mini, USD per 1M tokens (input, output, cached input)


def samples(n: int) -> list[str]:
    rows = [json.loads(x) for x in Path("data/samples/samples.jsonl").read_text().splitlines() if x.strip()]
    return [r["text"] for r in rows][:n]


def words(request: dict) -> int:
    from mabpd_kit.testing.prefix import prompt_tokens

    return len(prompt_tokens(request))


def run_pipeline(url: str, alias: str, texts: list[str], concurrency: int | None, max_tokens: int):
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect, registry
    from mabpd_kit.mabpd import Pipeline

    registry.forget()
    cfg = Config().replace(**{"llm.concurrency": concurrency, "agents.max_tokens": max_tokens})
    llm = connect(base_url=url, model=alias, config=cfg, cache_mode="off", quiet=True)
    t0 = time.perf_counter()
    res = Pipeline(cfg, llm).analyze_many(texts, progress=False)
    return res, time.perf_counter() - t0


def log_reuse(log: Path, start: int) -> tuple[int, int]:
    """(prompt tokens reused, prompt tokens computed) in the server log after byte ``start``."""
    text = log.read_bytes()[start:].decode(errors="replace")
    hit = sum(int(m) for m in re.findall(r"(\d+) prefix-match hit", text))
    rest = sum(int(m) for m in re.findall(r"remaining (\d+) prompt tokens", text))
    return hit, rest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=4)
    ap.add_argument("--model-path")
    ap.add_argument("--also", type=int, default=0, help="one more run at this concurrency (0: none)")
    ap.add_argument("--max-tokens", type=int, default=320, help="agents.max_tokens (the real-model tier's budget)")
    ap.add_argument("--prices", default=",".join(map(str, DEFAULT_PRICES)))
    args = ap.parse_args()
    from mabpd_kit.llm import local
    from mabpd_kit.testing.proxy import CountingProxy

    if local.default_model_path() is None and not args.model_path:
        print(f"bench_real: no local model ({local.INSTALL_HINT}); skipped")
        return
    srv = local.serve(args.model_path)
    texts = samples(args.items)
    print(f"server: llama-cpp-python, {srv.describe()}")
    from mabpd_kit.llm import connect

    own = connect(base_url=srv.base_url, model=srv.alias, cache_mode="off", quiet=True).concurrency
    first = f"the server's own limit, {own}" + (" (= concurrency 1: this server computes one request at a time)" if own == 1 else "")
    runs = [(first, None)] + ([] if own == 1 else [("concurrency 1", 1)])
    runs += [(f"concurrency {args.also}", args.also)] if args.also else []
    p_in, p_out, p_cached = (float(x) for x in args.prices.split(","))
    for label, conc in runs:
        with CountingProxy(f"http://127.0.0.1:{srv.port}") as proxy:
            res, wall = run_pipeline(proxy.base_url, srv.alias, texts, conc, args.max_tokens)
            calls = len(proxy.posted)
            real_in = sum(u.get("prompt_tokens", 0) for u in proxy.usages)
            real_out = sum(u.get("completion_tokens", 0) for u in proxy.usages)
            est_in = sum(words(r) for r in proxy.posted)
        decided = sum(not d.failed for d in res)
        repaired = sum(d.usage.repaired_calls for d in res)
        per = [d.latency_s for d in res]
        print(f"\nMABPD, {len(texts)} sentences, {label}: wall {wall:.1f} s, {wall / len(texts):.1f} s per item "
              f"(item latency median {statistics.median(per):.1f} s, max {max(per):.1f} s); decided {decided}/{len(texts)}; "
              f"{calls} calls ({calls / len(texts):.1f} per item), {repaired} repaired")
        print(f"  prompt tokens: server {real_in:,} vs word-count estimate {est_in:,} (x{real_in / max(est_in, 1):.2f}); "
              f"completion tokens: server {real_out:,}")
        per_k = 1000 / len(texts)
        cost_real = (real_in * p_in + real_out * p_out) / 1e6 * per_k
        cost_words = (est_in * p_in + real_out * p_out) / 1e6 * per_k
        print(f"  cost per 1,000 sentences at {args.prices} USD/1M: ${cost_real:.2f} from the server's token counts, "
              f"${cost_words:.2f} with word-counted prompts (this model's replies and routes)")

    # -- the prompt cache: the same agent requests in order, then each with a unique first line
    with CountingProxy(f"http://127.0.0.1:{srv.port}") as proxy:
        run_pipeline(proxy.base_url, srv.alias, texts[:2], None, args.max_tokens)
        reqs = [r for r in proxy.posted if r.get("response_format")][:8]
    import urllib.request

    def send(body: dict) -> float:
        body = {**body, "max_tokens": 1}  # the prompt's cost alone: one token out
        req = urllib.request.Request(f"http://127.0.0.1:{srv.port}/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=600) as resp:  # noqa: S310 - loopback
            resp.read()
        return time.perf_counter() - t0

    log = Path(srv.log_path)
    start = log.stat().st_size
    cached = [send(r) for r in reqs]
    hit_c, rest_c = log_reuse(log, start)
    start = log.stat().st_size
    fresh = []
    for r in reqs:
        msgs = [dict(m) for m in r["messages"]]
        msgs[0]["content"] = f"[run {uuid.uuid4().hex}]\n" + str(msgs[0]["content"])
        fresh.append(send({**r, "messages": msgs}))
    hit_f, rest_f = log_reuse(log, start)
    print(f"\nprompt cache, {len(reqs)} agent requests (1 token out each): in the pipeline's order "
          f"{statistics.mean(cached):.2f} s per call, {hit_c / max(hit_c + rest_c, 1):.0%} of prompt tokens reused; "
          f"with nothing shared {statistics.mean(fresh):.2f} s per call, {hit_f / max(hit_f + rest_f, 1):.0%} reused; "
          f"speed-up x{statistics.mean(fresh) / max(statistics.mean(cached), 1e-9):.1f}")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()

"""Real figures on real servers (prints them): SmolLM2-135M-Instruct on llama-cpp-python's server and on
llama.cpp's own llama-server, one after the other in the same minutes.

Needs the local model (``make local``) and, for the second server, ``make llama-server`` (a server not built is
skipped with one line). A counting proxy (:class:`mabpd_kit.testing.proxy.CountingProxy`) sits between the kit
and each server, so every number below is what really crossed the wire:

1. **MABPD per item** at the server's own concurrency (``llm.concurrency=None``: 1 for llama-cpp-python's
   server, llama-server's slots; ``--also N`` adds a run at N): wall time per sentence, calls, repair turns,
   the server's own prompt and completion tokens (a real tokenizer) beside the word-and-punctuation counts
   the cost estimate of ``bench/bench_prompts.py`` uses, the share of prompt tokens served from the prompt
   cache (llama-server reports it in ``usage.prompt_tokens_details.cached_tokens``; llama-cpp-python's server
   in its log: ``Llama.generate: N prefix-match hit, remaining M prompt tokens``), and the cost per 1,000
   sentences at a price table (default gpt-4o-mini's) recomputed from the real counts.
2. **The prompt cache**: the same agent requests sent twice, once in the pipeline's order (each request
   shares its start with the one before) and once with a unique line at the very start of each system
   message (nothing can be reused); the time per call each way.

The servers run with the kit's defaults (threads: the cores free when each starts; the reply bounds of
``llm.grammar_max_items`` / ``llm.grammar_max_chars``); the machine's load is printed beside each figure.

Usage: .venv/bin/python bench/bench_real.py [--items 28] [--servers llama-server] [--model-path F.gguf] [--also 4]
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


def reuse(srv, proxy, log_start: int) -> str:
    """The share of prompt tokens served from the cache, from the usage (llama-server) or the log."""
    cached = [(u.get("prompt_tokens_details") or {}).get("cached_tokens") for u in proxy.usages]
    if cached and all(isinstance(c, int) for c in cached):
        total = sum(u.get("prompt_tokens", 0) for u in proxy.usages)
        return f"{sum(cached) / max(total, 1):.0%} (usage)"
    hit, rest = log_reuse(Path(srv.log_path), log_start)
    return f"{hit / max(hit + rest, 1):.0%} (log)"


def load() -> str:
    return "load " + " ".join(f"{x:.1f}" for x in __import__("os").getloadavg())


def bench_mabpd(srv, texts: list[str], args) -> None:
    from mabpd_kit.llm import connect
    from mabpd_kit.testing.proxy import CountingProxy

    own = connect(base_url=srv.base_url, model=srv.alias, cache_mode="off", quiet=True).concurrency
    runs = [(f"the server's own concurrency, {own}", None)] + ([(f"concurrency {args.also}", args.also)] if args.also else [])
    p_in, p_out, _ = (float(x) for x in args.prices.split(","))
    for label, conc in runs:
        start = Path(srv.log_path).stat().st_size
        before = load()
        with CountingProxy(f"http://127.0.0.1:{srv.port}") as proxy:
            res, wall = run_pipeline(proxy.base_url, srv.alias, texts, conc, args.max_tokens)
            calls = len(proxy.posted)
            real_in = sum(u.get("prompt_tokens", 0) for u in proxy.usages)
            real_out = sum(u.get("completion_tokens", 0) for u in proxy.usages)
            est_in = sum(words(r) for r in proxy.posted)
            reused = reuse(srv, proxy, start)
        decided = sum(not d.failed for d in res)
        repaired = sum(d.usage.repaired_calls for d in res)
        per = [d.latency_s for d in res]
        reasons = sorted({(d.error or "")[:60] for d in res if d.failed})
        print(f"\nMABPD on {srv.server}, {len(texts)} sentences, {label} ({before} -> {load()}): wall {wall:.1f} s, "
              f"{wall / len(texts):.1f} s per sentence (item latency median {statistics.median(per):.1f} s, max "
              f"{max(per):.1f} s); decided {decided}/{len(texts)}{'; failed: ' + ' | '.join(reasons) if reasons else ''}; "
              f"{calls} calls ({calls / len(texts):.1f} per sentence), {repaired} repair turns ({repaired / max(calls, 1):.0%})")
        print(f"  prompt tokens: server {real_in:,} vs word-count estimate {est_in:,} (x{real_in / max(est_in, 1):.2f}), "
              f"{reused} from the prompt cache; completion tokens: server {real_out:,} ({real_out / max(calls, 1):.0f} a call)")
        cost_real = (real_in * p_in + real_out * p_out) / 1e6 * 1000 / len(texts)
        print(f"  cost per 1,000 sentences at {args.prices} USD/1M: ${cost_real:.2f} from the server's token counts")


def bench_cache(srv, texts: list[str], args) -> None:
    import urllib.request

    from mabpd_kit.testing.proxy import CountingProxy

    with CountingProxy(f"http://127.0.0.1:{srv.port}") as proxy:
        run_pipeline(proxy.base_url, srv.alias, texts[:2], 1, args.max_tokens)
        reqs = [r for r in proxy.posted if r.get("response_format")][:8]

    def send(body: dict) -> float:
        body = {**body, "max_tokens": 1}  # the prompt's cost alone: one token out
        req = urllib.request.Request(f"http://127.0.0.1:{srv.port}/v1/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        t0 = time.perf_counter()
        with urllib.request.urlopen(req, timeout=600) as resp:  # noqa: S310 - loopback
            resp.read()
        return time.perf_counter() - t0

    cached = [send(r) for r in reqs]
    fresh = []
    for r in reqs:
        msgs = [dict(m) for m in r["messages"]]
        msgs[0]["content"] = f"[run {uuid.uuid4().hex}]\n" + str(msgs[0]["content"])
        fresh.append(send({**r, "messages": msgs}))
    print(f"  prompt cache on {srv.server}, {len(reqs)} agent requests (1 token out each): in the pipeline's order "
          f"{statistics.mean(cached):.2f} s per call, with nothing shared {statistics.mean(fresh):.2f} s per call: "
          f"x{statistics.mean(fresh) / max(statistics.mean(cached), 1e-9):.1f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=4)
    ap.add_argument("--servers", default="llama-cpp-python,llama-server")
    ap.add_argument("--model-path")
    ap.add_argument("--also", type=int, default=0, help="one more run at this concurrency (0: none)")
    ap.add_argument("--max-tokens", type=int, default=800, help="agents.max_tokens (the kit's default)")
    ap.add_argument("--prices", default=",".join(map(str, DEFAULT_PRICES)))
    args = ap.parse_args()
    from mabpd_kit.llm import SetupError, local

    if local.default_model_path() is None and not args.model_path:
        print(f"bench_real: no local model ({local.INSTALL_HINT}); skipped")
        return
    texts = samples(args.items)
    for kind in args.servers.split(","):
        try:
            srv = local.serve(args.model_path, server=kind, private=True)
        except SetupError as exc:
            print(f"\n{kind}: skipped ({exc})")
            continue
        try:
            print(f"\nserver: {srv.describe()}")
            bench_mabpd(srv, texts, args)
            bench_cache(srv, texts, args)
        finally:
            local.stop(srv)


if __name__ == "__main__":
    with tempfile.TemporaryDirectory():
        main()

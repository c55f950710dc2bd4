"""Performance figures of the MABPD pipeline (prints them; `make bench` runs it).

1. Rule-based throughput on the BABE training split (MABPD_DATA_DIR; skipped, saying so, when it is
   not there), in sentences per second of CPU time on one core (the median of 3 runs, start-up
   warmed and printed apart; target >= 3,000), plus macro F1 and the route distribution (a dev-set
   measurement: nothing in the pipeline was fitted to these labels).
2. LLM path against FakeLLMServer answering every call after 1.0 s:
   - one item's latency vs (calls on its critical path x 1.0 s), target within 15%;
   - 100 items at an endpoint limit of 16: throughput vs the ideal (total calls x 1.0 s / 16), target >= 85%;
   - mean calls and tokens per item by route.

Usage: .venv/bin/python bench/bench_pipeline.py [--runs 3] [--items 100] [--latency 1.0] [--limit 16] [--skip-llm]
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("MABPD_OFFLINE", "1")


def rule_throughput(runs: int = 3) -> None:
    """Sentences per CPU-second (``time.process_time``) of ``Pipeline().analyze_many`` on BABE train,
    ``runs`` times in one process; the median is the figure. One-time start-up - the lexicon and
    regular expressions, and py3langid's model (loaded by the first sentence off the English fast
    path: 48 of BABE train's) - is warmed first and printed apart: it is per process, not per sentence."""
    import statistics

    from mabpd_kit import data, language, metrics
    from mabpd_kit.mabpd import Pipeline

    try:
        if data.data_dir() is None:
            raise FileNotFoundError("MABPD_DATA_DIR is not set")
        df = data.load_babe("train", download=False)
    except (FileNotFoundError, OSError, ValueError) as exc:
        print(f"== rule-based pipeline on BABE train: SKIPPED, the data is not here ({exc}); "
              "set MABPD_DATA_DIR to the benchmark folder (or `mabpd data fetch BABE`)")
        return
    texts = df.text.tolist()
    c0 = time.process_time()
    p = Pipeline()
    p.analyze("Warm-up: the lexicon and regular expressions load once.")
    c1 = time.process_time()
    language.detect_language("Der Senat hat den Haushalt heute ohne Debatte verabschiedet.")  # py3langid's model
    c2 = time.process_time()
    rates, res = [], None
    for _ in range(runs):
        res = None  # the previous run's decisions go before the next is timed
        cpu0, wall0 = time.process_time(), time.perf_counter()
        res = p.analyze_many(texts, progress=False)
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        rates.append((len(texts) / cpu, len(texts) / wall))
    out = res.to_frame()
    print(f"== rule-based pipeline on BABE train: {len(texts)} sentences, {runs} runs")
    print(f"throughput: {statistics.median(r for r, _ in rates):,.0f} sentences per CPU-second on one core "
          f"(median; runs {', '.join(f'{r:,.0f}' for r, _ in rates)}; wall clock "
          f"{statistics.median(w for _, w in rates):,.0f}/s; target >= 3,000)")
    print(f"start-up, once per process and not in the figure: pipeline and lexicon {c1 - c0:.2f} CPU-s, "
          f"language model {c2 - c1:.2f} CPU-s")
    ok = out[~out.failed]
    y, pred = df.label[~out.failed], ok.pred.astype(int)
    print(f"macro F1 {metrics.macro_f1(y, pred):.3f}, binary F1 {metrics.f1(y, pred):.3f}, "
          f"precision {metrics.precision(y, pred):.3f}, recall {metrics.recall(y, pred):.3f}, "
          f"failed {int(out.failed.sum())}")
    dist = out.route.value_counts()
    print("routes: " + ", ".join(f"{r} {n} ({n / len(out):.1%})" for r, n in dist.items()))
    print(f"verifier overturned {int(out.verifier_overturned.sum())}; "
          f"agents disagree before debate on {_disagreement(res):.1%} of items")


def _disagreement(res) -> float:  # noqa: ANN001
    ds = [d for d in res.decisions if not d.failed]
    return sum(len({r.verdict for r in d.reports.values()}) > 1 for d in ds) / max(len(ds), 1)


def _script(request: dict) -> dict | str:
    """Role replies that send an item down a route chosen by a word in it (strong / calm / other)."""
    from mabpd_kit.testing import all_text, system_prompt

    sys_ = system_prompt(request).lower()
    article = all_text(request).split("<article>")[-1]
    kind = "strong" if "strong" in article else "calm" if "calm" in article else "mixed"
    biased = kind == "strong"
    span = [{"quote": "slammed", "category": "loaded language"}] if kind != "calm" else []
    if "structured argument debate" in sys_:
        return {"verdict": "biased", "confidence": 0.7, "evidence": ["slammed"], "counter_argument": "-", "rationale": "-"}
    if "bias analyst" in sys_:
        return {"verdict": "biased" if kind != "calm" else "neutral", "confidence": 0.8,
                "bias_score": {"strong": 0.9, "calm": 0.1, "mixed": 0.6}[kind], "spans": span, "rationale": "-"}
    if "evidence analyst" in sys_:
        return {"verdict": "biased" if biased else "neutral", "confidence": 0.7,
                "evidence_score": 0.9 if biased else 0.1, "rationale": "-",
                "evidence": [{"quote": "slammed", "supports_bias": True}] if biased else []}
    if "framing analyst" in sys_:
        return {"verdict": "biased" if biased else "neutral", "confidence": 0.7,
                "framing_score": 0.9 if biased else 0.1, "rationale": "-",
                "patterns": [{"quote": "slammed", "category": "framing"}] if biased else []}
    if "verifier" in sys_:
        return {"verdict": "biased", "reason": "the verb is the writer's", "strongest_quote": "slammed"}
    return "{}"


def _critical_path(d) -> int:  # noqa: ANN001
    """Calls in sequence: the slowest agent of each concurrent stage, then the verifier."""
    n = max((r.usage.calls for r in d.reports.values()), default=0)
    if d.debate:
        n += sum(max(w.argument.usage.calls for w in r.arguments) for r in d.debate.rounds[1:])
    return n + (d.verifier.usage.calls if d.verifier else 0)


def llm_figures(n_items: int, latency: float, limit: int) -> None:
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.mabpd import Pipeline
    from mabpd_kit.testing import FakeLLMServer

    cfg = Config().replace(**{"llm.concurrency": limit})
    with FakeLLMServer(_script, latency=latency) as srv:
        llm = connect(base_url=srv.base_url, model="fake", config=cfg, cache_mode="off", quiet=True)
        llm.chat([{"role": "user", "content": "warm-up"}])  # the SDK import and connection are not the item's
        p = Pipeline(cfg, llm)
        p.analyze("Warm-up: the mixed senator slammed the warm-up plan.")  # prompts, schemas, lexicon knowledge
        print(f"== LLM path against FakeLLMServer, {latency:.1f} s per call, endpoint limit {limit}")
        for text in ("The mixed senator slammed the plan.", "The strong senator slammed the plan.",
                     "The calm council met on Tuesday."):
            d = p.analyze(text)
            cp = _critical_path(d)
            print(f"one item ({d.route}): {d.latency_s:.2f} s for {d.usage.calls} calls, {cp} on the critical path "
                  f"-> ideal {cp * latency:.2f} s, off by {(d.latency_s / (cp * latency) - 1):+.1%} (target within 15%)")
        kinds = ["mixed", "strong", "calm"]
        texts = [f"Item {i}: the {kinds[i % 3]} senator slammed plan {i}." for i in range(n_items)]
        before = srv.calls
        t0 = time.perf_counter()
        res = p.analyze_many(texts, progress=False)
        wall = time.perf_counter() - t0
        calls = srv.calls - before
        ideal = calls * latency / limit
        print(f"{n_items} items: {calls} calls in {wall:.1f} s; ideal {ideal:.1f} s -> {ideal / wall:.1%} of ideal "
              f"throughput (target >= 85%); max in flight {srv.max_in_flight}; failed {len(res.failed)}")
        df = res.to_frame()
        df["tokens"] = df.prompt_tokens + df.completion_tokens
        by = df.groupby("route").agg(items=("id", "size"), calls=("calls", "mean"), prompt_tokens=("prompt_tokens", "mean"),
                                     completion_tokens=("completion_tokens", "mean"), tokens=("tokens", "mean"),
                                     latency_s=("latency_s", "mean"))
        print("mean per item by route:")
        print(by.round(1).to_string())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--items", type=int, default=100)
    ap.add_argument("--latency", type=float, default=1.0)
    ap.add_argument("--limit", type=int, default=16)
    ap.add_argument("--skip-llm", action="store_true")
    ap.add_argument("--runs", type=int, default=3, help="timed runs of the rule-based pipeline (the median is the figure)")
    args = ap.parse_args()
    rule_throughput(args.runs)
    if not args.skip_llm:
        llm_figures(args.items, args.latency, args.limit)


if __name__ == "__main__":
    main()

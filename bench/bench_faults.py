"""Fault run figures (printed, not asserted; `tests/test_faults.py` asserts the text path's on a smaller batch).

Three LLM paths, each against FakeLLMServer injecting faults into ``--rates`` of the calls (429, 500,
malformed JSON, truncated JSON, empty replies, wrong types, refusals, garbled bodies, slow answers),
with the LLM cache and a checkpoint; then the same items against a healthy server with the same
cache and checkpoint (results file). All the text is written for this bench (no benchmark text):

- **text**: an MABPD batch of ``--n`` sentences through ``Pipeline.analyze_many`` (the API);
- **corpus**: ``mabpd analyze CORPUS.jsonl --llm --out RESULTS.jsonl`` (the CLI, in a subprocess
  pointed at the server by ``MABPD_BASE_URL``) on ``--articles`` articles of 5 to 8 sentences; an
  item is an article, decided when it is not failed and none of its sentences failed;
- **identity**: ``identity.run_debate`` (the API: ``mabpd identity run`` needs MMLU or GSM8K) on
  ``--questions`` synthetic multiple-choice questions under both conditions; an item is a
  (condition, question), decided when it is not failed and every answer parsed (every healthy
  reply of this server parses: an unparsed answer is a fault kept as data); faults are the ones a free-text reply can meet (429, 500, truncated,
  empty, refusal, garbled body, slow): a reply in the wrong format is the model's answer, not a fault.

Targets (issues 16 and 21): 100% of items decided after the healthy rerun; 0 calls repeated for
items that had succeeded in the faulty run (and 0 requests sent again that had been answered well);
the failed count the CLI (or the API) prints equals the failed records in the results file.

Run: ``.venv/bin/python bench/bench_faults.py [--paths text,corpus,identity] [--rates 0.2,0.5] [--n 200]
[--articles 40] [--questions 20] [--seed 0]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

os.environ.setdefault("MABPD_OFFLINE", "1")

IDENTITY_FAULTS = ("429", "500", "truncated", "empty", "refusal", "garbled_body", "slow")


def _key(request: dict[str, Any]) -> str:
    """One request as the endpoint sees it (what the answer cache would key on)."""
    return json.dumps({k: v for k, v in request.items() if k not in ("stream", "user")}, sort_keys=True)


class Recorder:
    """Wraps a fault script: every request with whether it was answered well (healthy or slow)."""

    def __init__(self, script: Any) -> None:
        self.script = script
        self.seen: list[tuple[dict[str, Any], bool]] = []
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Any:
        from mabpd_kit.testing import Reply

        out = self.script(request)
        ok = not isinstance(out, Reply) or (out.delay > 0 and out.status == 200 and out.raw is None
                                            and out.refusal is None and out.finish_reason == "stop")
        with self._lock:
            self.seen.append((request, ok))
        return out

    def take(self) -> list[tuple[dict[str, Any], bool]]:
        with self._lock:
            out, self.seen = self.seen, []
        return out


def _pct(a: int, b: int) -> str:
    return f"{a}/{b} ({a / b:.1%})" if b else f"{a}/0"


def _faults(script: Any) -> str:
    return ", ".join(f"{k} {v}" for k, v in sorted(script.injected.items())) or "none"


# -- the text path (the API) -------------------------------------------------------------------


def text_path(args: argparse.Namespace, rate: float) -> None:
    from mabpd_kit.testing.faults import fault_run

    with tempfile.TemporaryDirectory() as work:
        os.environ["MABPD_CACHE_DIR"] = os.path.join(work, "cache")
        f = fault_run(args.n, workdir=work, rate=rate, seed=args.seed, concurrency=args.concurrency)
    n = f["n"]
    print(f"== text path (Pipeline.analyze_many): {n} MABPD items, {f['rate']:.0%} of calls faulted in run 1, "
          "then a healthy rerun")
    print("faults injected in run 1: " + ", ".join(f"{k} {v}" for k, v in sorted(f["injected"].items())))
    print(f"run 1 (faulty):  {f['decided_1']}/{n} decided ({f['decided_1'] / n:.1%}), {f['calls_1']} server calls, "
          f"{f['wall_s_1']:.1f} s; failures: " + ", ".join(f"{k} {v}" for k, v in f["errors_1"].most_common()))
    print(f"run 2 (healthy): {f['decided_2']}/{n} decided ({f['decided_2'] / n:.1%}; target 100%), "
          f"{f['resumed_2']} from the checkpoint, {f['calls_2']} server calls for {n - f['resumed_2']} items, "
          f"{f['wall_s_2']:.1f} s")
    print(f"calls repeated for items that had succeeded in run 1: {f['repeated_2']} (target 0)")
    print("labels after run 2: " + ", ".join(f"{k} {v}" for k, v in sorted(f["labels_2"].items(), key=str)))


# -- the corpus path (the CLI) -----------------------------------------------------------------


def _corpus(path: Path, n_articles: int) -> dict[str, str]:
    """Articles of 5-8 synthetic sentences (each sentence once in the corpus); returns sentence -> article id."""
    from mabpd_kit.testing.faults import synthetic_items

    sizes = [5 + k % 4 for k in range(n_articles)]
    sents = [t for t, _ in synthetic_items(sum(sizes))]
    owner: dict[str, str] = {}
    pos = 0
    with path.open("w", encoding="utf-8") as fh:
        for k, size in enumerate(sizes):
            mine = sents[pos:pos + size]
            pos += size
            for s in mine:
                owner[s] = f"art{k}"
            fh.write(json.dumps({"id": f"art{k}", "outlet": f"outlet{k % 4}", "text": " ".join(mine)}) + "\n")
    return owner


def _results(path: Path) -> dict[str, dict[str, Any]]:
    out = {}
    with path.open(encoding="utf-8") as fh:
        for text in fh:
            line = json.loads(text)
            out[line["id"]] = {"failed": bool(line["failed"]), "record": line["record"]}
    return out


def _sentence_of(request: dict[str, Any]) -> str:
    from mabpd_kit.testing import all_text

    text = all_text(request)
    return text.split("<article>")[-1].split("</article>")[0].strip() if "<article>" in text else ""


def corpus_path(args: argparse.Namespace, rate: float) -> None:
    from mabpd_kit.testing import FakeLLMServer
    from mabpd_kit.testing.faults import FaultyScript, mabpd_reply, synthetic_items

    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        src, out = work / "corpus.jsonl", work / "results.jsonl"
        owner = _corpus(src, args.articles)
        labels = {t: y for t, y in synthetic_items(len(owner))}
        (work / "config.toml").write_text(f"[llm]\nconcurrency = {args.concurrency}\ntimeout_s = 10.0\n")
        script = FaultyScript(lambda r: mabpd_reply(r, labels), rate=rate, seed=args.seed)
        rec = Recorder(script)
        env = {k: v for k, v in os.environ.items() if k != "MABPD_OFFLINE"}
        env.update({"MABPD_CACHE_DIR": str(work / "cache"), "MABPD_MODEL": "fake"})
        print(f"== corpus path (mabpd analyze CORPUS --llm): {args.articles} articles, {len(owner)} sentences, "
              f"{rate:.0%} of calls faulted in run 1, then a healthy rerun (same cache, same results file)")
        figures: dict[int, dict[str, Any]] = {}
        with FakeLLMServer(rec) as srv:
            env["MABPD_BASE_URL"] = srv.base_url
            for run in (1, 2):
                script.enabled = run == 1
                t0 = time.perf_counter()
                proc = subprocess.run([sys.executable, "-m", "mabpd_kit.cli", "analyze", str(src), "--llm", "--out",
                                       str(out), "--config", str(work / "config.toml"), "--id-col", "id", "--quiet"],
                                      env=env, capture_output=True, text=True, timeout=1800)
                wall = time.perf_counter() - t0
                said = re.search(r"(\d+) failed \(reasons in the file\)", proc.stderr)
                if said is None:
                    print(f"run {run}: the CLI printed no count (exit {proc.returncode}):\n{proc.stderr[-1500:]}")
                    return
                res = _results(out)
                seen = rec.take()
                sent_failed = {a: sum(s["label"] == "failed" for s in r["record"]["sentences"]) for a, r in res.items()}
                figures[run] = {"res": res, "seen": seen, "said": int(said.group(1)), "sent_failed": sent_failed}
                n_sent = sum(r["record"]["n_sentences"] + r["record"]["n_failed_sentences"] for r in res.values())
                failed_sent = sum(sent_failed.values())
                decided = [a for a, r in res.items() if not r["failed"] and not sent_failed[a]]
                partial = [a for a, r in res.items() if not r["failed"] and sent_failed[a]]
                in_file = sum(r["failed"] for r in res.values())
                line = (f"run {run} ({'faulty' if run == 1 else 'healthy'}): exit {proc.returncode}, {len(seen)} server "
                        f"calls ({sum(not ok for _, ok in seen)} faulted), {wall:.1f} s; articles decided (not failed, "
                        f"no failed sentence) {_pct(len(decided), len(res))}; failed articles {in_file}, articles "
                        f"not failed but with failed sentences {len(partial)}; sentences failed "
                        f"{failed_sent}/{n_sent}")
                if run == 2:
                    line += " (target: 100% decided)"
                print(line)
                print(f"  the CLI printed {figures[run]['said']} failed; the results file holds {in_file} failed "
                      f"records: {'equal' if figures[run]['said'] == in_file else 'NOT EQUAL'}")
                if run == 1:
                    print(f"  faults injected: {_faults(script)}")
        one, two = figures[1], figures[2]
        ok_articles = {a for a, r in one["res"].items() if not r["failed"] and not one["sent_failed"][a]}
        ok_sentences: set[str] = set()
        for r in one["res"].values():
            text = r["record"]["text"]
            for s in r["record"]["sentences"]:
                if s["label"] in ("biased", "neutral"):
                    ok_sentences.add(text[s["start"]:s["end"]].strip())
        sent2 = [_sentence_of(req) for req, _ in two["seen"]]
        rep_art = sum(owner.get(s) in ok_articles for s in sent2)
        rep_sent = sum(s in ok_sentences for s in sent2)
        answered = {_key(req) for req, ok in one["seen"] if ok}
        again = sum(_key(req) in answered for req, _ in two["seen"])
        print(f"  run 2: calls for articles decided in run 1: {rep_art} (target 0); for sentences decided in run 1: "
              f"{rep_sent} (target 0); requests answered well in run 1 and sent again: {again} (target 0)")


# -- the identity path (the API) ---------------------------------------------------------------


class IdentityFaults:
    """The free-text reply an identity agent gives, or (``rate`` of the calls) a fault."""

    def __init__(self, rate: float, seed: int) -> None:
        import random

        self.rate, self.enabled = rate, True
        self.injected: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    @staticmethod
    def healthy(request: dict[str, Any]) -> str:
        seed = int(request.get("seed") or 0)
        agent, rnd = seed % 100, (seed // 100) % 100
        return f"Reasoning: option {'AB'[(agent + rnd) % 2]} fits the question best.\nAnswer: {'AB'[(agent + rnd) % 2]}"

    def __call__(self, request: dict[str, Any]) -> Any:
        from mabpd_kit.testing import Reply

        good = self.healthy(request)
        with self._lock:
            kind = self._rng.choice(IDENTITY_FAULTS) if self.enabled and self._rng.random() < self.rate else None
            if kind is not None:
                self.injected[kind] += 1
        if kind is None:
            return good
        return {
            "429": Reply(status=429, retry_after=0.01, error="rate limited"),
            "500": Reply(status=500, retry_after=0.01, error="internal error"),
            "truncated": Reply(content=good[: max(1, len(good) // 3)], finish_reason="length"),
            "empty": Reply(content=""),
            "refusal": Reply(refusal="I can't help with that."),
            "garbled_body": Reply(raw=b'{"choices": [{"message": {"content": "Reason'),
            "slow": Reply(content=good, delay=0.04),
        }[kind]


def _questions(n: int) -> list[Any]:
    from mabpd_kit.identity import Question

    return [Question(id=f"q{k}", question=f"Bench question number {k}: which of these options comes first?",
                     answer="A", options={"A": f"alpha {k}", "B": f"beta {k}", "C": f"gamma {k}", "D": f"delta {k}"})
            for k in range(n)]


def _items_of(request: dict[str, Any]) -> set[str]:
    """The (condition, question) items a request can belong to (round 0 is the same for both conditions)."""
    from mabpd_kit.testing import all_text, last_user

    m = re.search(r"Bench question number (\d+):", all_text(request))
    if m is None:
        return set()
    q = f"q{m.group(1)}"
    user = last_user(request)
    if "Your own answer" in user:
        return {f"vanilla/{q}"}
    if "without saying who wrote" in user:
        return {f"anonymised/{q}"}
    return {f"vanilla/{q}", f"anonymised/{q}"}


def identity_path(args: argparse.Namespace, rate: float) -> None:
    from mabpd_kit.config import Config
    from mabpd_kit.identity import run_debate
    from mabpd_kit.llm import connect
    from mabpd_kit.testing import FakeLLMServer

    qs = _questions(args.questions)
    cfg = Config().replace(**{"llm.concurrency": args.concurrency, "llm.timeout_s": 10.0})
    script = IdentityFaults(rate, args.seed)
    rec = Recorder(script)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ck = work / "identity.jsonl"
        n_items = 2 * len(qs)
        print(f"== identity path (identity.run_debate): {len(qs)} questions x 2 conditions = {n_items} items, "
              f"{cfg.identity.n_agents} agents x {cfg.identity.rounds + 1} rounds, {rate:.0%} of calls faulted in "
              "run 1, then a healthy rerun (same cache, same checkpoint)")
        figures: dict[int, dict[str, Any]] = {}
        with FakeLLMServer(rec) as srv:
            for run in (1, 2):
                script.enabled = run == 1
                llm = connect(base_url=srv.base_url, model="fake", config=cfg, cache_dir=work / "cache", quiet=True)
                t0 = time.perf_counter()
                res = run_debate(qs, llm, config=cfg, checkpoint=ck, progress=False)
                wall = time.perf_counter() - t0
                said = re.search(r"(\d+) failed", res.summary())
                res_file = _results(ck)
                in_file = sum(r["failed"] for r in res_file.values())
                rows = [row for r in res_file.values() for row in r["record"]["rows"]]
                unparsed = sum(not row["parsed"] for row in rows)
                failed_calls = sum(row["error"] is not None for row in rows)
                seen = rec.take()
                figures[run] = {"res": res_file, "seen": seen}
                not_failed = [r for r in res_file.values() if not r["failed"]]
                decided = sum(all(row["parsed"] for row in r["record"]["rows"]) for r in not_failed)
                line = (f"run {run} ({'faulty' if run == 1 else 'healthy'}): {len(seen)} server calls "
                        f"({sum(not ok for _, ok in seen)} faulted), {wall:.1f} s; items decided (not failed, every "
                        f"answer parsed) {_pct(decided, len(res_file))}; not failed {len(not_failed)}, "
                        f"{res.resumed} from the checkpoint; answers {len(rows)}: {unparsed} unparsed, "
                        f"{failed_calls} failed calls")
                if run == 2:
                    line += " (target: 100% decided; every healthy reply parses, so an unparsed answer is a fault kept)"
                print(line)
                n_said = int(said.group(1)) if said else None
                print(f"  the API's summary says {n_said} failed (res.n_failed {res.n_failed}); the checkpoint holds "
                      f"{in_file} failed records: {'equal' if n_said == in_file == res.n_failed else 'NOT EQUAL'}")
                if run == 1:
                    print(f"  faults injected: {_faults(script)}")
        one, two = figures[1], figures[2]
        ok_items = {i for i, r in one["res"].items() if not r["failed"]}
        rep = sum(bool(its) and its <= ok_items for its in (_items_of(req) for req, _ in two["seen"]))
        answered = {_key(req) for req, ok in one["seen"] if ok}
        again = sum(_key(req) in answered for req, _ in two["seen"])
        print(f"  run 2: calls for items decided in run 1: {rep} (target 0); requests answered well in run 1 and "
              f"sent again: {again} (target 0)")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--paths", default="text,corpus,identity", help="which paths (default text,corpus,identity)")
    ap.add_argument("--rates", default="0.2,0.5", help="shares of calls given a fault in run 1 (default 0.2,0.5)")
    ap.add_argument("--rate", type=float, help="one rate (the same as --rates RATE)")
    ap.add_argument("--n", type=int, default=200, help="text path: items (default 200)")
    ap.add_argument("--articles", type=int, default=40, help="corpus path: articles (default 40)")
    ap.add_argument("--questions", type=int, default=20, help="identity path: questions (default 20)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--concurrency", type=int, default=8, help="endpoint limit (config.llm.concurrency)")
    args = ap.parse_args()
    rates = [args.rate] if args.rate is not None else [float(r) for r in args.rates.split(",") if r.strip()]
    paths = {"text": text_path, "corpus": corpus_path, "identity": identity_path}
    chosen = [p.strip() for p in args.paths.split(",") if p.strip()]
    unknown = set(chosen) - set(paths)
    if unknown:
        raise SystemExit(f"unknown path(s) {sorted(unknown)}: choose from {', '.join(paths)}")
    print(f"(load average {os.getloadavg()[0]:.2f}; {os.cpu_count()} cores)")
    for rate in rates:
        for p in chosen:
            paths[p](args, rate)
            sys.stdout.flush()


if __name__ == "__main__":
    t = time.perf_counter()
    main()
    print(f"(bench took {time.perf_counter() - t:.0f} s)")

"""A fault run: an LLM MABPD batch against a :class:`FakeLLMServer` that answers a share of the calls with a fault
(429, 500, malformed or cut-off JSON, empty, wrong types, refusal, garbled body, slow), then the rerun on a healthy
one with the same cache and checkpoint: every item decided, no call repeated for an item that succeeded."""

from __future__ import annotations

import json
import random
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .scripts import fenced, system_prompt
from .server import FakeLLMServer, Reply

__all__ = ["FAULTS", "FaultyScript", "fault_run", "mabpd_reply", "synthetic_items"]

FAULTS = ("429", "500", "malformed", "truncated", "empty", "wrong_types", "refusal", "garbled_body", "slow")

_SUBJECTS = ["The mayor", "Senate leaders", "The council", "The minister", "Union officials", "The governor",
             "City planners", "The committee", "Party leaders", "The agency"]
_LOADED = ["slammed", "rammed through", "gutted", "trashed", "bulldozed"]  # biased in the writer's voice
_PLAIN = ["discussed", "approved", "reviewed", "amended", "postponed"]
_OBJECTS = ["the housing plan", "the budget proposal", "the transit bill", "the school reform"]


def synthetic_items(n: int) -> list[tuple[str, int]]:
    """``n`` distinct news-style sentences written for this test, labelled 1 for a loaded verb, 0 for a plain one."""
    combos = [(s, v, o) for s in _SUBJECTS for v in _LOADED + _PLAIN for o in _OBJECTS]
    out = []
    for k in range(n):
        s, v, o = combos[k % len(combos)]
        out.append((f"{s} {v} {o} on day {k + 1}, officials said.", int(v in _LOADED)))
    return out


def mabpd_reply(request: dict[str, Any], labels: dict[str, int]) -> dict[str, Any]:
    """A valid reply for any MABPD agent: bias and framing follow the label, evidence says neutral, the verifier upholds."""
    sys_ = system_prompt(request).lower()
    article = fenced(request).strip()
    biased = labels.get(article, 0) == 1
    verdict = "biased" if biased else "neutral"
    quote = next((v for v in _LOADED if v in article), article.split(" ")[0] if article else "")
    if "structured argument debate" in sys_:
        return {"evidence": [quote] if biased else [], "rationale": "-", "counter_argument": "-",
                "verdict": verdict, "confidence": 0.8}
    if "bias analyst" in sys_:
        return {"spans": [{"quote": quote, "category": "loaded language"}] if biased else [], "rationale": "-",
                "counter_argument": "-", "verdict": verdict, "confidence": 0.9, "bias_score": 0.8 if biased else 0.1}
    if "evidence analyst" in sys_:
        return {"evidence": [], "rationale": "-", "counter_argument": "-", "verdict": "neutral", "confidence": 0.6,
                "evidence_score": 0.3}
    if "framing analyst" in sys_:
        return {"patterns": [], "rationale": "-", "counter_argument": "-", "verdict": verdict, "confidence": 0.7,
                "framing_score": 0.7 if biased else 0.2}
    if "verifier" in sys_:
        return {"verdict": "biased", "reason": "the verb is the writer's", "strongest_quote": quote}
    return {}


class FaultyScript:
    """``healthy(request)``, except that a seeded share ``rate`` of the requests get one of ``kinds``
    (``enabled = False``: always healthy); ``injected`` counts the faults by kind."""

    def __init__(self, healthy: Callable[[dict[str, Any]], Any], *, rate: float = 0.2, seed: int = 0,
                 kinds: tuple[str, ...] = FAULTS) -> None:
        self.healthy, self.rate, self.kinds = healthy, rate, kinds
        self.enabled = True
        self.injected: Counter[str] = Counter()
        self._rng = random.Random(seed)
        self._lock = threading.Lock()

    def __call__(self, request: dict[str, Any]) -> Any:
        good = self.healthy(request)
        with self._lock:
            kind = self._rng.choice(self.kinds) if self.enabled and self._rng.random() < self.rate else None
            if kind is not None:
                self.injected[kind] += 1
        if kind is None:
            return good
        text = json.dumps(good)
        return {
            "429": Reply(status=429, retry_after=0.01, error="rate limited"),
            "500": Reply(status=500, retry_after=0.01, error="internal error"),
            "malformed": Reply(content=text.replace('"', "").replace(":", " ")[:120]),
            "truncated": Reply(content=text[: max(1, len(text) // 3)], finish_reason="length"),
            "empty": Reply(content=""),
            "wrong_types": Reply(content=json.dumps({k: [v] if isinstance(v, str) else "high" for k, v in good.items()})),
            "refusal": Reply(refusal="I can't help with that."),
            "garbled_body": Reply(raw=b'{"choices": [{"message": {"content": "{\\"verd'),
            "slow": Reply(content=text, delay=0.04),
        }[kind]


def _per_item(requests: list[dict[str, Any]], ids: dict[str, str]) -> Counter[str]:
    return Counter(ids[a] for a in (fenced(r).strip() for r in requests) if a in ids)


def fault_run(n: int = 200, *, workdir: str | Path, rate: float = 0.2, seed: int = 0,
              concurrency: int = 8) -> dict[str, Any]:
    """Run 1 against the faulty server, run 2 against the healthy one (same cache and checkpoint): the figures."""
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.mabpd import Pipeline

    work = Path(workdir)
    items = synthetic_items(n)
    texts = [t for t, _ in items]
    labels = {t: y for t, y in items}
    ids = {t: str(k) for k, t in enumerate(texts)}
    script = FaultyScript(lambda r: mabpd_reply(r, labels), rate=rate, seed=seed)
    cfg = Config().replace(**{"llm.concurrency": concurrency, "llm.timeout_s": 10.0})
    ck = work / "faults.jsonl"
    out: dict[str, Any] = {"n": n, "rate": rate}
    with FakeLLMServer(script) as srv:
        for run in (1, 2):
            script.enabled = run == 1
            srv.reset_counts()
            llm = connect(base_url=srv.base_url, model="fake", config=cfg, cache_dir=work / "cache", quiet=True)
            t0 = time.perf_counter()
            res = Pipeline(cfg, llm).analyze_many(texts, checkpoint=ck, progress=False)
            out[f"wall_s_{run}"] = time.perf_counter() - t0
            out[f"decided_{run}"] = sum(not d.failed for d in res)
            out[f"calls_{run}"] = srv.calls
            out[f"per_item_{run}"] = _per_item(list(srv.requests), ids)
            out[f"resumed_{run}"] = res.resumed
            if run == 1:
                ok_1 = {d.id for d in res if not d.failed}
                out["errors_1"] = Counter(str(d.error).split(":")[0] for d in res if d.failed)
            else:
                out["repeated_2"] = sum(c for i, c in out["per_item_2"].items() if i in ok_1)
                out["labels_2"] = Counter(d.label for d in res)
    out["injected"] = dict(script.injected)
    out["base_url"] = srv.base_url
    return out

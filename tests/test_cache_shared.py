"""Issue 21.4 (the cache half): two processes sharing one answer cache do not pay twice.

Two processes run the same identity debate at the same moment against one server, with one cache
folder. The server answers every request differently (a counter), so a request sent twice would
give the two runs different answers and their later prompts would part ways. What must hold: the
server receives each distinct request once, both runs get the same answers, and a replay of the
cache afterwards (no server calls) matches both.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
import threading
import time

from mabpd_kit.config import Config
from mabpd_kit.identity import Question, run_debate
from mabpd_kit.llm import connect
from mabpd_kit.llm.cache import ResponseCache

QS = [Question(id=f"q{k}", question=f"Question number {k}: which letter comes first?", answer="A",
               options={"A": "a", "B": "b", "C": "c", "D": "d"}) for k in range(3)]

RUN = textwrap.dedent("""
    import json, os, sys, time
    from pathlib import Path
    import openai  # noqa: F401  (the kit imports it on the first call: seconds on a busy machine)
    from mabpd_kit.config import Config
    from mabpd_kit.identity import Question, run_debate
    from mabpd_kit.llm import connect

    url, cache, go, mode = sys.argv[1], sys.argv[2], Path(sys.argv[3]), sys.argv[4]
    qs = [Question(id=f"q{k}", question=f"Question number {k}: which letter comes first?", answer="A",
                   options={"A": "a", "B": "b", "C": "c", "D": "d"}) for k in range(3)]
    cfg = Config().replace(**{"identity.rounds": 1, "llm.concurrency": 8, "llm.timeout_s": 20.0})
    llm = connect(base_url=url, model="fake", cache_dir=cache, cache_mode=mode, quiet=True, config=cfg)
    Path(f"{go}.ready-{os.getpid()}").touch()
    while not go.exists():  # both processes start their batch together
        time.sleep(0.005)
    res = run_debate(qs, llm, config=cfg, progress=False)
    cols = ["condition", "question", "agent", "round", "raw"]
    print(json.dumps({"failed": len(res.failed), "rows": res.to_frame()[cols].to_dict("records")}))
""")


def _counter_script():
    state = {"n": 0}
    lock = threading.Lock()

    def script(request):
        with lock:
            state["n"] += 1
            n = state["n"]
        return f"Reply number {n}.\nAnswer: {'ABCD'[n % 4]}"

    return script


def test_two_processes_sharing_a_cache_send_each_request_once(fake_server, tmp_path):
    srv = fake_server(_counter_script(), latency=0.05)
    script = tmp_path / "run.py"
    script.write_text(RUN)
    cache, go = tmp_path / "shared-cache", tmp_path / "go"
    cmd = [sys.executable, str(script), srv.base_url, str(cache), str(go), "auto"]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    t0 = time.monotonic()
    while len(list(tmp_path.glob("go.ready-*"))) < 2 and time.monotonic() - t0 < 120:
        time.sleep(0.05)  # both have imported the kit (and the SDK) and wait for the signal
    go.touch()
    outs = [p.communicate(timeout=180) for p in procs]
    for p, (_, err) in zip(procs, outs):
        assert p.returncode == 0, err
    a, b = (json.loads(o.strip().splitlines()[-1]) for o, _ in outs)
    assert a["failed"] == b["failed"] == 0
    bodies = [json.dumps(r, sort_keys=True) for r in srv.requests]
    twice = len(bodies) - len(set(bodies))
    assert twice == 0, f"{twice} of {len(bodies)} requests were sent twice"
    # 3 questions: round 0 (5 prompts, shared by both conditions) and round 1 (5 per condition)
    assert len(set(bodies)) == 3 * (5 + 2 * 5)
    assert a["rows"] == b["rows"]  # both runs got the same answers
    # A replay of the shared cache (no call sent) matches both runs.
    srv.reset_counts()
    cfg = Config().replace(**{"identity.rounds": 1})
    llm = connect(base_url=srv.base_url, model="fake", cache_dir=cache, cache_mode="replay", quiet=True, config=cfg)
    replay = run_debate(QS, llm, config=cfg, progress=False)
    cols = ["condition", "question", "agent", "round", "raw"]
    assert srv.calls == 0 and not replay.failed and replay.to_frame()[cols].to_dict("records") == a["rows"]
    assert not list((cache / "locks").glob("*.lock"))  # every claim released and its file removed


def test_a_claim_waits_without_blocking_the_loop_and_is_given_up_after_the_time_out(tmp_path):
    cache = ResponseCache(tmp_path)

    async def main():
        ticks = []

        async def ticker():
            while True:
                ticks.append(time.monotonic())
                await asyncio.sleep(0.01)

        t = asyncio.create_task(ticker())
        async with cache.claim("k", 5.0) as held:
            assert held
            t0 = time.monotonic()
            async with cache.claim("k", 0.3) as second:  # the same key, held: waits, then gives up
                waited = time.monotonic() - t0
                assert not second
        async with cache.claim("k", 0.3) as again:  # released: granted at once
            assert again
        t.cancel()
        return waited, ticks

    waited, ticks = asyncio.run(main())
    assert 0.3 <= waited < 1.0
    assert len(ticks) >= 15  # the loop kept running while the claim waited
    assert not list((tmp_path / "locks").glob("*.lock"))


def test_a_structured_answer_repaired_once_is_asked_once_by_two_callers(fake_server, tmp_path):
    # A structured answer is stored under its first request once it validates, after the repair retry:
    # the claim covers the whole chain, so a second caller (here a second LLM object on the same
    # cache, as a second process would be) waits for it instead of sending the first request again.
    from typing import Literal

    from pydantic import BaseModel

    class Verdict(BaseModel):
        verdict: Literal["biased", "neutral"]
        n: int

    state = {"n": 0}
    lock = threading.Lock()

    def script(request):
        if not any(m["role"] == "assistant" for m in request["messages"]):
            return {"verdict": "maybe", "n": 0}  # fails validation: the client sends its repair request
        with lock:
            state["n"] += 1
            return {"verdict": "biased", "n": state["n"]}

    srv = fake_server(script, latency=0.2)
    cfg = Config().replace(**{"llm.timeout_s": 20.0})
    llms = [connect(base_url=srv.base_url, model="fake", cache_dir=tmp_path / "c", quiet=True, config=cfg)
            for _ in range(2)]

    async def both():
        return await asyncio.gather(*(llm.astructured("Is this biased?", Verdict) for llm in llms))

    a, b = asyncio.run(both())
    bodies = [json.dumps(r, sort_keys=True) for r in srv.requests]
    assert len(bodies) == len(set(bodies)) == 2, bodies  # the first request and its repair, once each
    assert a.value == b.value and a.value.n == 1

"""LLM-layer performance figures (printed, not asserted).

1. ``import mabpd_kit`` (and ``mabpd_kit.llm``) in a fresh interpreter - target < 0.5 s.
2. 200 chat calls against FakeLLMServer with 0.2 s latency per request and a concurrency
   limit of 32 - target < 2 s wall (ideal 200 / 32 * 0.2 = 1.25 s; 7 waves of <= 32 give 1.4 s).
3. Client CPU time per call during that batch - target < 10 ms. The server runs in its own
   process so its CPU is not counted.

Run: ``.venv/bin/python bench/bench_llm.py`` (or ``make bench``). Figures depend on machine
load; the 1-minute load average is printed alongside.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

N_CALLS = 200
LATENCY_S = 0.2
LIMIT = 32
REPEATS = 3

_SERVER = f"""
import sys, time
from mabpd_kit.testing import FakeLLMServer
with FakeLLMServer(lambda r: "ok", latency={LATENCY_S}) as srv:
    print(srv.base_url, flush=True)
    sys.stdin.read()   # serve until the parent closes our stdin
"""


def import_time(module: str) -> float:
    """Best of three: seconds to import ``module`` in a fresh interpreter."""
    code = f"import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)"
    runs = [float(subprocess.check_output([sys.executable, "-c", code], text=True)) for _ in range(3)]
    return min(runs)


def batch_figures(cache_mode: str = "off", repeats: int = REPEATS) -> list[tuple[float, float]]:
    """(wall seconds, client CPU ms per call) for each repeat of the 200-call batch.

    ``cache_mode="record"`` adds the SQLite write of every answer; ``"replay"`` (after a
    record pass) measures answering the whole batch from the cache."""
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect, gather_limited, run_sync

    server = subprocess.Popen([sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().strip()
        cfg = Config().replace(**{"llm.concurrency": LIMIT})
        llm = connect(base_url=url, model="fake", config=cfg, cache_mode=cache_mode)
        if cache_mode == "replay":
            recorder = connect(base_url=url, model="fake", config=cfg, cache_mode="record")
            run_sync(gather_limited([recorder.achat(f"item {i}") for i in range(N_CALLS)]))
        else:
            llm.chat("warm-up")  # imports the SDK and opens the client once, outside the timing
        out = []
        for _ in range(repeats):
            cpu0, t0 = time.process_time(), time.perf_counter()
            comps = run_sync(gather_limited([llm.achat(f"item {i}") for i in range(N_CALLS)]))
            wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
            assert len(comps) == N_CALLS and all(c.text == "ok" for c in comps)
            out.append((wall, cpu / N_CALLS * 1000))
        return out
    finally:
        if server.stdin is not None:
            server.stdin.close()
        server.wait(10)


def main() -> None:
    os.environ.setdefault("MABPD_CACHE_DIR", tempfile.mkdtemp(prefix="mabpd-bench-"))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"machine: {os.cpu_count()} cores, 1-min load average {load:.2f}")
    t_pkg = import_time("mabpd_kit")
    t_llm = import_time("mabpd_kit.llm")
    print(f"import mabpd_kit            {t_pkg:.3f} s   (target < 0.5 s)")
    print(f"import mabpd_kit.llm        {t_llm:.3f} s   (openai SDK loads on the first real call)")
    runs = batch_figures()
    walls = [w for w, _ in runs]
    cpus = [c for _, c in runs]
    ideal = N_CALLS / LIMIT * LATENCY_S
    print(
        f"{N_CALLS} calls, {LATENCY_S} s latency, limit {LIMIT}: wall "
        + ", ".join(f"{w:.2f}" for w in walls)
        + f" s (median {statistics.median(walls):.2f} s; target < 2 s, ideal {ideal:.2f} s)"
    )
    print(
        "client CPU per call          "
        + ", ".join(f"{c:.2f}" for c in cpus)
        + f" ms (median {statistics.median(cpus):.2f} ms; target < 10 ms)"
    )
    (rec_wall, rec_cpu), = batch_figures("record", repeats=1)
    print(f"same batch, recording to the cache: wall {rec_wall:.2f} s, client CPU {rec_cpu:.2f} ms per call")
    (rep_wall, rep_cpu), = batch_figures("replay", repeats=1)
    print(f"same batch, replayed from the cache: wall {rep_wall:.3f} s, client CPU {rep_cpu:.2f} ms per call")


if __name__ == "__main__":
    main()

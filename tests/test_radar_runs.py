"""RADAR on the spine: batches through runs.run (checkpoint, resume after kill -9, failures with their
reason), one usage record, RADAR's own debater settings, no request at construction."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from mabpd_kit.config import Config
from mabpd_kit.llm import connect
from mabpd_kit.radar import RadarDebate, RadarResults, example_claims
from mabpd_kit.testing import FakeLLMServer, Reply, kill_9_when, last_user, synth_logprobs, system_prompt
from mabpd_kit.types import Usage

ROOT = Path(__file__).resolve().parents[1]


def _script(req: dict):
    """Debaters cite [E1]/[E2]; the Judge says FALSE (0.9) and is undecided about stopping (s = 0):
    every debate stops after the opening, with 4 calls (2 turns, verdict, continue)."""
    sysp = system_prompt(req)
    if "JUDGE" in sysp:
        first = " STOP" if "STOP, CONTINUE" in last_user(req) else " FALSE"
        alts = {" STOP": 0.5, " CONT": 0.5} if first == " STOP" else {" FALSE": 0.9, " TRUE": 0.05, " HALF": 0.05}
        import math

        top = [{"token": t, "logprob": math.log(p), "bytes": None} for t, p in alts.items()]
        return Reply(content=first.strip(), logprobs=[{"token": first, "logprob": math.log(alts[first]), "bytes": None,
                                                       "top_logprobs": top}])
    if "POLITICIAN" in sysp:
        return "The record supports it [E1]."
    if "SCIENTIST" in sysp:
        return "It leaves out the context [E2]."
    return Reply(content="ok", logprobs=synth_logprobs("ok", 5))  # capability probe


def _claims(n: int) -> pd.DataFrame:
    ex = example_claims()
    rows = []
    for i in range(n):
        base = ex.iloc[i % len(ex)]
        rows.append(dict(id=f"c{i:02d}", claim=f"{base.claim} (variant {i})", label=base.label,
                         evidence=list(base.evidence)))
    return pd.DataFrame(rows)


# -- offline batches through the runner ----------------------------------------------------------------
def test_offline_batch_checkpoint_resumes_and_fingerprint_guards(tmp_path):
    ex = example_claims()
    ckpt = tmp_path / "radar.jsonl"
    first = RadarDebate(Config()).run_many(ex, checkpoint=ckpt, progress=False)
    assert isinstance(first, RadarResults) and first.resumed == 0
    assert len(ckpt.read_text().splitlines()) == 3
    again = RadarDebate(Config()).run_many(ex, checkpoint=ckpt, progress=False)
    assert again.resumed == 3
    assert [r.model_dump_json() for r in again] == [r.model_dump_json() for r in first]  # NaN s survives the JSON
    changed = ex.copy()
    changed.loc[0, "claim"] = "The city opened four new public libraries in 2023."
    partly = RadarDebate(Config()).run_many(changed, checkpoint=ckpt, progress=False)
    assert partly.resumed == 2  # the edited claim is debated again
    other_rule = RadarDebate(Config().replace(**{"radar.tau_v": 0.9})).run_many(ex, checkpoint=ckpt, progress=False)
    assert other_rule.resumed == 0  # another configuration: nothing reused


def test_a_crashing_claim_is_a_failed_record_with_its_reason(monkeypatch):
    deb = RadarDebate(Config())
    real = deb.evidence_for

    def flaky(claim, evidence):
        if "senator" in claim:
            raise RuntimeError("index went away")
        return real(claim, evidence)

    monkeypatch.setattr(deb, "evidence_for", flaky)
    res = deb.run_many(example_claims(), progress=False)
    assert [r.failed for r in res] == [False, False, True]
    assert res[2].error == "RuntimeError: index went away" and res[2].id == "ex-false" and res[2].gold == "FALSE"
    assert res.metrics()["failed"] == 1 and res.metrics()["n"] == 3


def test_results_frame_and_metrics():
    res = RadarDebate(Config()).run_many(example_claims(), progress=False)
    frame = res.to_frame()
    assert {"calls", "prompt_tokens", "completion_tokens", "call_latency_s"} <= set(frame.columns)
    assert list(frame.id) == ["ex-true", "ex-half", "ex-false"]
    m = res.metrics()
    assert list(m) == ["n", "failed", "accuracy", "macro_f1", "half_true_f1", "mean_rounds", "one_hot_rounds",
                       "empty_turns", "refusal_turns", "judge_empty", "judge_refusals", "calls",
                       "prompt_tokens", "completion_tokens"]
    assert m["one_hot_rounds"] == m["empty_turns"] == m["refusal_turns"] == 0
    assert m["accuracy"] == 1.0 and m["mean_rounds"] == pytest.approx(frame.rounds.mean())
    assert res.usage == Usage()


def test_radar_results_go_into_the_generic_evaluation():
    from mabpd_kit import evaluate

    ex = example_claims()
    radar = RadarDebate(Config()).run_many(ex, progress=False)
    single = RadarDebate(Config(), system="single").run_many(ex, progress=False)
    ev = evaluate.compare({"radar": radar, "single": single}, n_resamples=50, failed_as="FALSE", kind="radar")
    m = ev.metrics.set_index("system")
    assert m.loc["radar", "accuracy"] == pytest.approx(radar.metrics()["accuracy"])
    assert m.loc["single", "macro_f1"] == pytest.approx(single.metrics()["macro_f1"])


# -- with an endpoint ------------------------------------------------------------------------------------
def test_construction_makes_no_request_and_usage_is_one_record(fake_server):
    srv = fake_server(_script)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    deb = RadarDebate(Config(), llm)
    assert srv.calls == 0  # the probability source is chosen on first use
    assert deb.source == "logprobs" and srv.calls > 0  # the capability probe
    srv.reset_counts()
    ex = example_claims().iloc[2]
    res = deb.run(ex.claim, ex.evidence, id="x", gold="FALSE")
    assert not res.failed, res.error
    assert res.usage.calls == srv.calls == 4 and res.usage.prompt_tokens > 0 and res.usage.completion_tokens > 0
    assert not {"calls", "prompt_tokens", "completion_tokens", "latency_s"} & set(type(res).model_fields)


def test_debaters_read_radar_settings_not_the_mabpd_agents(fake_server):
    srv = fake_server(_script)
    llm = connect(base_url=srv.base_url, model="fake", quiet=True)
    cfg = Config().replace(**{"radar.temperature": 0.3, "radar.max_tokens": 123, "agents.temperature": 0.9,
                              "agents.max_tokens": 999})
    ex = example_claims().iloc[2]
    res = RadarDebate(cfg, llm).run(ex.claim, ex.evidence, gold="FALSE")
    assert not res.failed, res.error
    debater = [r for r in srv.requests if "POLITICIAN" in system_prompt(r) or "SCIENTIST" in system_prompt(r)]
    assert len(debater) == 2 and all(r["temperature"] == 0.3 and r["max_tokens"] == 123 for r in debater)


# -- kill -9 and resume ---------------------------------------------------------------------------------------
_RUNNER = textwrap.dedent("""
    import json, sys
    import pandas as pd
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.radar import RadarDebate

    base_url, ckpt, claims_path, out_path = sys.argv[1:]
    claims = pd.read_json(claims_path, dtype={"id": str})
    cfg = Config().replace(**{"llm.concurrency": 1})
    llm = connect(base_url=base_url, model="fake", config=cfg, quiet=True)
    res = RadarDebate(cfg, llm).run_many(claims, checkpoint=ckpt, progress=False, concurrency=1)
    with open(out_path, "w") as fh:
        json.dump({"resumed": res.resumed, "records": [r.model_dump(mode="json") for r in res]}, fh)
""")


def _key(req: dict) -> str:
    return json.dumps(req, sort_keys=True)


def _finished_lines(path: Path) -> int:
    if not path.exists():
        return 0
    n = 0
    for line in path.read_text().splitlines():
        try:
            json.loads(line)
            n += 1
        except ValueError:
            pass
    return n


def test_kill_9_and_resume_against_the_test_server(tmp_path, monkeypatch):
    claims = _claims(8)
    claims_path = tmp_path / "claims.json"
    claims.to_json(claims_path, orient="records")
    runner = tmp_path / "runner.py"
    runner.write_text(_RUNNER)
    ckpt, out = tmp_path / "radar.jsonl", tmp_path / "out.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MABPD_", "OPENAI_"))}
    env.update(MABPD_CACHE_DIR=str(tmp_path / "llm-cache"), PYTHONPATH=str(ROOT))
    with FakeLLMServer(_script, latency=0.1) as srv:
        cmd = [sys.executable, str(runner), srv.base_url, str(ckpt), str(claims_path), str(out)]
        kill_9_when(cmd, lambda: _finished_lines(ckpt) >= 2, env=env, timeout_s=120)
        done = _finished_lines(ckpt)
        assert 2 <= done < len(claims)
        first = [_key(r) for r in srv.requests]
        srv.reset_counts()

        subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=120)
        second = [_key(r) for r in srv.requests]
    result = json.loads(out.read_text())
    assert result["resumed"] == done  # finished claims come from the checkpoint, not debated again
    records = result["records"]
    assert [r["id"] for r in records] == list(claims.id) and not any(r["failed"] for r in records)
    # no request answered before the kill is sent again (the one in flight at the kill may be)
    # (the capability probe is not a debate call: it bypasses the cache and may run again)
    again = {k for k in set(second) & set(first[:-1]) if '"role": "system"' in k}
    assert not again, [json.loads(k)["messages"][-1]["content"][:60] for k in again]
    # ... and nothing is missing: every claim's debate cost its 4 calls, as in one uninterrupted run
    assert all(r["usage"]["calls"] == 4 and r["label"] == "FALSE" and r["rounds_run"] == 1 for r in records)
    assert len([k for k in second if '"role": "system"' in k]) <= 4 * (len(claims) - done)

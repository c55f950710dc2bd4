"""Kill -9 and resume: an LLM MABPD batch killed mid-run recomputes no finished item and sends no
answered request again (the checkpoint holds finished decisions, the LLM cache the answered calls)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from mabpd_kit.testing import Reply, all_text, kill_9_when, system_prompt

N_ITEMS = 6
STALLED = "3"  # the item whose first bias call hangs until the run is killed
RUN = textwrap.dedent("""
    import sys
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.mabpd import Pipeline

    url, ck, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cfg = Config().replace(**{"llm.concurrency": 2})  # one slot hangs, the other keeps the batch going
    llm = connect(base_url=url, model="fake", config=cfg, quiet=True)  # the LLM cache on, as by default
    texts = [f"Item {k}: the senator slammed plan number {k}." for k in range(n)]
    res = Pipeline(cfg, llm).analyze_many(texts, checkpoint=ck, progress=False)
    print(res.resumed, len(res), len(res.failed), res[3].route, res[3].label)
""")


def _article(request: dict) -> str:
    return all_text(request).split("<article>")[-1].split("</article>")[0]


def _key(request: dict) -> str:
    return json.dumps(request, sort_keys=True)


def test_kill_9_mid_batch_then_resume(fake_server, tmp_path):
    state = {"hang": True}

    def script(request):
        sys_ = system_prompt(request).lower()
        if "structured argument debate" in sys_:
            return {"verdict": "biased", "confidence": 0.8, "evidence": ["slammed"], "counter_argument": "-",
                    "rationale": "loaded verb in the writer's voice"}
        if "bias analyst" in sys_:
            if state["hang"] and f"Item {STALLED}:" in _article(request):
                return Reply(hang=True)  # the run stalls here, mid-item, until it is killed
            return {"verdict": "biased", "confidence": 0.9, "bias_score": 0.8, "rationale": "combat verb",
                    "spans": [{"quote": "slammed", "category": "loaded language"}]}
        if "evidence analyst" in sys_:
            return {"verdict": "neutral", "confidence": 0.6, "evidence_score": 0.3, "rationale": "-", "evidence": []}
        if "framing analyst" in sys_:
            return {"verdict": "neutral", "confidence": 0.7, "framing_score": 0.2, "patterns": [], "rationale": "-"}
        if "verifier" in sys_:
            return {"verdict": "biased", "reason": "the verb is the writer's", "strongest_quote": "slammed"}
        return "{}"  # the capability probe

    srv = fake_server(script, hang_limit_s=3.0)
    ck = tmp_path / "run.jsonl"
    script_file = tmp_path / "run_mabpd.py"
    script_file.write_text(RUN)
    cmd = [sys.executable, str(script_file), srv.base_url, str(ck), str(N_ITEMS)]
    env = dict(os.environ)  # MABPD_CACHE_DIR: the test's private cache (fake_server fixture)

    def stalled_with_the_rest_done() -> bool:  # every other item finished, the stalled one waiting
        return ck.exists() and len(ck.read_text().splitlines()) >= N_ITEMS - 1 and srv.in_flight >= 1

    kill_9_when(cmd, stalled_with_the_rest_done, env=env, settle_s=0.3)
    finished = sorted(json.loads(x)["id"] for x in ck.read_text().splitlines())
    assert finished == [str(k) for k in range(N_ITEMS) if str(k) != STALLED]
    stalled = [r for r in srv.requests if "bias analyst" in system_prompt(r).lower()
               and f"Item {STALLED}:" in _article(r)]
    assert len(stalled) == 1
    answered = {_key(r) for r in srv.requests} - {_key(r) for r in stalled}
    # five items x (3 reports + 3 debate moves + 1 verifier), and the stalled item's two other reports
    assert len([r for r in srv.requests if "<article>" in all_text(r)]) == 5 * 7 + 3

    state["hang"] = False
    srv.reset_counts()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["5", str(N_ITEMS), "0", "debate", "biased"]  # resumed, items, failed, item 3
    again = {_key(r) for r in srv.requests}
    assert not again & answered, "an answered request was sent again"
    assert all(f"Item {STALLED}:" in _article(r) for r in srv.requests), "a finished item was recomputed"
    # What is left: the stalled bias call, the three debate moves and the verifier of item 3.
    assert srv.calls == 1 + 3 + 1
    lines = [json.loads(x) for x in ck.read_text().splitlines()]
    assert sorted(x["id"] for x in lines) == [str(k) for k in range(N_ITEMS)]
    assert not any(x["record"]["failed"] for x in lines)

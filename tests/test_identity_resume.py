"""Kill -9 and resume: an identity debate killed mid-batch repeats no finished question and sends no
answered request again (the checkpoint holds finished questions, the LLM cache the answered calls)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap

from mabpd_kit.testing import Reply, kill_9_when, last_user

N_QUESTIONS = 4
RUN = textwrap.dedent("""
    import sys
    from mabpd_kit.config import Config
    from mabpd_kit.identity import Question, run_debate
    from mabpd_kit.llm import connect

    url, ck, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    qs = [Question(id=f"q{k}", question=f"Question number {k}: which letter comes first?", answer="A",
                   options={"A": "a", "B": "b", "C": "c", "D": "d"}) for k in range(n)]
    llm = connect(base_url=url, model="fake", quiet=True)  # the LLM cache on, as by default
    res = run_debate(qs, llm, conditions=["vanilla"], config=Config(), checkpoint=ck, concurrency=1, progress=False)
    print(res.resumed, len(res), len(res.failed))
""")


def _key(request: dict) -> tuple[str, int]:
    return last_user(request), request["seed"]


def test_kill_9_mid_batch_then_resume(fake_server, tmp_path):
    state = {"hang": True}

    def script(request):
        agent, rnd = request["seed"] % 100, (request["seed"] // 100) % 100
        if state["hang"] and "Question number 2" in last_user(request) and rnd == 1 and agent == 0:
            return Reply(hang=True)  # the run stalls here, mid-question, until it is killed
        return f"Reasoning...\nAnswer: {'AB'[(agent + rnd) % 2]}"

    srv = fake_server(script, hang_limit_s=3.0)
    ck = tmp_path / "run.jsonl"
    script_file = tmp_path / "run_identity.py"
    script_file.write_text(RUN)
    cmd = [sys.executable, str(script_file), srv.base_url, str(ck), str(N_QUESTIONS)]
    env = dict(os.environ)  # MABPD_CACHE_DIR: the test's private cache (fake_server fixture)

    def two_done_third_stalled() -> bool:
        return ck.exists() and len(ck.read_text().splitlines()) >= 2 and srv.in_flight >= 1

    # settle: the stalled call's siblings of the same round are answered and cached
    kill_9_when(cmd, two_done_third_stalled, env=env, settle_s=0.5)
    finished = [json.loads(x)["id"] for x in ck.read_text().splitlines()]
    assert finished == ["vanilla/q0", "vanilla/q1"]
    stalled = [r for r in srv.requests if "Question number 2" in last_user(r) and r["seed"] == 100]
    answered = {_key(r) for r in srv.requests} - {_key(r) for r in stalled}
    assert len(answered) == 2 * 15 + 5 + 4  # q0, q1; q2: round 0 and four agents of round 1

    state["hang"] = False
    srv.reset_counts()
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["2", str(N_QUESTIONS), "0"]  # resumed, items, failed
    again = {_key(r) for r in srv.requests}
    assert not again & answered, "an answered request was sent again"
    assert not any("Question number 0" in k[0] or "Question number 1" in k[0] for k in again)
    # What is left: the stalled call, round 2 of q2 (5 calls) and the untouched q3 (15 calls).
    assert srv.calls == 1 + 5 + 15
    from mabpd_kit.identity import read_logs

    logs = read_logs(ck)
    assert len(logs) == N_QUESTIONS * 15 and logs["error"].isna().all()

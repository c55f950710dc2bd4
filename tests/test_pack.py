"""Course packs: record a notebook-like script against an endpoint into one file, stop the
endpoint, replay the script offline from the pack with the same outputs; no key anywhere in the pack;
a replay miss names the request."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from mabpd_kit.cli import main
from mabpd_kit.llm import ReplayMissError, connect
from mabpd_kit.testing import system_prompt

KEY = "sk-course-DISTINCTIVE-9f3a7c1e5b"

LAB = textwrap.dedent('''
    import json
    import mabpd_kit as mk
    from mabpd_kit.identity.debate import run_debate
    from mabpd_kit.identity.questions import Question
    from mabpd_kit.radar import RadarDebate, example_claims

    llm = mk.connect(quiet=True)
    cfg = mk.Config().replace(**{"radar.prob_source": "structured", "identity.rounds": 1, "identity.n_agents": 3})
    res = mk.Pipeline(cfg, llm).analyze_many(["Democrats slammed the plan, the senator said.",
                                              "The council approved the budget on Tuesday."], progress=False)
    radar = RadarDebate(cfg, llm).run_many(example_claims().head(1), progress=False)
    q = Question(id="q1", question="Which letter comes first?", answer="A", options={"A": "a", "B": "b"})
    ident = run_debate([q], llm, conditions=["vanilla"], config=cfg, progress=False).to_frame()
    print("LAB", json.dumps({"mabpd": [(d.label, d.route, d.failed) for d in res],
                            "radar": [(r.label, r.source, r.offline, r.failed) for r in radar], "identity": ident["answer"].tolist()}))
''')


def _script(req):
    sys_ = system_prompt(req)
    low = sys_.lower()
    if "structured argument debate" in low:
        return {"rationale": "-", "evidence": ["slammed"], "counter_argument": "-", "verdict": "biased", "confidence": 0.8}
    if "bias analyst" in low:
        loaded = "slammed" in json.dumps(req["messages"])
        return {"rationale": "-", "spans": [{"quote": "slammed", "category": "loaded language", "explanation": "-"}]
                if loaded else [], "counter_argument": "-", "verdict": "biased" if loaded else "neutral",
                "confidence": 0.9, "bias_score": 0.8 if loaded else 0.1}
    if "evidence analyst" in low:
        return {"rationale": "-", "evidence": [], "counter_argument": "-", "verdict": "neutral", "confidence": 0.6,
                "evidence_score": 0.3}
    if "framing analyst" in low:
        return {"rationale": "-", "patterns": [], "counter_argument": "-", "verdict": "neutral", "confidence": 0.7,
                "framing_score": 0.2}
    if "VERIFIER" in sys_:
        return {"reason": "-", "strongest_quote": "slammed", "verdict": "biased"}
    if "JUDGE" in sys_:
        return {"reason": "-", "p_true": 0.1, "p_half_true": 0.2, "p_false": 0.7, "p_stop": 0.9, "p_continue": 0.1}
    if "POLITICIAN" in sys_ or "SCIENTIST" in sys_:
        return "The evidence says so [E1]."
    return "I think so.\nAnswer: A"  # identity agents


def test_record_stop_replay_offline_identical_and_no_key_in_the_pack(fake_server, tmp_path, monkeypatch, capfd):
    srv = fake_server(_script)
    lab = tmp_path / "lab.py"
    lab.write_text(LAB)
    pack = tmp_path / "course.pack.json"
    monkeypatch.setenv("MABPD_BASE_URL", srv.base_url)
    monkeypatch.setenv("MABPD_MODEL", "fake")
    monkeypatch.setenv("MABPD_API_KEY", KEY)
    assert main(["pack", "record", "-o", str(pack), "--", sys.executable, str(lab)]) == 0
    recorded = [line for line in capfd.readouterr().out.splitlines() if line.startswith("LAB")]
    assert recorded and srv.calls > 0
    assert any(KEY in v for h in srv.headers for v in h.values())  # the key was really used...
    text = pack.read_text()
    assert KEY not in text and "DISTINCTIVE" not in text  # ...and is nowhere in the pack
    data = json.loads(text)
    assert data["model"] == "fake" and data["endpoint"] == srv.base_url and data["usage"]["calls"] == len(data["entries"])

    srv.stop()  # the endpoint is gone; students have no key
    for var in ("MABPD_BASE_URL", "MABPD_MODEL", "MABPD_API_KEY"):
        monkeypatch.delenv(var)
    monkeypatch.setenv("MABPD_OFFLINE", "1")
    env = {k: v for k, v in __import__("os").environ.items()}
    out = subprocess.run([sys.executable, str(lab)], env={**env, "MABPD_PACK": str(pack)}, capture_output=True,
                         text=True, timeout=300)
    replayed = [line for line in out.stdout.splitlines() if line.startswith("LAB")]
    assert replayed == recorded, out.stderr[-2000:]
    lab_out = json.loads(recorded[0][4:])
    assert not any(f for *_, f in lab_out["mabpd"]) and lab_out["identity"] == ["A"] * 6
    assert lab_out["radar"] == [["FALSE", "structured", False, False]]  # the LLM path, not the offline stand-in

    assert main(["pack", "use", str(pack), "--", sys.executable, str(lab)]) == 0
    assert [line for line in capfd.readouterr().out.splitlines() if line.startswith("LAB")] == recorded
    assert main(["pack", "show", str(pack)]) == 0 and "recorded answers from fake" in capfd.readouterr().out


def test_a_replay_miss_names_the_request(tmp_path, monkeypatch):
    from mabpd_kit.llm.pack import write_pack

    write_pack(tmp_path / "empty.json", cache_dir=tmp_path / "none", endpoint="http://127.0.0.1:9/v1", model="m")
    monkeypatch.setenv("MABPD_PACK", str(tmp_path / "empty.json"))
    llm = connect(quiet=True)
    assert llm.pack and llm.cache_mode == "replay" and not llm.has_key
    with pytest.raises(ReplayMissError, match=r"bias-agent .*model 'm'.*request [0-9a-f]{12}.*course pack"):
        llm.chat("a question nobody recorded", tag="bias-agent")


def test_write_pack_refuses_a_key_in_the_data(tmp_path):
    import sqlite3

    from mabpd_kit.llm import ResponseCache, SetupError
    from mabpd_kit.llm.pack import write_pack

    ResponseCache(tmp_path).put("k", {"text": f"leaked {KEY}", "model": "m"}, model="m")
    sqlite3.connect(tmp_path / "llm-cache.sqlite3").close()
    with pytest.raises(SetupError, match="key"):
        write_pack(tmp_path / "p.json", cache_dir=tmp_path, endpoint="http://x/v1", model="m", secrets=(KEY,))
    assert not (tmp_path / "p.json").exists()


BROKEN = "The senator's BROKEN reply, the reporter said."


def _script_breaking_framing(req):
    """The framing analyst's reply on one sentence begins as JSON and stops (as SmolLM2's did), repair turn too."""
    if "framing analyst" in system_prompt(req).lower() and "BROKEN" in json.dumps(req["messages"]):
        return '{"rationale": "The sentence'
    return _script(req)


def test_an_item_that_failed_while_recording_replays_as_that_failure(fake_server, tmp_path, monkeypatch):
    """The pack notes the failed call (reason, key-free); the replay fails the item with that reason,
    not with a ReplayMissError; the other item replays identically."""
    import mabpd_kit as mk
    from mabpd_kit.llm import registry
    from mabpd_kit.llm.pack import load_pack, write_pack

    srv = fake_server(_script_breaking_framing)
    texts = ["Democrats slammed the plan, the senator said.", BROKEN]
    monkeypatch.setenv("MABPD_API_KEY", KEY)
    llm = connect(base_url=srv.base_url, model="fake", cache_mode="auto", cache_dir=tmp_path / "rec", quiet=True)
    live = mk.Pipeline(mk.Config(), llm).analyze_many(texts, progress=False)
    assert [d.failed for d in live] == [False, True]
    assert live[1].error.startswith("StructuredOutputError: ") and "no valid FramingOutput" in live[1].error
    pack = tmp_path / "p.json"
    summary = write_pack(pack, cache_dir=tmp_path / "rec", endpoint=srv.base_url, model="fake", secrets=(KEY,))
    assert summary["failed_calls"] == 1
    (failure,) = load_pack(pack)["failures"].values()
    assert failure["error"] == "StructuredOutputError" and "no valid FramingOutput" in failure["message"]
    assert KEY not in pack.read_text()

    srv.stop()
    calls = srv.calls
    registry.forget()
    monkeypatch.delenv("MABPD_API_KEY")
    monkeypatch.setenv("MABPD_PACK", str(pack))
    replayed = mk.Pipeline(mk.Config(), connect(quiet=True)).analyze_many(texts, progress=False)
    assert srv.calls == calls
    assert (replayed[0].label, replayed[0].route, replayed[0].score) == (live[0].label, live[0].route, live[0].score)
    assert replayed[1].failed and "ReplayMissError" not in replayed[1].error
    reason = live[1].error.removeprefix("StructuredOutputError: ")
    assert replayed[1].error == f"StructuredOutputError: failed while recording: {reason}"


def test_a_noted_failure_is_not_replayed_by_a_cache_and_a_later_answer_supersedes_it(fake_server, tmp_path):
    """Outside a pack nothing changes: a rerun on the same cache asks the endpoint again, and once that call
    is answered the pack holds the answer, not the failure."""
    import mabpd_kit as mk
    from mabpd_kit.llm import registry
    from mabpd_kit.llm.pack import read_cache_dir

    state = {"broken": True}
    srv = fake_server(lambda req: (_script_breaking_framing if state["broken"] else _script)(req))
    cache = tmp_path / "rec"
    first = connect(base_url=srv.base_url, model="fake", cache_mode="auto", cache_dir=cache, quiet=True)
    assert mk.Pipeline(mk.Config(), first).analyze_many([BROKEN], progress=False)[0].failed
    assert len(read_cache_dir(cache)[2]) == 1
    state["broken"], calls = False, srv.calls
    registry.forget()
    again = connect(base_url=srv.base_url, model="fake", cache_mode="auto", cache_dir=cache, quiet=True)
    d = mk.Pipeline(mk.Config(), again).analyze_many([BROKEN], progress=False)[0]
    assert not d.failed and srv.calls > calls  # asked again, not failed from the note
    entries, _, failures = read_cache_dir(cache)
    assert entries and failures == {}

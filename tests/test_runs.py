"""The one batch runner (mabpd_kit.runs), the one usage record and the one prompt loader."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from pydantic import BaseModel

from mabpd_kit import prompts, runs
from mabpd_kit.types import Usage


class Rec(BaseModel):
    id: str
    value: int = 0
    failed: bool = False
    error: str | None = None
    usage: Usage = Usage()

    def row(self) -> dict:
        return {"id": self.id, "value": self.value, "failed": self.failed, "error": self.error, **self.usage.row()}


def _fail(item: runs.Item, exc: BaseException) -> Rec:
    return Rec(id=item.id, failed=True, error=f"{type(exc).__name__}: {exc}")


def _items(n: int) -> list[runs.Item]:
    return [runs.Item(str(i), i, runs.digest(str(i))) for i in range(n)]


def _counting_step(seen: list[str], bad: set[str] = frozenset()):
    async def step(item: runs.Item) -> Rec:
        seen.append(item.id)
        if item.id in bad:
            raise ValueError(f"bad item {item.id}")
        return Rec(id=item.id, value=item.data * 10, usage=Usage(calls=1, prompt_tokens=item.data))
    return step


# ---- Usage --------------------------------------------------------------------------------------


def test_usage_adds_and_totals():
    a, b = Usage(calls=1, prompt_tokens=10, latency_s=0.5), Usage(calls=2, completion_tokens=3, repaired_calls=1)
    s = a + b
    assert (s.calls, s.prompt_tokens, s.completion_tokens, s.latency_s, s.repaired_calls) == (3, 10, 3, 0.5, 1)
    assert sum([a, b]) == s
    assert Usage.total([Rec(id="x", usage=a), b]) == s


def test_usage_of_completions_counts_each_call():
    class C:
        def __init__(self, p, c, t):
            self.prompt_tokens, self.completion_tokens, self.latency_s = p, c, t

    u = Usage.of([C(5, 1, 0.25), C(7, 2, 0.25)], repaired=True)
    assert (u.calls, u.prompt_tokens, u.completion_tokens, u.latency_s, u.repaired_calls) == (2, 12, 3, 0.5, 1)
    assert Usage.of([]) == Usage()


# ---- drive / gather -----------------------------------------------------------------------------


def test_drive_runs_a_coroutine_without_an_event_loop():
    async def inner(x):
        return x + 1

    async def outer():
        return await runs.gather(inner(1), inner(2))

    assert runs.drive(outer()) == [2, 3]


def test_drive_refuses_a_step_that_waits_on_io():
    async def sleeps():
        await asyncio.sleep(0.01)

    with pytest.raises(RuntimeError, match="waited on I/O"):
        runs.drive(sleeps())


def test_gather_is_concurrent_on_a_loop_and_raises_after_all_finished():
    finished = []

    async def slow(i):
        await asyncio.sleep(0.05)
        finished.append(i)
        if i == 0:
            raise ValueError("first fails")
        return i

    async def go():
        return await runs.gather(slow(0), slow(1), slow(2))

    with pytest.raises(ValueError, match="first fails"):
        asyncio.run(go())
    assert sorted(finished) == [0, 1, 2]  # the failure did not leave the others running unaccounted


# ---- run ----------------------------------------------------------------------------------------


@pytest.mark.parametrize("concurrency", [None, 3])
def test_run_keeps_input_order_and_records_failures(concurrency):
    seen: list[str] = []
    res = runs.run(_items(6), _counting_step(seen, {"2"}), record=Rec, fail=_fail, concurrency=concurrency)
    assert [r.id for r in res] == [str(i) for i in range(6)]
    assert [r.id for r in res.failed] == ["2"] and "bad item 2" in res.failed[0].error
    assert res.usage.calls == 5 and res.usage.prompt_tokens == 0 + 1 + 3 + 4 + 5
    df = res.to_frame()
    assert list(df["value"]) == [0, 10, 0, 30, 40, 50]
    assert res.metrics()["failed"] == 1 and res.metrics()["n"] == 6


def test_run_resumes_from_checkpoint_and_retries_failed(tmp_path):
    ck = tmp_path / "run.jsonl"
    seen: list[str] = []
    runs.run(_items(4), _counting_step(seen, {"1"}), record=Rec, fail=_fail, checkpoint=ck, fingerprint="A")
    assert len(ck.read_text().splitlines()) == 4
    seen.clear()
    res = runs.run(_items(6), _counting_step(seen), record=Rec, fail=_fail, checkpoint=ck, fingerprint="A")
    assert sorted(seen) == ["1", "4", "5"]  # the failed one again, plus the new ones
    assert res.resumed == 3 and not res.failed
    seen.clear()
    res = runs.run(_items(6), _counting_step(seen), record=Rec, fail=_fail, checkpoint=ck, fingerprint="A")
    assert seen == [] and res.resumed == 6


def test_run_recomputes_under_another_fingerprint_or_changed_input(tmp_path):
    ck = tmp_path / "run.jsonl"
    seen: list[str] = []
    runs.run(_items(3), _counting_step(seen), record=Rec, fail=_fail, checkpoint=ck, fingerprint="A")
    seen.clear()
    runs.run(_items(3), _counting_step(seen), record=Rec, fail=_fail, checkpoint=ck, fingerprint="B")
    assert sorted(seen) == ["0", "1", "2"]
    seen.clear()
    changed = [runs.Item("0", 0, runs.digest("other text"))] + _items(3)[1:]
    runs.run(changed, _counting_step(seen), record=Rec, fail=_fail, checkpoint=ck, fingerprint="B")
    assert seen == ["0"]


def test_retry_failed_false_keeps_failures(tmp_path):
    ck = tmp_path / "run.jsonl"
    runs.run(_items(2), _counting_step([], {"0"}), record=Rec, fail=_fail, checkpoint=ck)
    seen: list[str] = []
    res = runs.run(_items(2), _counting_step(seen), record=Rec, fail=_fail, checkpoint=ck, retry_failed=False)
    assert seen == [] and res[0].failed


def test_torn_last_line_is_recomputed_and_the_file_stays_readable(tmp_path):
    ck = tmp_path / "run.jsonl"
    runs.run(_items(3), _counting_step([]), record=Rec, fail=_fail, checkpoint=ck)
    lines = ck.read_text().splitlines()
    ck.write_text("\n".join(lines[:2]) + "\n" + lines[2][: len(lines[2]) // 2])  # killed mid-write
    seen: list[str] = []
    res = runs.run(_items(3), _counting_step(seen), record=Rec, fail=_fail, checkpoint=ck)
    assert seen == ["2"] and res.resumed == 2
    for line in ck.read_text().splitlines():
        if line.strip() and line != lines[2][: len(lines[2]) // 2]:
            json.loads(line)
    assert set(runs.read_checkpoint(ck, Rec)) == {"0", "1", "2"}


def test_duplicate_ids_are_a_clear_error():
    with pytest.raises(ValueError, match="unique"):
        runs.run([runs.Item("a"), runs.Item("a")], _counting_step([]), record=Rec, fail=_fail)


def test_a_step_that_waits_on_io_while_driven_fails_its_item_not_the_batch():
    async def step(item):
        await asyncio.sleep(0)
        return Rec(id=item.id)

    res = runs.run(_items(2), step, record=Rec, fail=_fail)
    assert len(res.failed) == 2 and "waited on I/O" in res.failed[0].error


def _llm_step(llm):
    async def step(item: runs.Item) -> Rec:
        comp = await llm.achat(f"item {item.id}")
        return Rec(id=item.id, value=len(comp.text), usage=Usage.of([comp]))
    return step


def test_a_refused_key_stops_the_batch_and_is_said_once(fake_server, capsys):
    """50 items against a server answering 401: a handful of calls (those already in flight), not 50,
    and every item fails with the auth reason."""
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.testing import Reply

    srv = fake_server(lambda r: Reply(status=401, error="Incorrect API key provided"), latency=0.02)
    llm = connect(base_url=srv.base_url, model="fake", config=Config().replace(**{"llm.concurrency": 4}),
                  cache_mode="off", quiet=True)
    res = runs.run(_items(50), _llm_step(llm), record=Rec, fail=_fail, concurrency=8)
    assert srv.calls <= 4, srv.calls
    assert len(res.failed) == 50 and all("HTTP 401" in r.error and "MABPD_API_KEY" in r.error for r in res)
    assert res.stopped and "HTTP 401" in res.stopped and "stopped: EndpointError" in res.summary()
    err = capsys.readouterr().err
    assert err.count("batch stopped") == 1 and "HTTP 401" in err


def test_a_batch_fatal_error_stops_the_runner_without_the_llm_layer():
    """Any exception flagged ``batch_fatal`` (duck typing: runs imports no LLM code) stops the batch."""
    class Refused(RuntimeError):
        batch_fatal = True

    seen: list[str] = []

    async def step(item: runs.Item) -> Rec:
        seen.append(item.id)
        raise Refused("key refused")

    res = runs.run(_items(20), step, record=Rec, fail=_fail, concurrency=1)
    assert seen == ["0"] and len(res.failed) == 20 and all("key refused" in r.error for r in res)


def test_an_item_past_its_deadline_fails_with_the_reason_and_the_bar_shows_on_stderr(fake_server, capsys):
    from mabpd_kit.config import Config
    from mabpd_kit.llm import connect
    from mabpd_kit.testing import Reply

    srv = fake_server(lambda r: Reply(content="late", delay=9.0) if "item 1" in r["messages"][-1]["content"] else "ok",
                      hang_limit_s=10.0)
    llm = connect(base_url=srv.base_url, model="fake", config=Config().replace(**{"llm.timeout_s": 30.0}),
                  cache_mode="off", quiet=True)
    llm.chat("warm up")  # the endpoint's probe and client start-up happen here, not inside an item's deadline
    t0 = time.perf_counter()
    res = runs.run(_items(3), _llm_step(llm), record=Rec, fail=_fail, concurrency=3, deadline_s=1.0,
                   progress="deadline test")
    assert time.perf_counter() - t0 < 7.0  # not the 9 s the slow reply would take (room for a loaded machine)
    assert [r.failed for r in res] == [False, True, False]
    assert res[1].error == "TimeoutError: deadline: item took more than 1 s (config.llm.item_deadline_s)"
    err = capsys.readouterr().err
    assert "deadline test" in err and "3/3" in err  # the tqdm bar is drawn on stderr


def test_a_timeout_raised_by_the_step_itself_is_not_called_a_deadline():
    async def step(item: runs.Item) -> Rec:
        raise TimeoutError("the step's own time-out")

    res = runs.run(_items(1), step, record=Rec, fail=_fail, concurrency=1, deadline_s=10.0)
    assert res[0].error == "TimeoutError: the step's own time-out"


def test_fingerprint_depends_on_config():
    from mabpd_kit.config import Config

    assert runs.fingerprint(Config(), "m") == runs.fingerprint(Config(), "m")
    assert runs.fingerprint(Config(), "m") != runs.fingerprint(Config().replace(**{"sad.rounds": 3}), "m")


# ---- prompts ------------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["mabpd", "radar", "identity"])
def test_every_shipped_prompt_fills_strictly(method):
    for name in prompts.names(method):
        need = prompts.slots(method, name)
        text = prompts.render(method, name, **{s: f"<{s}>" for s in need})
        assert "$" not in text.replace("$$", "") or not need, (method, name)
        for s in need:
            assert f"<{s}>" in text


def test_missing_slot_names_the_slot_and_the_file():
    with pytest.raises(prompts.PromptError, match=r"mabpd/bias\.md: no value for \$article"):
        prompts.messages("mabpd", "bias", knowledge="k")


def test_messages_split_system_and_user_and_drop_the_doc_comment():
    msgs = prompts.messages("mabpd", "bias", knowledge="KNOW", article="THE ARTICLE", reply="R")
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "KNOW" in msgs[0]["content"] and "THE ARTICLE" in msgs[1]["content"]
    assert "<!--" not in msgs[0]["content"] + msgs[1]["content"]


def test_override_folder_wins_and_falls_back_to_the_package(tmp_path):
    (tmp_path / "bias.md").write_text("<!-- mine -->\nSYSTEM $knowledge\n<!-- user -->\nUSER $article")
    msgs = prompts.messages("mabpd", "bias", prompts_dir=tmp_path, knowledge="k", article="a")
    assert msgs == [{"role": "system", "content": "SYSTEM k"}, {"role": "user", "content": "USER a"}]
    assert "BIAS ANALYST" in prompts.messages("mabpd", "bias", prompts_dir=tmp_path / "nothing", knowledge="k",
                                              article="a", reply="R")[-1]["content"]  # the role's task comes last


def test_a_stray_dollar_is_a_prompt_error(tmp_path):
    (tmp_path / "x.md").write_text("costs $5")
    with pytest.raises(prompts.PromptError, match=r"\$\$"):
        prompts.render("mabpd", "x", prompts_dir=tmp_path)
    with pytest.raises(prompts.PromptError, match="no prompt"):
        prompts.render("mabpd", "no_such_prompt")

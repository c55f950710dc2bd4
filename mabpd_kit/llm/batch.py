"""Batch mode: a run's LLM calls through the OpenAI Batch API (half price, answered within 24 h).

Each stage needs the answers of the one before, so a batch run is a loop of passes: run the method with a
:class:`BatchCollector` (a call the cache cannot answer is recorded and its item deferred), submit the recorded
requests as one batch (its id saved in a state file before waiting, so a crash resumes it), write its answers
into the cache, and run again until a pass defers nothing. vLLM's ``run_batch`` reads the same files."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from .errors import Deferred, EndpointError, Failure
from .results import Completion, completion_from_json

if TYPE_CHECKING:
    from .client import LLM

__all__ = ["BatchCollector", "BatchState", "Deferred", "collecting", "read_results", "run_batched",
           "write_requests"]

T = TypeVar("T")
DONE = ("completed", "failed", "expired", "cancelled")


class BatchCollector:
    """The requests a pass could not answer from the cache, by cache key (thread-safe)."""

    def __init__(self, failed: dict[str, str] | None = None) -> None:
        self.requests: dict[str, dict[str, Any]] = {}
        self.failed = dict(failed or {})  # key -> why its batch answer was unusable
        self._lock = threading.Lock()

    def defer(self, key: str, request: dict[str, Any], tag: str) -> None:
        """Record ``request`` and stop the item (or fail it, if its batch answer already failed)."""
        if key in self.failed:
            raise EndpointError(f"batch answer for {tag or 'a request'} (request {key[:12]}) was unusable: "
                                f"{self.failed[key]}", kind=Failure.HTTP)
        with self._lock:
            self.requests[key] = request
        raise Deferred(f"deferred to the next batch ({tag or 'request'} {key[:12]})")

    def __len__(self) -> int:
        return len(self.requests)


@contextlib.contextmanager
def collecting(llm: LLM, failed: dict[str, str] | None = None) -> Iterator[BatchCollector]:
    """Within this block, ``llm`` answers from its cache and defers every other call."""
    if llm.cache is None or llm.cache_mode != "auto":
        raise ValueError(f"batch mode needs the record/replay cache in mode 'auto' (now {llm.cache_mode!r})")
    col = BatchCollector(failed)
    old = llm.collector
    llm.collector = col
    try:
        yield col
    finally:
        llm.collector = old


def write_requests(requests: dict[str, dict[str, Any]], path: str | Path) -> Path:
    """The OpenAI Batch input file: one ``{"custom_id", "method", "url", "body"}`` line per request."""
    p = Path(path)
    with p.open("w", encoding="utf-8") as fh:
        for key, body in requests.items():
            line = {"custom_id": key, "method": "POST", "url": "/v1/chat/completions", "body": body}
            fh.write(json.dumps(line, ensure_ascii=False) + "\n")
    return p


def read_results(text: str, requests: dict[str, dict[str, Any]]) -> tuple[dict[str, Completion], dict[str, str]]:
    """Completions by key, and the reasons of the lines that failed, from a Batch output (or error) file."""
    done: dict[str, Completion] = {}
    failed: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        key = str(row.get("custom_id"))
        resp = row.get("response") or {}
        if row.get("error") or int(resp.get("status_code") or 0) != 200:
            err = row.get("error") or (resp.get("body") or {}).get("error") or {}
            failed[key] = str(err.get("message") if isinstance(err, dict) else err)[:300] or "no answer"
            continue
        model = str((requests.get(key) or {}).get("model") or "")
        try:
            comp = completion_from_json(resp.get("body") or {}, model, 0.0, "batch")
        except (KeyError, IndexError, TypeError, AttributeError, ValueError) as exc:
            failed[key] = f"not a chat completion ({type(exc).__name__})"
            continue
        done[key] = comp.model_copy(update={"batch": True})
    return done, failed


class BatchState:
    """The small JSON file that makes a batch run resumable: submitted batches and failed keys."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        data = json.loads(self.path.read_text(encoding="utf-8")) if self.path.exists() else {}
        self.batches: list[dict[str, Any]] = list(data.get("batches", []))
        self.failed: dict[str, str] = dict(data.get("failed", {}))

    def save(self) -> None:
        tmp = self.path.with_suffix(self.path.suffix + ".tmp")
        tmp.write_text(json.dumps({"batches": self.batches, "failed": self.failed}, indent=1), encoding="utf-8")
        os.replace(tmp, self.path)  # atomic: a crash leaves the old or the new state, never half

    def open_batch(self) -> dict[str, Any] | None:
        return next((b for b in self.batches if not b.get("collected")), None)


async def _submit(llm: LLM, path: Path) -> str:
    client = llm._get_client()
    f = await client.files.create(file=(path.name, path.read_bytes()), purpose="batch")
    b = await client.batches.create(input_file_id=f.id, endpoint="/v1/chat/completions",
                                    completion_window=llm.config.batch_window)  # type: ignore[arg-type]
    return str(b.id)


async def _poll(llm: LLM, batch_id: str) -> Any:
    return await llm._get_client().batches.retrieve(batch_id)


async def _content(llm: LLM, file_id: str) -> str:
    res = await llm._get_client().files.content(file_id)
    return res.text


def _io(llm: LLM, coro: Any) -> Any:
    from .runtime import submit

    try:
        return submit(coro).result()
    except Exception as exc:  # the SDK's errors: key-free one-line messages
        if isinstance(exc, EndpointError):
            raise
        raise llm._endpoint_error(exc, {"model": llm.model, "messages": [{"content": "(batch)"}]}) from None


def _collect(llm: LLM, state: BatchState, entry: dict[str, Any], *, poll_s: float, say: Callable[[str], None]) -> None:
    """Wait for one submitted batch, write its answers into the cache, mark it collected."""
    requests = {k: {"model": m} for k, m in entry["models"].items()}
    while True:
        b = _io(llm, _poll(llm, entry["id"]))
        counts = getattr(b, "request_counts", None)
        done_n = getattr(counts, "completed", 0) if counts is not None else 0
        say(f"batch {entry['id']}: {b.status} ({done_n}/{len(requests)} answered)")
        if b.status in DONE:
            break
        time.sleep(poll_s)
    texts = [_io(llm, _content(llm, fid)) for fid in (b.output_file_id, getattr(b, "error_file_id", None)) if fid]
    done, failed = read_results("\n".join(texts), requests)
    for key, comp in done.items():
        if comp.usable:
            llm.cache.put(key, comp.model_dump(exclude={"cached", "tag"}), model=comp.model,  # type: ignore[union-attr]
                          preview=f"batch {entry['id']}")
            llm.usage.add(comp)
        else:
            failed[key] = comp.refusal or f"unusable answer (finish_reason {comp.finish_reason})"
    for key in requests:
        if key not in done and key not in failed:
            failed[key] = f"batch {b.status} without an answer"
    state.failed.update(failed)
    entry["collected"] = True
    entry["status"] = b.status
    state.save()


def run_batched(run_pass: Callable[[], T], llm: LLM, *, state: str | Path, poll_s: float | None = None,
                max_passes: int = 50, work_dir: str | Path | None = None, quiet: bool = False) -> T:
    """Run ``run_pass`` in passes, each pass's uncached calls sent as one Batch API batch, until a pass defers
    nothing; returns that pass's result. ``state``: the JSON state file (to resume)."""
    if llm.offline:
        raise ValueError("batch mode needs an endpoint; the offline LLM has no Batch API")
    st = BatchState(state)
    poll = llm.config.batch_poll_s if poll_s is None else poll_s
    say = (lambda s: None) if quiet else (lambda s: print(f"mabpd-kit: {s}", file=sys.stderr))
    folder = Path(work_dir) if work_dir is not None else st.path.parent
    for n in range(max_passes):
        pending = st.open_batch()
        if pending is not None:  # submitted before a crash, or by the previous pass: collect it first
            _collect(llm, st, pending, poll_s=poll, say=say)
        with collecting(llm, st.failed) as col:
            out = run_pass()
        if not col.requests:
            say(f"batch run finished after {n + 1} pass(es), {len(st.batches)} batch(es)")
            return out
        path = write_requests(col.requests, folder / f"{st.path.stem}.pass{len(st.batches) + 1}.jsonl")
        batch_id = _io(llm, _submit(llm, path))
        models = {k: str(r.get("model") or "") for k, r in col.requests.items()}
        st.batches.append({"id": batch_id, "input": str(path), "models": models, "collected": False,
                           "submitted": time.time()})
        st.save()
        say(f"pass {n + 1}: {len(col.requests)} request(s) submitted as batch {batch_id}")
    raise RuntimeError(f"batch run: still deferring after {max_passes} passes (state in {st.path})")

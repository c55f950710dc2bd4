"""The Batch API of :class:`~mabpd_kit.testing.FakeLLMServer` (``/v1/files``, ``/v1/batches``): every line is
answered by the server's script; a batch stays ``in_progress`` for ``srv.batch_polls`` looks; its lines go to
``srv.batch_requests``, not ``srv.requests``."""

from __future__ import annotations

import json
import time
import uuid
from email.parser import BytesParser
from email.policy import HTTP
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .server import FakeLLMServer, _Handler  # type names only: the server imports this module

__all__ = ["get", "post"]


def _id(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def _tail(path: str) -> list[str]:
    """The path after ``/v1`` as parts (``/x/v1/batches/b1`` -> ``["batches", "b1"]``)."""
    parts = path.split("?")[0].strip("/").split("/")
    return parts[parts.index("v1") + 1:] if "v1" in parts else parts


def _multipart(handler: _Handler, raw: bytes) -> dict[str, tuple[str | None, bytes]]:
    head = f"Content-Type: {handler.headers.get('Content-Type', '')}\r\n\r\n".encode()
    msg = BytesParser(policy=HTTP).parsebytes(head + raw)
    out: dict[str, tuple[str | None, bytes]] = {}
    for part in msg.iter_parts():
        name = part.get_param("name", header="content-disposition")
        out[str(name)] = (part.get_filename(), part.get_payload(decode=True) or b"")
    return out


def _file(owner: FakeLLMServer, name: str, content: bytes, purpose: str) -> dict[str, Any]:
    fid = _id("file")
    obj = {"id": fid, "object": "file", "bytes": len(content), "created_at": int(time.time()), "filename": name,
           "purpose": purpose, "status": "processed"}
    owner.files[fid] = (obj, content)
    return obj


def _line(owner: FakeLLMServer, row: dict[str, Any]) -> dict[str, Any]:
    status, body = owner._batch_line(row.get("body") or {})
    return {"id": _id("batch_req"), "custom_id": row.get("custom_id"),
            "response": {"status_code": status, "request_id": _id("req"), "body": body}, "error": None}


def _create(owner: FakeLLMServer, req: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    stored = owner.files.get(str(req.get("input_file_id")))
    if stored is None:
        return 404, {"error": {"message": f"no file {req.get('input_file_id')!r}", "type": "invalid_request_error"}}
    if req.get("endpoint") != "/v1/chat/completions":
        return 400, {"error": {"message": "only /v1/chat/completions batches", "type": "invalid_request_error"}}
    rows = [json.loads(line) for line in stored[1].decode("utf-8").splitlines() if line.strip()]
    ids = [r.get("custom_id") for r in rows]
    if len(set(ids)) != len(ids) or any(r.get("method") != "POST" or r.get("url") != "/v1/chat/completions" for r in rows):
        return 400, {"error": {"message": "invalid batch input: duplicate custom_id or bad method/url",
                               "type": "invalid_request_error"}}
    results = [_line(owner, r) for r in rows]
    ok = [r for r in results if r["response"]["status_code"] == 200]
    bad = [r for r in results if r["response"]["status_code"] != 200]
    bid = _id("batch")
    out_file = _file(owner, f"{bid}_output.jsonl", "".join(json.dumps(r) + "\n" for r in ok).encode(), "batch_output")
    err_file = _file(owner, f"{bid}_error.jsonl", "".join(json.dumps(r) + "\n" for r in bad).encode(),
                     "batch_output") if bad else None
    batch = {"id": bid, "object": "batch", "endpoint": req["endpoint"], "input_file_id": req["input_file_id"],
             "completion_window": req.get("completion_window", "24h"), "status": "in_progress",
             "created_at": int(time.time()), "output_file_id": None, "error_file_id": None,
             "request_counts": {"total": len(rows), "completed": 0, "failed": 0}, "errors": None}
    owner.batches[bid] = {"batch": batch, "polls": 0, "output": out_file["id"],
                          "error": err_file["id"] if err_file else None, "ok": len(ok), "bad": len(bad)}
    return 200, batch


def _retrieve(owner: FakeLLMServer, bid: str) -> tuple[int, dict[str, Any]]:
    entry = owner.batches.get(bid)
    if entry is None:
        return 404, {"error": {"message": f"no batch {bid!r}", "type": "invalid_request_error"}}
    entry["polls"] += 1
    b = entry["batch"]
    if entry["polls"] > owner.batch_polls:
        b.update(status="completed", output_file_id=entry["output"], error_file_id=entry["error"],
                 completed_at=int(time.time()),
                 request_counts={"total": entry["ok"] + entry["bad"], "completed": entry["ok"], "failed": entry["bad"]})
    return 200, b


def post(handler: _Handler, owner: FakeLLMServer, raw: bytes) -> bool:
    """Answer ``POST /v1/files`` and ``/v1/batches``; False for any other path."""
    tail = _tail(handler.path)
    if tail == ["files"]:
        owner._enter_batch(dict(handler.headers.items()))
        form = _multipart(handler, raw)
        name, content = form.get("file", (None, b""))
        purpose = form.get("purpose", (None, b"batch"))[1].decode()
        handler._send(200, json.dumps(_file(owner, name or "input.jsonl", content, purpose)).encode())
        return True
    if tail == ["batches"]:
        owner._enter_batch(dict(handler.headers.items()))
        try:
            req = json.loads(raw)
        except ValueError:
            handler._error(400, "request body is not JSON")
            return True
        status, body = _create(owner, req)
        handler._send(status, json.dumps(body).encode())
        return True
    return False


def get(handler: _Handler, owner: FakeLLMServer) -> bool:
    """Answer ``GET /v1/batches/{id}`` and ``/v1/files/{id}/content``; False for any other path."""
    tail = _tail(handler.path)
    if len(tail) == 2 and tail[0] == "batches":
        owner._enter_batch(dict(handler.headers.items()))
        status, body = _retrieve(owner, tail[1])
        handler._send(status, json.dumps(body).encode())
        return True
    if len(tail) == 3 and tail[0] == "files" and tail[2] == "content":
        stored = owner.files.get(tail[1])
        if stored is None:
            handler._error(404, f"no file {tail[1]!r}")
        else:
            handler._send(200, stored[1])
        return True
    return False

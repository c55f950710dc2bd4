"""llama.cpp's own ``llama-server`` (issue 41): built once per machine, started by the kit, and its quirks.

1. ``tools/setup_llama_server.sh`` reuses a cached build (``make local`` builds it with the bindings: tools/build_llama_cpp.sh);
2. ``local.serve(server="llama-server")``: its command line (``--parallel``, ``-c`` = n_ctx x parallel), its own
   health check, reused only for the same server and model, stopped like llama-cpp-python's server (a stand-in
   binary on loopback: the real one runs in tests/test_real_model.py);
3. each quirk measured on the real server (llama.cpp b1-0c1e570 from llama-cpp-python 0.3.36, SmolLM2-135M
   Q4_1, ``--parallel 2 -c 8192``; /work/notes/llama_server_quirks.md) against FakeLLMServer(emulate=
   "llama-server"): every test here failed on the code before it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

import mabpd_kit as mk
from mabpd_kit.config import Config
from mabpd_kit.llm import EndpointError, Failure, SetupError, local
from mabpd_kit.llm.servers import KINDS
from mabpd_kit.testing import last_user

ROOT = Path(__file__).resolve().parents[1]
MODEL = "smollm2-135m-instruct"


# -- 1. the build is made once per machine ------------------------------------------------------------------
def _setup(tmp_path: Path, binary: str) -> subprocess.CompletedProcess[str]:
    dest = tmp_path / "llama-server-cache"
    dest.mkdir()
    exe = dest / "llama-server"
    exe.write_text(binary)
    exe.chmod(0o755)
    env = {**os.environ, "MABPD_LLAMA_SERVER_DIR": str(dest), "VENV": str(tmp_path / "no-venv")}
    return subprocess.run(["bash", "tools/setup_llama_server.sh"], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=60)


def test_setup_reuses_a_cached_build_and_builds_nothing(tmp_path):
    """A cached binary that runs is reused: no download, no compiler (VENV points nowhere, so a build would fail)."""
    out = _setup(tmp_path, "#!/bin/sh\necho 'version: 0.5.0-dev (build 1, commit 0c1e570)'\n")
    assert out.returncode == 0, out.stderr
    assert "reusing" in out.stdout and "building" not in out.stdout


def test_setup_builds_when_the_cached_binary_does_not_run(tmp_path):
    """A broken cache is not reused: the script goes on to build (here it stops at once: no venv to download with)."""
    out = _setup(tmp_path, "#!/bin/sh\nexit 127\n")
    assert out.returncode != 0 and "reusing" not in out.stdout


# -- 2. the kit starts it --------------------------------------------------------------------------------
STANDIN = textwrap.dedent("""
    import json, os, sys
    from http.server import BaseHTTPRequestHandler, HTTPServer
    args = sys.argv[1:]
    opt = {args[i]: args[i + 1] for i in range(len(args) - 1) if args[i].startswith("-")}
    with open(os.environ["STANDIN_ARGV"], "a") as f:
        f.write(json.dumps({"argv": args, "ld": os.environ.get("LD_LIBRARY_PATH", "")}) + "\\n")
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a): pass
        def do_GET(self):
            body = {"/health": {"status": "ok"},
                    "/props": {"total_slots": int(opt["--parallel"]),
                               "default_generation_settings": {"n_ctx": int(opt["-c"]) // int(opt["--parallel"])}},
                    "/v1/models": {"object": "list", "data": [{"id": opt["--alias"], "owned_by": "llamacpp"}]}}.get(self.path)
            self.send_response(200 if body else 404); self.end_headers()
            self.wfile.write(json.dumps(body or {}).encode())
    HTTPServer((opt["--host"], int(opt["--port"])), H).serve_forever()
""")


@pytest.fixture()
def standin(tmp_path, monkeypatch):
    """A stand-in llama-server binary (answers /health, /props, /v1/models; writes its argv) and a private state dir."""
    exe = tmp_path / "bin" / "llama-server"
    exe.parent.mkdir()
    exe.write_text(f"#!{sys.executable}\n{STANDIN}")
    exe.chmod(0o755)
    monkeypatch.setenv("MABPD_LLAMA_SERVER", str(exe))
    monkeypatch.setenv("MABPD_LOCAL_DIR", str(tmp_path / "state"))
    monkeypatch.setenv("STANDIN_ARGV", str(tmp_path / "argv.jsonl"))
    monkeypatch.setenv("MABPD_LOCAL_THREADS", "3")
    model = tmp_path / "tiny.gguf"
    model.write_bytes(b"GGUF" + bytes(16))
    started: list[local.LocalServer] = []
    yield exe, model, started, lambda: [json.loads(x) for x in (tmp_path / "argv.jsonl").read_text().splitlines()]
    for srv in started:
        local.stop(srv)


def test_serve_starts_llama_server_with_slots_of_n_ctx_each(standin):
    """``--parallel`` slots, ``-c`` = n_ctx x parallel (a slot gets c / parallel: /props said 4096 of 8192 on the real
    server, 2026-12-06), ``--threads``, ``--alias``, loopback only, its .so folder on LD_LIBRARY_PATH; ready on /health."""
    exe, model, started, argv = standin
    srv = local.serve(model, server="llama-server", slots=2, n_ctx=4096)
    started.append(srv)
    (call,) = argv()
    opt = {call["argv"][i]: call["argv"][i + 1] for i in range(len(call["argv"]) - 1)}
    assert (opt["--parallel"], opt["-c"], opt["--threads"], opt["--alias"], opt["--host"]) == ("2", "8192", "3", "tiny", "127.0.0.1")
    assert opt["--port"] == str(srv.port) and opt["--model"] == str(model.resolve())
    assert call["ld"].split(os.pathsep)[0] == str(exe.parent)
    assert (srv.server, srv.parallel, srv.n_ctx) == ("llama-server", 2, 4096)
    assert Path(srv.log_path).name == f"llama-server-{srv.port}.log"
    llm = mk.connect(base_url=srv.base_url, model=srv.alias, quiet=True)
    assert llm.server.name == "llama-server" and llm.concurrency == 2  # asked, not assumed: /props total_slots


def test_serve_reuses_only_the_same_server_and_model(standin, monkeypatch):
    exe, model, started, argv = standin
    first = local.serve(model, server="llama-server", slots=2)
    started.append(first)
    assert local.serve(model, server="llama-server") == first and len(argv()) == 1
    assert local.running(model, "llama-server") == first
    assert local.running(model, "llama-cpp-python") is None  # another server kind is not this one
    other = model.with_name("other.gguf")
    other.write_bytes(b"GGUF" + bytes(16))
    second = local.serve(other, server="llama-server", slots=1)
    started.append(second)
    assert second.pid != first.pid and len(argv()) == 2
    assert local.stop(second) and not local.alive(second)


def test_parallel_is_one_slot_per_four_cores_at_least_one_at_most_four(monkeypatch):
    """Real llama-server on 2 cores, 2026-12-06 (4 teaching samples, 2 threads, two runs each): 2 slots took 12.3
    and 12.8 s a sentence, 1 slot 10.4 and 11.0 (two slots decode on the same cores, and the second fills its own
    prompt cache). The kit started 2 slots there."""
    monkeypatch.delenv("MABPD_LOCAL_PARALLEL", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 32)
    assert local.parallel("llama-server") == local.MAX_PARALLEL == 4
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    assert local.parallel("llama-server") == 2
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert local.parallel("llama-server") == 1 and local.parallel("llama-cpp-python") == 1
    monkeypatch.setenv("MABPD_LOCAL_PARALLEL", "3")
    assert local.parallel("llama-server") == 3


def test_a_missing_binary_or_an_unknown_server_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("MABPD_LLAMA_SERVER", str(tmp_path / "nothing"))
    monkeypatch.setenv("MABPD_LOCAL_DIR", str(tmp_path / "state"))
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(16))
    with pytest.raises(SetupError, match="make llama-server") as err:
        local.serve(model, server="llama-server", private=True)
    assert "\n" not in str(err.value)
    with pytest.raises(SetupError, match="llama-cpp-python, llama-server"):
        local.serve(model, server="vllm")
    with pytest.raises(SetupError, match="connect\\('local'\\)"):
        mk.connect(base_url="http://127.0.0.1:9/v1", server="llama-server")


def test_mabpd_serve_takes_server_and_parallel():
    from mabpd_kit.cli import serve

    parser = __import__("argparse").ArgumentParser()
    serve.add_arguments(parser)
    args = parser.parse_args(["--server", "llama-server", "--parallel", "2"])
    assert (args.server, args.parallel) == ("llama-server", 2)
    assert parser.parse_args([]).server == "llama-cpp-python"  # the default stays llama-cpp-python's server


# -- 3. its quirks --------------------------------------------------------------------------------------------
def test_max_tokens_is_capped_so_a_reply_cannot_fill_the_slot(fake_server):
    """Real llama-server, 2026-12-06 07:20 UTC: ``max_tokens`` 50000 (or none) wrote until the slot's context was
    full (4,047 tokens, finish "length", minutes on a CPU). The kit sent no max_tokens on a plain chat, and
    50000 as asked. Now every request carries at most ``llm.max_tokens_cap``; the cache key keeps what was asked."""
    srv = fake_server(lambda r: "hi", emulate="llama-server", slots=2, models=[MODEL])
    llm = mk.connect(base_url=srv.base_url, model=MODEL, quiet=True, config=Config().replace(**{"llm.max_tokens_cap": 512}))
    llm.chat("no budget named")
    llm.chat("a huge budget", max_tokens=50_000)
    llm.chat("a small budget", max_tokens=100)
    sent = {last_user(r): r.get("max_tokens") for r in srv.requests}
    assert sent == {"no budget named": 512, "a huge budget": 512, "a small budget": 100}
    other = fake_server(lambda r: "hi", emulate="llama-cpp-python", models=[MODEL])
    mk.connect(base_url=other.base_url, model=MODEL, quiet=True).chat("no budget named")
    assert "max_tokens" not in other.requests[-1]  # the other kinds are sent what was asked


def test_every_request_carries_the_repeat_penalty_llama_cpp_python_applies(fake_server):
    """Real llama-server, 2026-12-06 10:50 UTC (--parallel 2 -t 1): the Bias agent's request at temperature 0 wrote
    "The article's content is too simplistic..." again and again until max_tokens (finish "length", json_schema and
    json_object+schema alike), so 4 of 4 samples failed "no valid BiasOutput" (205.7 s per sentence, 14,071
    completion tokens for 20 calls). Its default repeat_penalty is 1.0; llama-cpp-python's server applies 1.1.
    With repeat_penalty 1.1 the same request stopped after 1,237 characters of valid JSON."""
    srv = fake_server(lambda r: "hi", emulate="llama-server", slots=2, models=[MODEL])
    mk.connect(base_url=srv.base_url, model=MODEL, quiet=True).chat("hello", max_tokens=20)
    assert srv.requests[-1]["repeat_penalty"] == Config().llm.repeat_penalty == 1.1


class Verdict(BaseModel):
    reasoning: str
    verdict: str = Field(pattern=r"^(biased|neutral)$")


def test_a_prompt_over_the_slot_context_is_one_call_and_a_one_line_failure(fake_server):
    """Real llama-server, 2026-12-06 10:00 UTC (--parallel 2 -c 8192): a 6,000-word prompt got HTTP 400
    ``exceed_context_size_error`` ("request (6107 tokens) exceeds the available context size (4096 tokens)").
    The kit took it for a refusal of ``response_format`` (Failure.REFUSED_FIELD) and sent the same prompt
    three times (json_schema, json_object, text), each refused the same way. Now: one request, an HTTP
    failure whose one line names the context size."""
    srv = fake_server(lambda r: '{"reasoning": "r", "verdict": "neutral"}', emulate="llama-server", slots=2, models=[MODEL])
    srv.quirks.n_ctx = 2 * 200  # 200 words per slot
    llm = mk.connect(base_url=srv.base_url, model=MODEL, quiet=True)
    llm.chat("hello")  # the profile is read first
    srv.reset_counts()
    with pytest.raises(EndpointError) as err:
        llm.structured("word " * 500, Verdict)
    assert len(srv.requests) == 1, [r.get("response_format", {}).get("type") for r in srv.requests]
    assert err.value.kind is Failure.HTTP and err.value.status == 400
    assert "context size (200 tokens)" in str(err.value) and "\n" not in str(err.value)


def test_an_item_over_the_slot_context_fails_with_that_reason(fake_server):
    """The same 400 in a pipeline run: the item fails naming the context size (no fallback chain, no traceback)."""
    from mabpd_kit.mabpd import Pipeline

    srv = fake_server(lambda r: '{"reasoning": "r", "verdict": "neutral"}', emulate="llama-server", slots=2, models=[MODEL])
    srv.quirks.n_ctx = 2 * 60  # shorter than any agent's prompt
    cfg = Config()
    llm = mk.connect(base_url=srv.base_url, model=MODEL, quiet=True, config=cfg)
    (d,) = Pipeline(cfg, llm).analyze_many(["The senator's reckless plan will destroy the economy."], progress=False)
    assert d.failed and "exceeds the available context size (60 tokens)" in d.error and "\n" not in d.error
    prompts = [json.dumps(r["messages"]) for r in srv.requests if len(json.dumps(r["messages"]).split()) > 60]
    assert len(prompts) == len(set(prompts)), "a prompt over the context was sent again in another mode"


def test_props_n_ctx_is_per_slot_in_the_emulation(fake_server):
    """Real llama-server, 2026-12-06 07:20 UTC: /props default_generation_settings.n_ctx = c / parallel (4096 of
    8192 with --parallel 2); the emulation said 8192 whatever its slots."""
    import urllib.request

    srv = fake_server(lambda r: "hi", emulate="llama-server", slots=2, models=[MODEL])
    root = srv.base_url.rsplit("/v1", 1)[0].split("/fake-")[0]
    props = json.loads(urllib.request.urlopen(f"{root}/props", timeout=5).read())  # noqa: S310 - loopback
    assert props["total_slots"] == 2 and props["default_generation_settings"]["n_ctx"] == 4096


def test_a_schema_feature_the_grammar_skips_is_still_validated_here(fake_server):
    """Real llama-server, 2026-12-06 07:20 UTC: a ``pattern`` its grammar compiler cannot follow (a lookahead) was
    answered 200 and not enforced. The kit validates every reply against the real model itself, so a reply
    that breaks the pattern is repaired or fails, never accepted (this held before issue 41: a guard)."""
    replies = iter(['{"reasoning": "r", "verdict": "maybe"}', '{"reasoning": "r", "verdict": "neutral"}'])
    srv = fake_server(lambda r: next(replies, '{"reasoning": "r", "verdict": "neutral"}'), emulate="llama-server",
                      slots=2, models=[MODEL])
    llm = mk.connect(base_url=srv.base_url, model=MODEL, quiet=True, config=Config().replace(**{"llm.server": "llama-server"}))
    out = llm.structured("Is it biased?", Verdict)
    assert out.value.verdict == "neutral" and out.repaired


def test_the_kind_is_registered_once():
    assert KINDS["llama-server"].local_health == "/health" and KINDS["llama-cpp-python"].local_health == "/v1/models"


def test_threads_are_the_cores_free_when_the_server_starts(monkeypatch):
    """Real llama-server on 2 cores, 2026-12-06: idle, 2 threads decoded 54 tokens/s and 1 thread 39 (the kit
    started 1: "all cores but one"); beside two busy processes 2 threads took 81 s a sentence, 1 thread 32 s."""
    monkeypatch.delenv("MABPD_LOCAL_THREADS", raising=False)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    for load, want in ((0.2, 2), (0.9, 1), (2.5, 1), (9.0, 1)):
        monkeypatch.setattr(os, "getloadavg", lambda load=load: (load, load, load))
        assert local.threads() == want, load
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(os, "getloadavg", lambda: (2.6, 2.0, 1.0))
    assert local.threads() == 5
    monkeypatch.setenv("MABPD_LOCAL_THREADS", "3")
    assert local.threads() == 3


def test_a_reply_schema_is_bounded_for_the_grammar(fake_server):
    """Real llama-server on 2 cores, 2026-12-06 (4 teaching samples): SmolLM2 wrote its one quote three times with
    a 200-character explanation each, 234 completion tokens a call, 27.5 s a sentence. With lists of one item and
    free text of 80 characters: 110 tokens a call, 10.4-11.0 s a sentence (2 threads, 1 slot). Both servers
    compile the schema to a grammar and follow ``maxItems`` and ``maxLength``; the reply is validated unbounded."""
    from mabpd_kit.llm.servers import KINDS

    class Reply(BaseModel):
        rationale: str
        quotes: list[str]
        verdict: str = Field(pattern=r"^(biased|neutral)$")

    cfg = Config().replace(**{"llm.grammar_max_items": 2, "llm.grammar_max_chars": 50})
    for kind in ("llama-server", "llama-cpp-python"):
        srv = fake_server(lambda r: '{"rationale": "r", "quotes": ["a b"], "verdict": "neutral"}', emulate=kind,
                          models=[MODEL])
        llm = mk.connect(base_url=srv.base_url, model=MODEL, quiet=True, config=cfg)
        assert llm.structured("Is it biased?", Reply).value.verdict == "neutral"
        fmt = srv.requests[-1]["response_format"]
        props = (fmt.get("schema") or fmt["json_schema"]["schema"])["properties"]
        assert props["quotes"]["maxItems"] == 2 and props["quotes"]["items"]["maxLength"] == 50, kind
        assert props["rationale"]["maxLength"] == 50 and "maxLength" not in props["verdict"], kind
    other = fake_server(lambda r: '{"rationale": "r", "quotes": [], "verdict": "neutral"}', emulate="vllm", models=[MODEL])
    mk.connect(base_url=other.base_url, model=MODEL, quiet=True, config=cfg).structured("Is it biased?", Reply)
    assert "maxItems" not in json.dumps(other.requests[-1])  # other servers are sent the schema as it is
    assert KINDS["openai"].request_body({"x": 1}, cfg.llm) == {"x": 1}

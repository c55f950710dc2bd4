"""``mabpd serve``: a real model on this machine, no key, no network (llama-cpp-python's server, or llama.cpp's
``llama-server``), served until Ctrl-C; a server already running for that model is reused and left running."""

from __future__ import annotations

import argparse
import signal
import time

from mabpd_kit.argtypes import integer

__all__ = ["add_arguments", "run"]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--model-path", help="a GGUF model file (default: the shipped SmolLM2-135M-Instruct, or MABPD_LOCAL_MODEL)")
    parser.add_argument("--port", type=integer(1, 65535), help="loopback port (default: a free one)")
    parser.add_argument("--n-ctx", type=integer(256), default=8192, help="context window in tokens per request (default 8192)")
    parser.add_argument("--server", choices=("llama-cpp-python", "llama-server"), default="llama-cpp-python",
                        help="which server to start (default llama-cpp-python; llama-server: built by make local)")
    parser.add_argument("--parallel", type=integer(1, 64), default=None,
                        help="llama-server's slots, requests computed at once (default: one per 4 cores, 1 to 4)")
    what = parser.add_mutually_exclusive_group()
    what.add_argument("--status", action="store_true", help="show the running local server and exit")
    what.add_argument("--stop", action="store_true", help="stop the running local server and exit")


def run(args: argparse.Namespace) -> int:
    from mabpd_kit.llm import local
    if args.status or args.stop:
        if args.model_path or args.port:
            raise ValueError("--model-path and --port start a server: they do not go with --status or --stop")
        srv = local.running()
        if srv is None:
            print("no local server is running (start one: mabpd serve)")
            return 0 if args.stop else 1
        if args.stop:
            local.stop(srv)
            print(f"stopped {srv.describe()}")
        else:
            print(f"running: {srv.describe()}")
        return 0
    server = getattr(args, "server", None) or "llama-cpp-python"
    known = local.running(local.resolve_model_path(args.model_path), server)
    if known is not None:
        print(f"already running (reused; `mabpd serve --stop` stops it): {known.describe()}")
        _how_to(known)
        return 0
    t0 = time.perf_counter()
    srv = local.serve(args.model_path, port=args.port, n_ctx=args.n_ctx, reuse=False, server=server,
                      slots=getattr(args, "parallel", None))
    print(f"serving {srv.describe()} (started in {time.perf_counter() - t0:.1f} s)")
    _how_to(srv)
    print("Ctrl-C stops it.", flush=True)
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # SIGTERM stops the server as Ctrl-C does
    code = 0
    try:
        while local.alive(srv):
            time.sleep(1.0)
        print(f"the local server stopped by itself (log: {srv.log_path})")
        code = 1
    except KeyboardInterrupt:
        pass
    finally:
        local.stop(srv)
        print("stopped the local server")
    return code


def _how_to(srv: object) -> None:
    print(f"  use it: MABPD_BASE_URL={srv.base_url} MABPD_MODEL={srv.alias} mabpd analyze FILE --llm"  # type: ignore[attr-defined]
          f"   (or MABPD_BASE_URL=local; in Python: mk.connect('local', server={srv.server!r}))")  # type: ignore[attr-defined]

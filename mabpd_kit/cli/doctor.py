"""``mabpd doctor``: versions, environment (keys shown only as set/unset), endpoint, server kind, capability
probe and cache, in one screen; exit code 1 when the configured endpoint cannot be reached."""

from __future__ import annotations

import argparse
import os
import platform
import sys
from importlib import metadata
from typing import TYPE_CHECKING

from mabpd_kit.argtypes import number

if TYPE_CHECKING:
    from mabpd_kit.llm import LLM

__all__ = ["add_arguments", "report", "run"]

PACKAGES = ("mabpd-kit", "openai", "pydantic", "pandas", "numpy", "scipy", "altair", "platformdirs", "tqdm")
ENV_VARS = ("MABPD_BASE_URL", "MABPD_MODEL", "MABPD_API_KEY", "MABPD_OFFLINE", "MABPD_CACHE_MODE", "MABPD_CACHE_DIR", "MABPD_DATA_DIR",
            "MABPD_PACK")


def _env_vars() -> tuple[str, ...]:
    """:data:`ENV_VARS` and every server kind's key variable (from the registry)."""
    from mabpd_kit.llm.servers import key_vars
    return tuple(dict.fromkeys((*ENV_VARS, *key_vars())))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--preset", help="check a preset (a server kind: openai, ollama, vllm, llama-server, ...; "
                        "local starts the local model) instead of the environment")
    parser.add_argument("--base-url", help="check this OpenAI-compatible base URL")
    parser.add_argument("--model", help="model name (default: MABPD_MODEL or the preset's)")
    parser.add_argument("--no-probe", action="store_true", help="do not send the capability probe requests")
    parser.add_argument("--refresh", action="store_true",
                        help="probe again even if a stored result is still valid, and overwrite it")
    parser.add_argument("--timeout", type=number(0.1, 3600), default=15.0, help="seconds per probe request (default 15; one retry)")


def _version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


def _env_line(name: str) -> str:
    value = os.environ.get(name)
    if value is None:
        return "unset"
    return ("set (hidden)" if value else "empty") if "KEY" in name else value


def _probe_line(llm: LLM, *, refresh: bool) -> str:
    """``json_schema=yes ...``; features the answers did not settle show ``?`` (kept for this process only)."""
    from mabpd_kit.llm import registry
    caps = llm.capabilities(refresh=refresh)
    unsure = registry.undecided(registry.endpoint_key(llm.endpoint, llm.model))
    line = "  ".join(f"{k}={'?' if k in unsure else 'yes' if v else 'no'}" for k, v in caps.model_dump().items())
    if unsure:
        line += f"  (unclear answers for {', '.join(unsure)}: not stored, probed again next time)"
    return line


def _local_line() -> str:
    """The local model: bindings installed, model file, server running (``mabpd serve``)."""
    from mabpd_kit.llm import local
    bindings = _version("llama-cpp-python")
    model = local.default_model_path()
    srv = local.running()
    where = f"running: {srv.describe()}" if srv else "not running (start: mabpd serve, or mk.connect('local'))"
    if bindings == "not installed":
        return f"Local model llama-cpp-python not installed ({local.INSTALL_HINT})"
    shipped = f"{model.name} ({model.stat().st_size / 1e6:.0f} MB)" if model else "no shipped model (pass model_path=)"
    from mabpd_kit.llm.servers.llama_server import binary
    exe = binary()
    built = f"llama-server {exe}" if exe else "llama-server not built (make llama-server)"
    return f"Local model llama-cpp-python {bindings}, {shipped}; {built}; server {where}"


def report(args: argparse.Namespace) -> tuple[list[str], int]:
    """The doctor's lines and exit code (separate from printing, so tests can check it)."""
    from mabpd_kit.llm import EndpointError, LLMError, connect
    from mabpd_kit.llm.cache import ResponseCache, cache_dir, resolve_mode
    lines = [f"Python      {platform.python_version()} ({sys.executable})", f"Platform    {platform.platform()}"]
    lines += [f"  {name:<13}{_version(name)}" for name in PACKAGES]
    lines.append("Environment")
    lines += [f"  {name:<17}{_env_line(name)}" for name in _env_vars() if name in ENV_VARS or name in os.environ]
    lines.append(_local_line())
    code = 0
    from mabpd_kit.config import Config
    quick = Config().replace(**{"llm.timeout_s": getattr(args, "timeout", 15.0), "llm.max_retries": 1})
    try:
        llm = connect(getattr(args, "preset", None), base_url=getattr(args, "base_url", None),
                      model=getattr(args, "model", None), config=quick, quiet=True)
    except (EndpointError, ValueError) as exc:
        lines.append(f"Endpoint    not usable: {exc}")
        return lines, 1
    if llm.offline:
        lines.append(f"Endpoint    offline ({llm.offline_reason}): built-in rule-based agents")
        lines.append("Probe       skipped (offline)")
    else:
        lines.append(f"Endpoint    {llm.endpoint}  model {llm.model}  preset {llm.preset or '-'}  key {'set' if llm.has_key and not llm.key_free else 'none'}")
        try:
            lines.append(f"Server      {llm.server.name} (computes {llm.concurrency} request(s) at once"
                         f"{'; on this machine' if llm.server.local_compute else ''})")
        except LLMError as exc:
            lines.append(f"Server      unknown: {exc}")
        if getattr(args, "no_probe", False):
            lines.append("Probe       skipped (--no-probe)")
        else:
            try:
                lines.append("Probe       " + _probe_line(llm, refresh=bool(getattr(args, "refresh", False))))
            except LLMError as exc:
                lines.append(f"Probe       failed: {exc}")
                code = 1
    try:
        mode = resolve_mode(Config().llm.cache_mode)
    except ValueError as exc:
        mode = f"invalid ({exc})"
    stats = ResponseCache(cache_dir()).stats()
    lines.append(f"Cache       {stats['path']}  mode {mode}  {stats['entries']} answers  {stats['bytes'] / 1e6:.2f} MB")
    return lines, code


def run(args: argparse.Namespace) -> int:
    lines, code = report(args)
    print("\n".join(lines))
    return code

"""``connect()``: an :class:`~mabpd_kit.llm.LLM` from a preset, a base URL or the environment. The key is read only
from the environment and never printed; a local server gets the placeholder :data:`NO_KEY`."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from urllib.parse import urlparse

from .client import LLM, NO_KEY, as_llm_config
from .errors import SetupError
from .runtime import io_loop
from .servers import KINDS, PRESETS, ServerKind

if TYPE_CHECKING:
    from mabpd_kit.config import Config, LLMConfig

__all__ = ["NO_KEY", "OFFLINE_LINE", "connect", "is_local", "resolve_key"]

OFFLINE_LINE = (
    "mabpd-kit: offline ({reason}): using the built-in rule-based agents. To use an LLM, set "
    "MABPD_BASE_URL and MABPD_MODEL (and MABPD_API_KEY if the server needs one), or call "
    "connect('ollama', model='llama3.1'); `mabpd doctor` checks the setup."
)


def is_local(base_url: str) -> bool:
    """True for servers on this machine (no key needed)."""
    host = (urlparse(base_url).hostname or "").lower()
    return host in ("localhost", "127.0.0.1", "::1", "0.0.0.0") or host.endswith(".local")


def resolve_key(kind: ServerKind | None, base_url: str) -> str | None:
    """The API key from the environment (the kind's own variables, then ``MABPD_API_KEY``); :data:`NO_KEY` for a
    local server or a kind that needs none; an unknown remote URL gets ``MABPD_API_KEY`` or None."""
    for name in (*(kind.key_vars if kind is not None else ()), "MABPD_API_KEY"):
        value = os.environ.get(name, "").strip()
        if value:
            return value
    if is_local(base_url) or (kind is not None and not kind.needs_key):
        return NO_KEY
    return None


def connect(preset: str | None = None, *, model: str | None = None, base_url: str | None = None,
            config: Config | LLMConfig | None = None, cache_mode: str | None = None,
            cache_dir: str | os.PathLike[str] | None = None, quiet: bool = False,
            model_path: str | os.PathLike[str] | None = None, server: str | None = None) -> LLM:
    """An :class:`LLM` for a preset, a base URL or the environment; offline (one line said, unless ``quiet``) when none
    is set.

    The URL is ``base_url``, the preset's or ``MABPD_BASE_URL``; the model ``model``, ``MABPD_MODEL`` or the
    preset's default. ``MABPD_PACK=FILE`` replays a course pack unless a preset or ``base_url`` is given;
    ``MABPD_OFFLINE=1`` forces offline unless ``base_url`` is given. ``connect("local")`` starts or reuses a server
    on this machine (``model_path=``, ``server="llama-server"``). Raises :class:`~mabpd_kit.llm.SetupError` in one
    line when there is no model, no key for a remote URL, or no valid URL."""
    cfg = as_llm_config(config)
    if model_path is not None and (preset or "").lower() != "local":
        raise SetupError("model_path= is for connect('local') (a GGUF file served on this machine)")
    if server is not None and (preset or "").lower() != "local" and os.environ.get("MABPD_BASE_URL", "").strip().lower() != "local":
        raise SetupError("server= is for connect('local') (which server the kit starts on this machine)")
    if preset is None and base_url is None and os.environ.get("MABPD_BASE_URL", "").strip().lower() == "local":
        preset = "local"
    if (preset or "").lower() == "local":
        from .local import serve

        srv = serve(model_path, **({"server": server} if server else {}))
        if not quiet:
            print(f"mabpd-kit: local model {srv.describe()} (no key, no network)")
        base_url, model, preset = srv.base_url, model or srv.alias, None
    pack = os.environ.get("MABPD_PACK", "").strip()
    if pack and preset is None and base_url is None:  # a course pack: replay only, no key, no network
        from .pack import pack_llm

        llm = pack_llm(pack, config=cfg, model=model)
        if not quiet:
            print(f"mabpd-kit: replaying the course pack {pack} (model {llm.model}; no key, no network)")
        return llm
    kind = PRESETS.get(preset.lower()) if preset is not None else None
    if preset is not None and kind is None:
        raise ValueError(f"unknown preset {preset!r}; choose from {', '.join(PRESETS)} or pass base_url=")
    forced = os.environ.get("MABPD_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")
    url, source = base_url, "base_url="
    if url is None and not forced:
        env_url = os.environ.get("MABPD_BASE_URL", "").strip() or None
        url, source = (kind.base_url, f"preset {kind.name!r}") if kind is not None else (env_url, "MABPD_BASE_URL")
    if url is None:
        reason = "MABPD_OFFLINE=1" if forced else "no endpoint configured"
        if not quiet:
            print(OFFLINE_LINE.format(reason=reason))
        return LLM(endpoint="offline", model="rule-based", config=cfg, offline=True, offline_reason=reason)
    return _online(url, source, kind, model, cfg, cache_mode, cache_dir)


def _online(url: str, source: str, kind: ServerKind | None, model: str | None, cfg: LLMConfig,
            cache_mode: str | None, cache_dir: str | os.PathLike[str] | None) -> LLM:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise SetupError(f"{source} {url!r} is not a URL: set it like http://127.0.0.1:8000/v1 (scheme, host, port, /v1)")
    chosen = (model or "").strip() or os.environ.get("MABPD_MODEL", "").strip() or (kind.default_model if kind else None)
    if not chosen:
        raise SetupError(f"no model for {url}: set MABPD_MODEL (e.g. MABPD_MODEL=llama3.1) or pass connect(..., model='NAME')")
    known = kind or next((k for k in KINDS.values() if k.base_url == url.rstrip("/")), None)
    key_env = known.key_env if known is not None and known.key_env else "MABPD_API_KEY"
    key = resolve_key(known, url)
    if key is None:
        var = f"{key_env} (or MABPD_API_KEY)" if key_env != "MABPD_API_KEY" else "MABPD_API_KEY"
        where = "a remote server" if not is_local(url) else "this server"
        raise SetupError(f"no API key for {url} ({where}): set {var} in the environment, or use a local server")
    io_loop()  # start the I/O thread now, not inside the first timed call
    return LLM(endpoint=url, model=chosen, api_key=key, config=cfg, cache_mode=cache_mode, cache_dir=cache_dir,
               preset=kind.name if kind else None, key_env=key_env)

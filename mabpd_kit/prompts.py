"""The one prompt loader for every method.

Prompts are Markdown templates ``mabpd_kit/prompts/<method>/<name>.md`` with ``$name`` slots, filled strictly
(a missing value is a :class:`PromptError`). A leading ``<!-- ... -->`` comment is not sent; ``<!-- user -->``
separates the system message from the user message; ``<!-- include NAME -->`` inserts a shared part.
``prompts_dir``: a folder of edited copies (``<name>.md`` or ``<method>/<name>.md``) used first.
"""

from __future__ import annotations

import re
import string
from collections.abc import Mapping
from functools import cache
from importlib import resources
from pathlib import Path

__all__ = ["PromptError", "messages", "names", "render", "slots", "template"]

USER_MARKER = "<!-- user -->"
_LEADING_COMMENT = re.compile(r"^\s*<!--(?!\s*(?:user|include\s+[\w-]+)\s*-->).*?-->\s*", re.DOTALL)
_INCLUDE = re.compile(r"<!--\s*include\s+([\w-]+)\s*-->")
_MAX_DEPTH = 4


class PromptError(ValueError):
    """A prompt that cannot be filled: missing file, missing value or a stray ``$``."""


def _find(method: str, name: str, prompts_dir: str | Path | None, depth: int = 0) -> tuple[str, str]:
    text, where = _find_one(method, name, prompts_dir)
    if _INCLUDE.search(text):
        if depth >= _MAX_DEPTH:
            raise PromptError(f"{where}: includes nested more than {_MAX_DEPTH} deep (a cycle?)")

        def part(m: re.Match[str]) -> str:
            sub, _ = _find(method, m.group(1), prompts_dir, depth + 1)
            return _LEADING_COMMENT.sub("", sub, count=1).strip()

        text = _INCLUDE.sub(part, text)
    return text, where


def _find_one(method: str, name: str, prompts_dir: str | Path | None) -> tuple[str, str]:
    if prompts_dir is not None:
        for p in (Path(prompts_dir) / f"{name}.md", Path(prompts_dir) / method / f"{name}.md"):
            if p.is_file():
                return p.read_text(encoding="utf-8"), str(p)
    return _packaged(method, name), f"prompts/{method}/{name}.md"


@cache
def _packaged(method: str, name: str) -> str:
    res = resources.files("mabpd_kit").joinpath("prompts", method, f"{name}.md")
    if not res.is_file():
        raise PromptError(f"no prompt {method}/{name}.md in the package")
    return res.read_text(encoding="utf-8")


def template(method: str, name: str, prompts_dir: str | Path | None = None) -> str:
    """The template text as sent (the leading comment removed)."""
    text, _where = _find(method, name, prompts_dir)
    return _LEADING_COMMENT.sub("", text, count=1).strip()


def slots(method: str, name: str, prompts_dir: str | Path | None = None) -> set[str]:
    """The ``$names`` a template needs."""
    t = string.Template(template(method, name, prompts_dir))
    return set(t.get_identifiers())


def render(method: str, name: str, /, *, prompts_dir: str | Path | None = None, **values: object) -> str:
    """The filled template; every slot must have a value (extra values are ignored)."""
    text, where = _find(method, name, prompts_dir)
    return _fill(_LEADING_COMMENT.sub("", text, count=1).strip(), values, where)


def messages(method: str, name: str, /, *, prompts_dir: str | Path | None = None,
             **values: object) -> list[dict[str, str]]:
    """Chat messages from one file: system before ``<!-- user -->``, user after (no marker: user only)."""
    text, where = _find(method, name, prompts_dir)
    body = _LEADING_COMMENT.sub("", text, count=1)
    system, marker, user = body.partition(USER_MARKER)
    if not marker:
        return [{"role": "user", "content": _fill(system.strip(), values, where)}]
    return [{"role": "system", "content": _fill(system.strip(), values, where)},
            {"role": "user", "content": _fill(user.strip(), values, where)}]


def names(method: str) -> list[str]:
    """The packaged prompts of a method."""
    folder = resources.files("mabpd_kit").joinpath("prompts", method)
    return sorted(p.name[:-3] for p in folder.iterdir() if p.name.endswith(".md") and p.name != "README.md")


def _fill(text: str, values: Mapping[str, object], where: str) -> str:
    t = string.Template(text)
    missing = sorted(set(t.get_identifiers()) - set(values))
    if missing:
        raise PromptError(f"{where}: no value for {', '.join('$' + m for m in missing)}")
    try:
        return t.substitute({k: str(v) for k, v in values.items()})
    except ValueError as exc:  # a '$' not followed by a name: write '$$' for a literal dollar
        raise PromptError(f"{where}: {exc} (write $$ for a literal dollar sign)") from None

"""The MABPD agent roster: the one ordered list of agents every agent list of the kit reads.

A fourth agent is a class, a prompt and one line: in :data:`BUILTIN`, or for a notebook or a test
``with roster.extended(AgentSpec("tone", ToneAgent, prompt="tone", weight=0.25, title="tone analyst")):``.
This module imports nothing of the kit (a class named ``"module:Class"`` is imported by the agents).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

__all__ = ["BUILTIN", "AgentSpec", "check", "extended", "get", "names", "register", "specs", "version"]


@dataclass(frozen=True)
class AgentSpec:
    """One roster line: ``cls`` (a class or ``"module:Class"``), ``prompt`` (``prompts/mabpd/<prompt>.md`` or in
    ``prompts_dir``), default ``weight``, ``title`` in the debate prompts, chart ``color`` (None: a spare one)."""

    name: str
    cls: Any
    prompt: str
    weight: float
    title: str
    color: str | None = None
    prompts_dir: str | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"agent name {self.name!r}: lower case letters, digits and '_' (it names "
                             "frame columns, config keys and prompt files)")
        if not 0 <= self.weight <= 1:
            raise ValueError(f"agent {self.name!r}: weight {self.weight} is not in [0, 1]")
        role = getattr(self.cls, "role", self.name) if isinstance(self.cls, type) else self.name
        if role != self.name:
            raise ValueError(f"agent {self.name!r}: its class {self.cls.__name__} has role {role!r}")


#: The SPEC's three agents (SPEC 1.2, 1.4): the paper's weights 0.50 / 0.25 / 0.25.
BUILTIN: tuple[AgentSpec, ...] = (
    AgentSpec("bias", "mabpd_kit.mabpd.agents:BiasAgent", prompt="bias", weight=0.50, title="bias analyst",
              color="#d55e00"),        # Okabe-Ito vermillion
    AgentSpec("evidence", "mabpd_kit.mabpd.agents:EvidenceAgent", prompt="evidence", weight=0.25,
              title="evidence analyst", color="#009e73"),   # bluish green
    AgentSpec("framing", "mabpd_kit.mabpd.agents:FramingAgent", prompt="framing", weight=0.25,
              title="framing analyst", color="#56b4e9"),    # sky blue (blue is the neutral verdict)
)

_roster: list[AgentSpec] = list(BUILTIN)
_version = 0


def _changed() -> None:
    global _version
    _version += 1


def version() -> int:
    """A number that changes whenever the roster does."""
    return _version


def specs() -> tuple[AgentSpec, ...]:
    """The roster, in order."""
    return tuple(_roster)


def names() -> tuple[str, ...]:
    """The agents' names, in roster order."""
    return tuple(s.name for s in _roster)


def get(name: str) -> AgentSpec:
    """The roster line of ``name`` (a KeyError names the roster)."""
    for s in _roster:
        if s.name == name:
            return s
    raise KeyError(f"no agent {name!r} on the roster; it has {', '.join(names())}")


def check(name: str) -> str:
    """``name`` if it is on the roster, else a ValueError."""
    if name not in names():
        raise ValueError(f"unknown agent {name!r}; the roster has {', '.join(names())}")
    return name


def register(spec: AgentSpec) -> AgentSpec:
    """Add ``spec`` at the end of the roster."""
    if spec.name in names():
        raise ValueError(f"agent {spec.name!r} is on the roster already")
    _roster.append(spec)
    _changed()
    return spec


@contextmanager
def extended(*added: AgentSpec) -> Iterator[tuple[AgentSpec, ...]]:
    """The roster with ``added`` appended, for the ``with`` block; afterwards exactly as before."""
    before = list(_roster)
    try:
        for spec in added:
            register(spec)
        yield specs()
    finally:
        _roster[:] = before
        _changed()

"""Test helpers: a real OpenAI-compatible server on 127.0.0.1 and script building blocks.

>>> from mabpd_kit.testing import FakeLLMServer, Reply, by_role, sequence
"""

from __future__ import annotations

from .process import kill_9_when
from .quirks import Quirks, schema_problems
from .scripts import all_text, by_role, last_user, request_schema, role_instruction, sequence, system_prompt
from .server import FakeLLMServer, Reply, Script, synth_logprobs

__all__ = [
    "FakeLLMServer",
    "Reply",
    "Quirks",
    "Script",
    "all_text",
    "by_role",
    "last_user",
    "kill_9_when",
    "request_schema",
    "role_instruction",
    "schema_problems",
    "sequence",
    "synth_logprobs",
    "system_prompt",
]

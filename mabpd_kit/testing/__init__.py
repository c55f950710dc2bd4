"""Test helpers: a real OpenAI-compatible server on 127.0.0.1 and script building blocks."""

from __future__ import annotations

from .process import kill_9_when
from .quirks import Quirks, schema_problems
from .scripts import all_text, by_role, last_user, request_schema, role_instruction, sequence, system_prompt
from .server import FakeLLMServer, Reply, Script, synth_logprobs

__all__ = ["FakeLLMServer", "Quirks", "Reply", "Script", "all_text", "by_role", "kill_9_when", "last_user",
           "request_schema", "role_instruction", "schema_problems", "sequence", "synth_logprobs", "system_prompt"]

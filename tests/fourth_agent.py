"""A fourth MABPD agent for the tests (emotional tone): its reply schema and its class. Each test gives it a
prompt and a roster line of its own (tests/test_roster.py, tests/test_agents_conformance.py)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from mabpd_kit.mabpd.agents import Agent
from mabpd_kit.mabpd.cues import lex_span
from mabpd_kit.mabpd.schemas import AgentReport, QuotedSpan
from mabpd_kit.types import Verdict


class ToneOutput(BaseModel):
    """What the LLM ToneAgent must return."""

    rationale: str = ""
    spans: list[QuotedSpan] = Field(default_factory=list)
    counter_argument: str = ""
    verdict: Verdict
    confidence: float = Field(ge=0, le=1)
    tone_score: float = Field(ge=0, le=1)


class ToneAgent(Agent):
    """Emotional tone: the lexicon's emotional and exaggerating words in the writer's text."""

    role = "tone"
    schema = ToneOutput
    lens = frozenset({"emotional language", "exaggeration"})

    def _rule_report(self, cues: Any) -> AgentReport:
        floor = self.config.lexicon.confidence_floor
        spans = [lex_span(m, self.role, cues) for m in cues.lex if m.band > floor and m.taxonomy in self.lens]
        return self._report(spans, [], [f"{s.text!r} ({s.taxonomy})" for s in spans], "emotional tone", cues)

    def _from_llm(self, out: ToneOutput, text: str, usage: dict[str, Any], guard: Any = None) -> AgentReport:
        spans = [self._span(s.quote, s.category, text, score=out.tone_score, note=s.explanation, guard=guard)
                 for s in out.spans]
        return AgentReport(agent=self.role, verdict=out.verdict, confidence=out.confidence, score=out.tone_score,
                           spans=spans, rationale=out.rationale, counter_argument=out.counter_argument, **usage)

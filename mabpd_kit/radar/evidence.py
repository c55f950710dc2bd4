"""RADAR's evidence: the sentences the agents see (``[E1] ...``), the shared BM25 pool, the turns citing them."""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from functools import cached_property
from typing import TYPE_CHECKING

from pydantic import BaseModel, Field

from mabpd_kit.types import FrozenModel

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Evidence", "EvidencePool", "Turn", "cited_numbers", "example_claims", "format_evidence"]

_CITE = re.compile(r"\[E(\d+)\]")


class Evidence(FrozenModel):
    """One evidence sentence as shown to the agents (``number`` is the [E#] they cite)."""

    number: int
    text: str
    score: float = 0.0
    owner: str | None = Field(None, description="id of the claim whose article the sentence came from")


def format_evidence(items: Sequence[Evidence | str]) -> str:
    """Numbered lines ``[E1] text``; ``(no evidence)`` when empty."""
    lines = []
    for i, it in enumerate(items, 1):
        text = it.text if isinstance(it, Evidence) else str(it)
        num = it.number if isinstance(it, Evidence) else i
        lines.append(f"[E{num}] {' '.join(text.split())}")
    return "\n".join(lines) if lines else "(no evidence)"


class EvidencePool:
    """A BM25 index over the sentences of many claims (RADAR's noisy retrieval)."""

    def __init__(self, sentences: Sequence[str], owners: Sequence[str | None] | None = None) -> None:
        import bm25s

        seen: dict[str, int] = {}
        texts: list[str] = []
        own: list[str | None] = []
        for i, s in enumerate(sentences):
            t = " ".join(str(s).split())
            if not t or t in seen:
                continue
            seen[t] = len(texts)
            texts.append(t)
            own.append(owners[i] if owners is not None else None)
        if not texts:
            raise ValueError("the evidence pool is empty")
        self.sentences = texts
        self.owners = own
        self._bm25 = bm25s.BM25()
        self._bm25.index(bm25s.tokenize(texts, stopwords="en", show_progress=False), show_progress=False)

    @cached_property
    def digest(self) -> str:
        """A hash of the pooled sentences and owners (retrieved evidence depends on the whole pool)."""
        from mabpd_kit.runs import digest

        return digest([self.sentences, self.owners])

    @classmethod
    def from_claims(cls, claims: pd.DataFrame) -> EvidencePool:
        """Pool the ``evidence`` lists of every row of ``claims`` (columns id, evidence)."""
        sents, owners = [], []
        for row in claims.itertuples(index=False):
            for s in list(row.evidence or []):
                sents.append(s)
                owners.append(str(row.id))
        return cls(sents, owners)

    def __len__(self) -> int:
        return len(self.sentences)

    def retrieve(self, query: str, m: int = 20) -> list[Evidence]:
        """The top-``m`` sentences for ``query`` by BM25 score, numbered from 1."""
        import bm25s

        k = min(m, len(self.sentences))
        if k <= 0 or not query.strip():
            return []
        docs, scores = self._bm25.retrieve(bm25s.tokenize([query], stopwords="en", show_progress=False),
                                           k=k, show_progress=False)
        out = []
        for rank, (d, sc) in enumerate(zip(docs[0], scores[0]), 1):
            out.append(Evidence(number=rank, text=self.sentences[int(d)], score=float(sc), owner=self.owners[int(d)]))
        return out


def cited_numbers(text: str, valid: Collection[int]) -> list[int]:
    """The ``[E#]`` numbers cited in ``text`` that exist in the evidence, sorted, each once."""
    return sorted({int(n) for n in _CITE.findall(text or "") if int(n) in valid})


class Turn(BaseModel):
    """One debater turn (``cited`` = the [E#] numbers it mentions)."""

    round: int
    stage: str
    agent: str
    text: str
    cited: list[int] = Field(default_factory=list)
    note: str | None = Field(None, description="empty | refusal: the reply gave no argument (see radar.replies)")


def example_claims() -> pd.DataFrame:
    """Three *invented* claims with evidence (not benchmark data) for offline demos and docs."""
    import pandas as pd

    return pd.DataFrame([
        dict(id="ex-true", label="TRUE", claim="The city opened three new public libraries in 2023.",
             evidence=["The city council confirmed that three new public libraries opened in 2023.",
                       "Library attendance rose after the new branches opened.",
                       "The three libraries were funded by a 2021 bond measure."]),
        dict(id="ex-half", label="HALF-TRUE", claim="Unemployment fell by half under the governor.",
             evidence=["Unemployment fell from 8% to 4% during the governor's term.",
                       "However, most of the decline happened nationwide and only partly reflects state policy.",
                       "Economists said the labour force also shrank, which excludes people who stopped looking."]),
        dict(id="ex-false", label="FALSE", claim="The senator voted against the veterans health bill.",
             evidence=["Records show the senator voted for the veterans health bill.",
                       "The claim is false: the senator did not vote against it and co-sponsored an amendment.",
                       "The bill passed with bipartisan support."]),
    ])

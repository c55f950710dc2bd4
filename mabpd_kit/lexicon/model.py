"""The lexicon's typed entries: categories, terms, protected contexts ("heart attack") and one match."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field, field_validator

from mabpd_kit.types import FrozenModel

__all__ = ["Category", "LexMatch", "META_CATEGORIES", "Protected", "TAXONOMY_TYPES", "Term"]

TAXONOMY_TYPES = ("loaded language", "framing", "selection", "emotional language", "political labeling",
                  "exaggeration", "omission")
META_CATEGORIES = ("biased language", "framing bias", "unsupported claims", "selective presentation")


class Category(FrozenModel):
    """A lexicon category, mapped to one taxonomy type and through it to one meta-category."""

    id: str = Field(pattern=r"^[a-z][a-z0-9_]*$")
    name: str
    taxonomy: str
    meta_category: str
    description: str = ""

    @field_validator("taxonomy")
    @classmethod
    def _known_taxonomy(cls, v: str) -> str:
        if v not in TAXONOMY_TYPES:
            raise ValueError(f"unknown taxonomy type {v!r}; choose from {', '.join(TAXONOMY_TYPES)}")
        return v

    @field_validator("meta_category")
    @classmethod
    def _known_meta(cls, v: str) -> str:
        if v not in META_CATEGORIES:
            raise ValueError(f"unknown meta-category {v!r}; choose from {', '.join(META_CATEGORIES)}")
        return v


class Term(FrozenModel):
    """One lexicon entry. ``forms`` (all surface forms, lower case) is filled by the builder."""

    term: str
    category: str
    band: float
    pos: str = "fixed"
    variants: tuple[str, ...] = ()
    note: str = ""
    forms: tuple[str, ...] = ()

    @field_validator("pos")
    @classmethod
    def _known_pos(cls, v: str) -> str:
        parts = v.split("+")
        bad = [p for p in parts if p not in ("verb", "noun", "adj", "fixed")]
        if bad:
            raise ValueError(f"unknown part of speech {bad}; use verb, noun, adj or fixed (join with '+')")
        return v


class Protected(FrozenModel):
    """A neutral context: inside ``context`` the word ``term`` is domain vocabulary, not bias."""

    term: str
    context: str
    pos: str = "noun"
    note: str = ""
    forms: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class LexMatch:
    """One lexicon hit. ``start``/``end`` are offsets in the text that was matched."""

    start: int
    end: int
    text: str
    term: str
    category: str
    taxonomy: str
    meta_category: str
    band: float
    note: str

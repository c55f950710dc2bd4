"""The bias lexicon (SPEC 2): seed files (``mabpd_kit/resources/lexicon/``) built into one JSON resource with a
version and a sha256 checksum, its matcher and its independence check; the command line is ``mabpd lexicon``."""

from __future__ import annotations

from mabpd_kit.lexicon.build import build, build_bytes, finalize, read_seeds, resource_path, seeds_dir
from mabpd_kit.lexicon.match import Lexicon
from mabpd_kit.lexicon.model import META_CATEGORIES, TAXONOMY_TYPES, Category, LexMatch, Protected, Term
from mabpd_kit.lexicon.morphology import GAP, IRREGULAR_NOUNS, IRREGULAR_VERBS, inflections
from mabpd_kit.lexicon.stats import IndependenceResult, critical_r, independence

__all__ = ["Lexicon", "LexMatch", "Category", "Term", "Protected", "build", "build_bytes", "read_seeds", "finalize",
           "seeds_dir", "resource_path", "inflections", "IRREGULAR_VERBS", "IRREGULAR_NOUNS", "GAP",
           "IndependenceResult", "critical_r", "independence", "TAXONOMY_TYPES", "META_CATEGORIES"]

"""The bias lexicon: taxonomy, deterministic builder, matcher, independence check (SPEC 2).

The knowledge all three agents share, written by hand in seed files (``mabpd_kit/resources/lexicon/``)
and built into one JSON resource with a version and a sha256 checksum. One module per concern:
:mod:`.model` (typed entries, taxonomy), :mod:`.morphology` (surface forms), :mod:`.build` (seeds ->
resource), :mod:`.match` (:class:`Lexicon` and its trie-shaped matcher), :mod:`.boundaries` (a hit
narrowed to its loaded words; what a span must be to count as evidence), :mod:`.stats` (independence
from a labelled corpus). The command line is :mod:`mabpd_kit.cli.lexicon`.

>>> Lexicon.default().signal("The regime slammed the protesters.").band
0.8
"""

from __future__ import annotations

from mabpd_kit.lexicon.build import build, build_bytes, finalize, read_seeds, resource_path, seeds_dir
from mabpd_kit.lexicon.match import Lexicon
from mabpd_kit.lexicon.model import META_CATEGORIES, TAXONOMY_TYPES, Category, LexMatch, Protected, Term
from mabpd_kit.lexicon.morphology import GAP, IRREGULAR_NOUNS, IRREGULAR_VERBS, inflections
from mabpd_kit.lexicon.stats import IndependenceResult, critical_r, independence

__all__ = [
    "Lexicon",
    "LexMatch",
    "Category",
    "Term",
    "Protected",
    "build",
    "build_bytes",
    "read_seeds",
    "finalize",
    "seeds_dir",
    "resource_path",
    "inflections",
    "IRREGULAR_VERBS",
    "IRREGULAR_NOUNS",
    "GAP",
    "IndependenceResult",
    "critical_r",
    "independence",
    "TAXONOMY_TYPES",
    "META_CATEGORIES",
]

"""The bias lexicon: taxonomy, deterministic builder, fast matcher, independence check.

The lexicon is the knowledge all three agents share (SPEC section 2). It is written by hand in
human-readable seed files shipped in the package (``mabpd_kit/resources/lexicon/``, linked from ``data/lexicon/``) and compiled by :func:`build` into one JSON
resource (``mabpd_kit/resources/lexicon.json``) with a version and a sha256 checksum.

One module per concern:

- :mod:`~mabpd_kit.lexicon.model`: the typed entries (:class:`Category`, :class:`Term`,
  :class:`Protected`), one hit (:class:`LexMatch`) and the taxonomy (``TAXONOMY_TYPES``,
  ``META_CATEGORIES``);
- :mod:`~mabpd_kit.lexicon.morphology`: every surface form of a term (:func:`inflections`);
- :mod:`~mabpd_kit.lexicon.build`: seeds -> resource (:func:`read_seeds`, :func:`finalize`,
  :func:`build`, :func:`build_bytes`, :func:`seeds_dir`, :func:`resource_path`);
- :mod:`~mabpd_kit.lexicon.match`: the :class:`Lexicon` and its trie-shaped regex matcher;
- :mod:`~mabpd_kit.lexicon.stats`: was the lexicon built independently of a labelled corpus?
  (:class:`IndependenceResult`, :func:`critical_r`, :func:`independence`).

The command line (``mabpd lexicon build | check | match``) lives in :mod:`mabpd_kit.cli.lexicon`.

Matching
--------
Every term is expanded at build time into its surface forms (``slam`` -> slams, slammed, slamming;
``regime`` -> regimes; ``outrageous`` -> outrageously). At load time all forms go into one regular
expression shaped like a trie (shared prefixes factored out), so a sentence is scanned once by the
C regex engine. Overlapping candidates are resolved to the highest band (then the longest).

>>> lex = Lexicon.default()
>>> [m.term for m in lex.match("Democrats rammed through a so-called reform.")]
['ram through', 'so-called']
>>> lex.match("He had a heart attack.")
[]
>>> lex.signal("The regime slammed the protesters.").band
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

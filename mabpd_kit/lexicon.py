"""The bias lexicon: taxonomy, deterministic builder, fast matcher, independence check.

The lexicon is the knowledge all three agents share (SPEC section 2). It is written by hand in
human-readable seed files under ``data/lexicon/`` and compiled by :func:`build` into one JSON
resource (``mabpd_kit/resources/lexicon.json``) with a version and a sha256 checksum.

Seeds
-----
``taxonomy.toml`` maps the seven taxonomy types to the four meta-categories and lists the version.
``categories/<id>.toml`` holds one category: its name, taxonomy type, description and groups of
terms. A group shares a score band, a part of speech (which drives inflection) and a teaching note::

    [[group]]
    band = 0.80
    pos = "verb"            # verb | noun | adj | fixed ; combine with "+": "noun+verb"
    note = "Combat verbs for ordinary criticism turn disagreement into a fight."
    terms = ["slam", "blast", { term = "rip into", variants = ["tore into"] }]

``protected.toml`` lists neutral domain phrases ("heart attack", "tax regime") in which a loaded-looking
word never counts.

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

import argparse
import hashlib
import json
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator

from mabpd_kit.config import Config, LexiconConfig
from mabpd_kit.text import normalise_quotes
from mabpd_kit.types import Span

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mabpd_kit.text import CleanText

__all__ = [
    "Lexicon",
    "LexMatch",
    "Category",
    "Term",
    "Protected",
    "build",
    "build_bytes",
    "seeds_dir",
    "resource_path",
    "inflections",
    "IndependenceResult",
    "critical_r",
    "TAXONOMY_TYPES",
    "META_CATEGORIES",
]

TAXONOMY_TYPES = (
    "loaded language",
    "framing",
    "selection",
    "emotional language",
    "political labeling",
    "exaggeration",
    "omission",
)
META_CATEGORIES = ("biased language", "framing bias", "unsupported claims", "selective presentation")

ROOT = Path(__file__).resolve().parents[1]


def seeds_dir() -> Path:
    """The seed files in a source checkout (``data/lexicon``)."""
    return ROOT / "data" / "lexicon"


def resource_path() -> Path:
    """The shipped, built lexicon."""
    return Path(__file__).resolve().parent / "resources" / "lexicon.json"


# ---------------------------------------------------------------------------------------------
# Typed entries
# ---------------------------------------------------------------------------------------------


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Category(_Frozen):
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


class Term(_Frozen):
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


class Protected(_Frozen):
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


# ---------------------------------------------------------------------------------------------
# Inflection
# ---------------------------------------------------------------------------------------------

_VOWELS = set("aeiou")
#: Verbs whose forms do not follow the rules below (base -> extra forms).
IRREGULAR_VERBS: dict[str, tuple[str, ...]] = {
    "lie": ("lies", "lied", "lying"),
    "take": ("takes", "took", "taken", "taking"),
    "sneak": ("sneaks", "sneaked", "snuck", "sneaking"),
    "go": ("goes", "went", "gone", "going"),
    "slay": ("slays", "slew", "slain", "slaying"),
    "spin": ("spins", "spun", "spinning"),
    "strike": ("strikes", "struck", "stricken", "striking"),
    "tear": ("tears", "tore", "torn", "tearing"),
    "mislead": ("misleads", "misled", "misleading"),
    "hide": ("hides", "hid", "hidden", "hiding"),
    "steal": ("steals", "stole", "stolen", "stealing"),
    "fight": ("fights", "fought", "fighting"),
    "shake": ("shakes", "shook", "shaken", "shaking"),
    "break": ("breaks", "broke", "broken", "breaking"),
    "bite": ("bites", "bit", "bitten", "biting"),
    "blow": ("blows", "blew", "blown", "blowing"),
    "throw": ("throws", "threw", "thrown", "throwing"),
    "sink": ("sinks", "sank", "sunk", "sinking"),
    "swear": ("swears", "swore", "sworn", "swearing"),
    "sting": ("stings", "stung", "stinging"),
    "fling": ("flings", "flung", "flinging"),
    "sling": ("slings", "slung", "slinging"),
    "bend": ("bends", "bent", "bending"),
    "shoot": ("shoots", "shot", "shooting"),
    "feed": ("feeds", "fed", "feeding"),
    "bleed": ("bleeds", "bled", "bleeding"),
    "flee": ("flees", "fled", "fleeing"),
    "ride": ("rides", "rode", "ridden", "riding"),
    "run": ("runs", "ran", "running"),
    "grind": ("grinds", "ground", "grinding"),
    "sweep": ("sweeps", "swept", "sweeping"),
    "creep": ("creeps", "crept", "creeping"),
    "weep": ("weeps", "wept", "weeping"),
    "seek": ("seeks", "sought", "seeking"),
    "freeze": ("freezes", "froze", "frozen", "freezing"),
    "forsake": ("forsakes", "forsook", "forsaken", "forsaking"),
    "undo": ("undoes", "undid", "undone", "undoing"),
    "overthrow": ("overthrows", "overthrew", "overthrown", "overthrowing"),
    "blackmail": ("blackmails", "blackmailed", "blackmailing"),
    "panic": ("panics", "panicked", "panicking"),
    "mimic": ("mimics", "mimicked", "mimicking"),
    "admit": ("admits", "admitted", "admitting"),
    "rebut": ("rebuts", "rebutted", "rebutting"),
    "commit": ("commits", "committed", "committing"),
    "regret": ("regrets", "regretted", "regretting"),
    "patrol": ("patrols", "patrolled", "patrolling"),
    "compel": ("compels", "compelled", "compelling"),
    "rebel": ("rebels", "rebelled", "rebelling"),
    "control": ("controls", "controlled", "controlling"),
    "upset": ("upsets", "upsetting"),
    "beset": ("besets", "besetting"),
    "outwit": ("outwits", "outwitted", "outwitting"),
    "extol": ("extols", "extolled", "extolling"),
}
#: Nouns with irregular plurals.
IRREGULAR_NOUNS: dict[str, str] = {
    "thief": "thieves", "wolf": "wolves", "life": "lives", "knife": "knives", "crisis": "crises",
    "thesis": "theses", "hypothesis": "hypotheses", "child": "children", "person": "people",
    "analysis": "analyses", "mouse": "mice", "foot": "feet", "tooth": "teeth",
}
_NO_DOUBLE = set("wxy")


def _cvc(w: str) -> bool:
    """Short consonant-vowel-consonant ending of a one-syllable word: slam -> slammed, but not rant."""
    if len(w) < 3 or not w.isalpha():
        return False
    a, b, c = w[-3], w[-2], w[-1]
    one_syllable = sum(1 for i, ch in enumerate(w) if ch in _VOWELS and (i == 0 or w[i - 1] not in _VOWELS)) == 1
    return one_syllable and a not in _VOWELS and b in _VOWELS and c not in _VOWELS and c not in _NO_DOUBLE


def _plural(w: str) -> str:
    if w in IRREGULAR_NOUNS:
        return IRREGULAR_NOUNS[w]
    if w.endswith("man") and len(w) > 4:  # strongman -> strongmen
        return w[:-3] + "men"
    if w.endswith(("s", "x", "z", "ch", "sh")):
        return w + "es"
    if w.endswith("y") and len(w) > 1 and w[-2] not in _VOWELS:
        return w[:-1] + "ies"
    return w + "s"


def _verb_forms(w: str) -> list[str]:
    if w in IRREGULAR_VERBS:
        return list(IRREGULAR_VERBS[w])
    third = _plural(w) if not w.endswith("man") else w + "s"
    if w.endswith("e"):
        past = w + "d"
        ing = w[:-2] + "ying" if w.endswith("ie") else (w + "ing" if w.endswith(("ee", "ye", "oe")) else w[:-1] + "ing")
    elif w.endswith("y") and len(w) > 1 and w[-2] not in _VOWELS:
        past, ing = w[:-1] + "ied", w + "ing"
    elif w.endswith("c"):
        past, ing = w + "ked", w + "king"
    elif _cvc(w):
        past, ing = w + w[-1] + "ed", w + w[-1] + "ing"
    else:
        past, ing = w + "ed", w + "ing"
    return [third, past, ing]


def _adverb(w: str) -> str | None:
    if w.endswith("ly"):
        return None
    if w.endswith("ic"):
        return w + "ally"
    if w.endswith("le") and len(w) > 3 and w[-3] not in _VOWELS:
        return w[:-1] + "y"
    if w.endswith("y") and len(w) > 2 and w[-2] not in _VOWELS:
        return w[:-1] + "ily"
    if w.endswith("ll"):
        return w + "y"
    return w + "ly"


def inflections(term: str, pos: str = "fixed") -> list[str]:
    """All surface forms of ``term`` (lower case, sorted), the term itself first.

    - ``verb``: the *first* word is conjugated (``ram through`` -> ``rammed through``);
    - ``noun``: the *last* word takes its plural (``union thug`` -> ``union thugs``);
    - ``adj``: a one-word adjective also gets its ``-ly`` adverb (``outrageous`` -> ``outrageously``);
    - ``fixed``: no change (set phrases such as ``so-called``).

    >>> inflections("slam", "verb")
    ['slam', 'slammed', 'slamming', 'slams']
    >>> inflections("thug", "noun")
    ['thug', 'thugs']
    >>> inflections("horrific", "adj")
    ['horrific', 'horrifically']
    """
    base = " ".join(term.lower().split())
    words = base.split(" ")
    forms = {base}
    for p in pos.split("+"):
        if p == "verb":
            for f in _verb_forms(words[0]):
                forms.add(" ".join([f, *words[1:]]))
        elif p == "noun":
            forms.add(" ".join([*words[:-1], _plural(words[-1])]))
        elif p == "adj" and len(words) == 1:
            adv = _adverb(words[0])
            if adv:
                forms.add(adv)
    return [base] + sorted(forms - {base})


# ---------------------------------------------------------------------------------------------
# Builder: seeds -> one JSON resource
# ---------------------------------------------------------------------------------------------


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def _key(form: str) -> str:
    """The lookup key of a surface form: lower case, hyphens and whitespace runs as one space."""
    return re.sub(r"[\s\-]+", " ", normalise_quotes(form).lower()).strip()


_SEP_RE = r"[\s\-']+"  # what may separate two words of a phrase in the text
_SEP = re.compile(_SEP_RE)


def _lookup_key(matched: str) -> str:
    """How a matched stretch of text is looked up: separators (spaces, hyphens, apostrophes) as one space.

    The regex lets any separator run stand between two words, so the lookup must forget which one it was.
    """
    return _SEP.sub(" ", matched)


def read_seeds(
    seed_dir: str | Path | None = None,
) -> tuple[dict[str, Any], list[Category], list[Term], list[Protected]]:
    """Parse the seed files into typed entries (no forms yet). Raises ValueError with the file name."""
    d = Path(seed_dir) if seed_dir is not None else seeds_dir()
    if not (d / "taxonomy.toml").exists():
        raise FileNotFoundError(f"no taxonomy.toml in {d}: lexicon seeds live in data/lexicon/ of a source checkout")
    tax = _load_toml(d / "taxonomy.toml")
    mapping: dict[str, str] = tax["taxonomy"]
    categories: list[Category] = []
    terms: list[Term] = []
    for path in sorted((d / "categories").glob("*.toml")):
        doc = _load_toml(path)
        head = doc.get("category", {})
        if head.get("id") != path.stem:
            raise ValueError(f"{path}: category id {head.get('id')!r} must equal the file name {path.stem!r}")
        taxonomy = head.get("taxonomy", "")
        if taxonomy not in mapping:
            raise ValueError(f"{path}: taxonomy {taxonomy!r} is not in taxonomy.toml")
        categories.append(
            Category(id=head["id"], name=head["name"], taxonomy=taxonomy, meta_category=mapping[taxonomy],
                     description=head.get("description", ""))
        )
        for i, group in enumerate(doc.get("group", [])):
            for item in group.get("terms", []):
                spec = {"term": item} if isinstance(item, str) else dict(item)
                try:
                    terms.append(
                        Term(
                            term=spec["term"],
                            category=head["id"],
                            band=float(spec.get("band", group.get("band"))),
                            pos=spec.get("pos", group.get("pos", "fixed")),
                            variants=tuple(spec.get("variants", ())),
                            note=spec.get("note", group.get("note", "")),
                        )
                    )
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"{path}: group {i + 1}, entry {item!r}: {exc}") from exc
    protected: list[Protected] = []
    if (d / "protected.toml").exists():
        for item in _load_toml(d / "protected.toml").get("protected", []):
            for ctx in item["contexts"]:
                protected.append(
                    Protected(term=item["term"], context=ctx, pos=item.get("pos", "noun"), note=item.get("note", ""))
                )
    meta = {"version": str(tax.get("version", "0")), "name": tax.get("name", "mabpd-kit bias lexicon"),
            "taxonomy": dict(sorted(mapping.items())), "bands": list(Config().lexicon.bands)}
    return meta, categories, terms, protected


def finalize(
    meta: dict[str, Any], categories: Iterable[Category], terms: Iterable[Term], protected: Iterable[Protected]
) -> dict[str, Any]:
    """Check the entries, expand every term into its forms and return the resource as a dict.

    Deterministic: everything is sorted, no timestamps. Duplicate terms, unknown categories, bands
    outside the configured ones and empty notes are errors. When two terms share a surface form
    the higher band keeps it (ties: alphabetical by category, then term).
    """
    cats = sorted(categories, key=lambda c: c.id)
    ids = [c.id for c in cats]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate category ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    bands = tuple(meta.get("bands", Config().lexicon.bands))
    seen: dict[str, Term] = {}
    for t in terms:
        if t.category not in ids:
            raise ValueError(f"term {t.term!r}: unknown category {t.category!r}")
        if not any(abs(t.band - b) < 1e-9 for b in bands):
            raise ValueError(f"term {t.term!r}: band {t.band} not one of {bands}")
        if not t.note.strip():
            raise ValueError(f"term {t.term!r}: every term needs a teaching note")
        k = _key(t.term)
        if k in seen:
            raise ValueError(f"term {t.term!r} appears twice ({seen[k].category} and {t.category})")
        seen[k] = t
    for t in seen.values():
        for f in [t.term, *t.variants]:
            if not _FORM_SHAPE.fullmatch(_key(f)):
                raise ValueError(f"term {t.term!r}: form {f!r} must be words joined by spaces, hyphens or apostrophes")
    # A term always owns its own written form; variants and generated inflections go to the
    # highest band when two terms produce the same surface form ("absurd" -> "absurdly").
    owner: dict[str, Term] = {k: t for k, t in seen.items()}
    for t in sorted(seen.values(), key=lambda t: (-t.band, t.category, _key(t.term))):
        for f in inflections(t.term, t.pos) + [_key(v) for v in t.variants]:
            owner.setdefault(_key(f), t)
    built_terms = []
    for t in sorted(seen.values(), key=lambda t: (t.category, _key(t.term))):
        forms = sorted({_key(f) for f in inflections(t.term, t.pos) + list(t.variants) if owner[_key(f)] is t})
        built_terms.append(t.model_copy(update={"forms": tuple(forms), "band": round(t.band, 2)}))
    prot = []
    for p in sorted(protected, key=lambda p: (_key(p.term), _key(p.context))):
        if _key(p.term) not in _key(p.context):
            raise ValueError(f"protected context {p.context!r} does not contain {p.term!r}")
        forms = tuple(dict.fromkeys(_key(f) for f in inflections(p.context, p.pos)))
        prot.append(p.model_copy(update={"forms": forms}))
    payload = {
        **meta,
        "categories": [c.model_dump() for c in cats],
        "terms": [t.model_dump(mode="json") for t in built_terms],
        "protected": [p.model_dump(mode="json") for p in prot],
    }
    payload["checksum"] = _checksum(payload)
    return payload


def _canonical(payload: dict[str, Any]) -> bytes:
    body = {k: v for k, v in payload.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def _checksum(payload: dict[str, Any]) -> str:
    return "sha256:" + hashlib.sha256(_canonical(payload)).hexdigest()


def build(seed_dir: str | Path | None = None) -> dict[str, Any]:
    """Seeds -> the lexicon resource as a dict (version, taxonomy, categories, terms, protected, checksum)."""
    return finalize(*read_seeds(seed_dir))


def build_bytes(seed_dir: str | Path | None = None) -> bytes:
    """The exact bytes of ``resources/lexicon.json``: building twice gives identical bytes."""
    return _dump(build(seed_dir))


def _dump(payload: dict[str, Any]) -> bytes:
    return (json.dumps(payload, sort_keys=True, ensure_ascii=False, indent=1) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------------------------
# Matcher
# ---------------------------------------------------------------------------------------------


_FORM_SHAPE = re.compile(r"\w+(?:(?:[\s\-']+|\s\.\.\.\s)\w+)*")
#: In a phrase, "..." stands for 1 to ``config.lexicon.max_gap_words`` words: "ram ... through"
#: matches "rammed the zoning overhaul through". Words only: punctuation ends the gap.
GAP = " ... "
_GAP_CHAR = "\x00"  # GAP inside the trie (one character, so it becomes one branch)


def _gap_re(max_gap_words: int) -> str:
    return rf"(?:{_SEP_RE}\w+){{1,{max_gap_words}}}?{_SEP_RE}"


def _gapped_form_re(form: str, max_gap_words: int) -> str:
    """The full-match regex of one gapped form: ``rammed ... through`` -> ``rammed<gap>through``."""
    parts = (_SEP_RE.join(re.escape(w) for w in part.split(" ")) for part in form.split(GAP))
    return _gap_re(max_gap_words).join(parts)


def _trie_regex(keys: Iterable[str], max_gap_words: int = 4) -> str:
    """One regex alternation shaped like a trie: ``slam|slammed|slams`` -> ``slam(?:med|s)?``.

    Shared prefixes are factored out, so at each position the regex engine follows one branch per
    character instead of trying thousands of alternatives. A space in a key matches any run of
    whitespace, hyphens or apostrophes (``far left`` matches "far-left" and "far  left").
    """
    trie: dict[str, Any] = {}
    for k in keys:
        node = trie
        for ch in k.replace(GAP, _GAP_CHAR):
            node = node.setdefault(ch, {})
        node[""] = True

    def render(node: dict[str, Any]) -> str:
        branches = []
        for ch in sorted(c for c in node if c):
            atom = _SEP_RE if ch == " " else _gap_re(max_gap_words) if ch == _GAP_CHAR else re.escape(ch)
            branches.append(atom + render(node[ch]))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:  # a key ends here: the longer continuation is optional (greedy, tried first)
            return "(?:" + body + ")?" if len(branches) == 1 else body + "?"
        return body

    return render(trie)


def _compile(keys: Iterable[str], max_gap_words: int = 4) -> re.Pattern[str] | None:
    """A pattern that reports, at *every* word start, the longest key starting there.

    The lookahead ``(?=(...))`` consumes nothing, so overlapping candidates are all reported and
    :meth:`Lexicon.match` can resolve them by band. Text is lower-cased before matching (faster
    than ``re.IGNORECASE``).
    """
    keys = sorted(set(keys))
    if not keys:
        return None
    return re.compile(r"(?<!\w)(?=(" + _trie_regex(keys, max_gap_words) + r")(?!\w))")


def _lower_same_length(text: str) -> str:
    """Lower case with offsets intact (a few characters, e.g. 'İ', lowercase to two code points)."""
    low = normalise_quotes(text).lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in normalise_quotes(text))


class Lexicon:
    """A built lexicon: typed entries plus a compiled matcher. Immutable; :meth:`extend` makes a new one."""

    def __init__(self, data: dict[str, Any], *, config: Config | None = None, verify: bool = True) -> None:
        if verify and data.get("checksum") != _checksum(data):
            raise ValueError(
                "lexicon checksum mismatch: the JSON was edited by hand; rebuild with `mabpd lexicon build`"
            )
        self.config = config or Config()
        self.data = data
        self.version: str = data.get("version", "0")
        self.checksum: str = data.get("checksum", "")
        self.categories: dict[str, Category] = {c["id"]: Category(**c) for c in data["categories"]}
        self.terms: list[Term] = [Term(**t) for t in data["terms"]]
        self.protected: list[Protected] = [Protected(**p) for p in data["protected"]]
        self._by_form: dict[str, Term] = {f: t for t in self.terms for f in t.forms}
        self._prot_by_form: dict[str, Protected] = {f: p for p in self.protected for f in p.forms}
        self._lookup = {_lookup_key(f): t for f, t in self._by_form.items() if GAP not in f}
        gap = self.config.lexicon.max_gap_words
        self._gapped = [(re.compile(_gapped_form_re(f, gap)), t) for f, t in self._by_form.items() if GAP in f]
        self._prot_lookup = {_lookup_key(f): p for f, p in self._prot_by_form.items()}
        self._re = _compile(self._by_form, gap)
        self._prot_re = _compile(self._prot_by_form)
        # Terms sharing a word with some protected context: only these can overlap one, so only
        # they need the protected scan (a speed-up, not a change of behaviour).
        prot_words = {w for f in self._prot_by_form for w in re.findall(r"\w+", f)}
        self._protectable = {
            t.term for t in self.terms for f in t.forms if prot_words.intersection(re.findall(r"\w+", f))
        }

    # -- constructors ------------------------------------------------------------------------
    @classmethod
    def default(cls) -> "Lexicon":
        """The shipped resource (or ``config.lexicon.path``), loaded once per process."""
        return _default_lexicon(Config().lexicon.path)

    @classmethod
    def from_config(cls, config: Config) -> "Lexicon":
        """The lexicon a configuration asks for (``config.lexicon.path`` or the shipped one).

        Only ``config.lexicon`` matters, and lexicons are immutable, so one instance per distinct
        lexicon section is loaded and shared (a sweep over other settings does not reload it).
        """
        return _lexicon_for(config.lexicon)

    @classmethod
    def from_json(cls, path: str | Path, *, config: Config | None = None) -> "Lexicon":
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), config=config)

    @classmethod
    def from_seeds(cls, seed_dir: str | Path | None = None, *, config: Config | None = None) -> "Lexicon":
        """Build straight from seed files (what the notebook does step by step)."""
        return cls(build(seed_dir), config=config)

    @classmethod
    def from_entries(
        cls,
        categories: Iterable[Category],
        terms: Iterable[Term],
        protected: Iterable[Protected] = (),
        *,
        version: str = "custom",
        config: Config | None = None,
    ) -> "Lexicon":
        """A lexicon from typed entries, e.g. a small teaching lexicon written in a notebook."""
        cfg = config or Config()
        meta = {"version": version, "name": "custom lexicon", "bands": list(cfg.lexicon.bands),
                "taxonomy": _default_taxonomy()}
        return cls(finalize(meta, categories, terms, protected), config=cfg)

    def extend(
        self,
        categories: Iterable[Category] = (),
        terms: Iterable[Term] = (),
        protected: Iterable[Protected] = (),
    ) -> "Lexicon":
        """A new lexicon with extra categories / terms / protected contexts (version gets ``+local``)."""
        meta = {k: v for k, v in self.data.items() if k not in ("categories", "terms", "protected", "checksum")}
        meta["version"] = str(meta.get("version", "0")).split("+")[0] + "+local"
        base_terms = [t.model_copy(update={"forms": ()}) for t in self.terms]
        base_prot = [p.model_copy(update={"forms": ()}) for p in self.protected]
        return Lexicon(
            finalize(meta, [*self.categories.values(), *categories], [*base_terms, *terms], [*base_prot, *protected]),
            config=self.config,
        )

    # -- matching ----------------------------------------------------------------------------
    def _candidates(self, text: str, low: str | None = None) -> list[LexMatch]:
        if not text or self._re is None:
            return []
        low = _lower_same_length(text) if low is None else low
        out = []
        for m in self._re.finditer(low):
            a, b = m.span(1)
            t = self._term_for(low[a:b])
            c = self.categories[t.category]
            out.append(LexMatch(a, b, text[a:b], t.term, t.category, c.taxonomy, c.meta_category, t.band, t.note))
        return out

    def _term_for(self, matched: str) -> Term:
        """The entry behind a stretch the regex matched: a direct look-up, else a gapped phrase."""
        t = self._lookup.get(_lookup_key(matched))
        if t is None:
            t = next(term for rx, term in self._gapped if rx.fullmatch(matched))
        return t

    def _protected_spans(self, text: str, low: str | None = None) -> list[tuple[int, int, Protected]]:
        if not text or self._prot_re is None:
            return []
        low = _lower_same_length(text) if low is None else low
        return [(m.start(1), m.end(1), self._prot_lookup[_lookup_key(m.group(1))]) for m in self._prot_re.finditer(low)]

    def match(self, text: str) -> list[LexMatch]:
        """All non-overlapping lexicon hits in ``text``, in reading order.

        Case-insensitive, whole words, inflected forms, multi-word phrases. Hits that overlap a
        protected context ("heart attack", "tax regime") are dropped. Where hits overlap, the
        highest band wins (then the longer, then the earlier); a losing phrase is cut back to its
        longest shorter entry that still fits ("radical left wing" with "left wing" at 0.90 keeps
        "radical").
        """
        low = _lower_same_length(text) if text else ""
        cands = self._filter_protected(text, low, self._candidates(text, low))
        if len(cands) < 2:
            return cands
        cands.sort(key=lambda m: (-m.band, -(m.end - m.start), m.start))
        chosen: list[LexMatch] = []
        losers: list[LexMatch] = []
        for c in cands:
            (chosen if all(c.end <= k.start or c.start >= k.end for k in chosen) else losers).append(c)
        for c in losers:  # try the longest shorter entry starting at the same place
            blockers = [k.start for k in chosen if k.start > c.start and k.start < c.end]
            if not blockers or any(k.start <= c.start < k.end for k in chosen):
                continue
            short = self._longest_at(text, low, c.start, min(blockers))
            if short is not None and all(short.end <= k.start or short.start >= k.end for k in chosen):
                chosen.append(short)
        return sorted(chosen, key=lambda m: m.start)

    def _longest_at(self, text: str, low: str, start: int, endpos: int) -> LexMatch | None:
        """The longest entry starting at ``start`` and ending by ``endpos`` (None if there is none)."""
        m = self._re.match(low, start, endpos) if self._re is not None else None
        if m is None or not m.group(1):
            return None
        a, b = m.span(1)
        t = self._term_for(low[a:b])
        c = self.categories[t.category]
        hit = LexMatch(a, b, text[a:b], t.term, t.category, c.taxonomy, c.meta_category, t.band, t.note)
        return hit if self._filter_protected(text, low, [hit]) else None

    def _filter_protected(self, text: str, low: str, cands: list[LexMatch]) -> list[LexMatch]:
        if not cands or not any(c.term in self._protectable for c in cands):
            return cands
        prot = self._protected_spans(text, low)
        return [c for c in cands if not any(c.start < b and a < c.end for a, b, _ in prot)]

    def signal(self, text: str) -> LexMatch | None:
        """The agent's lexicon signal: the highest-band match above ``config.lexicon.confidence_floor``."""
        floor = self.config.lexicon.confidence_floor
        best = None
        for m in self.match(text):
            if m.band > floor and (best is None or (m.band, m.end - m.start) > (best.band, best.end - best.start)):
                best = m
        return best

    def protected_reason(self, text: str, start: int, end: int) -> str | None:
        """Why ``text[start:end]`` is neutral domain vocabulary here (it overlaps a protected context),
        or None if it is not protected."""
        for a, b, p in self._protected_spans(text):
            if start < b and a < end:
                note = f": {p.note}" if p.note else ""
                return f"protected term {p.term!r} in {text[a:b]!r}{note}"
        return None

    def to_span(self, m: LexMatch, agent: str = "bias", ct: "CleanText | None" = None) -> Span:
        """A shared :class:`~mabpd_kit.types.Span`; pass the :class:`CleanText` to fill raw offsets."""
        orig = ct.to_orig(m.start, m.end) if ct is not None else (None, None)
        return Span(
            text=m.text, start=m.start, end=m.end, orig_start=orig[0], orig_end=orig[1], category=m.category,
            taxonomy=m.taxonomy, meta_category=m.meta_category, agent=agent, score=m.band,
            reason=f"lexicon: {m.term!r} ({m.category}, band {m.band:.2f})", note=m.note,
        )

    def occurrences(self, text: str) -> list[LexMatch]:
        """Every hit of every term (protected contexts removed, overlaps *not* resolved).

        :meth:`match` keeps one winner per stretch of text; corpus statistics such as
        :meth:`independence` want each term that occurs, even inside a longer phrase.
        """
        low = _lower_same_length(text) if text else ""
        return self._filter_protected(text, low, self._candidates(text, low))

    def independence(self, texts: Sequence[str], labels: Sequence[Any], *, alpha: float = 0.05) -> "IndependenceResult":
        """Was this lexicon built independently of a labelled corpus? (SPEC 2, paper appendix E).

        For each term: the records containing it and their bias rate (share labelled biased).
        Reports the share of terms found in no record and Pearson r between term score (band) and
        bias rate over the terms that occur, with the two-sided ``alpha`` critical value of r for
        that n. A lexicon fitted to the corpus would show many terms present and a significant r;
        an independent one leaves most terms absent and r below the critical value.
        ``labels``: 1/0, True/False or "biased"/"neutral".
        """
        import numpy as np
        import pandas as pd

        if len(texts) != len(labels):
            raise ValueError(f"{len(texts)} texts but {len(labels)} labels")
        y = np.array([_as_binary(v) for v in labels], dtype=float)
        records: dict[str, set[int]] = {t.term: set() for t in self.terms}
        for i, text in enumerate(texts):
            for m in self.occurrences(text if isinstance(text, str) else ""):
                records[m.term].add(i)
        rows = []
        for t in self.terms:
            idx = sorted(records[t.term])
            n_b = int(y[idx].sum()) if idx else 0
            rows.append({"term": t.term, "category": t.category, "band": t.band, "n_records": len(idx),
                         "n_biased": n_b, "bias_rate": n_b / len(idx) if idx else float("nan")})
        frame = pd.DataFrame(rows, columns=["term", "category", "band", "n_records", "n_biased", "bias_rate"])
        present = frame[frame["n_records"] > 0]
        n = len(present)
        r, p, r_crit = _pearson_with_critical(present["band"].to_numpy(float), present["bias_rate"].to_numpy(float),
                                              alpha)
        if np.isnan(r):
            verdict, independent = f"undetermined: r is not defined for {n} present term(s) or constant values", None
        elif abs(r) < r_crit:
            verdict = (f"independent: |r| = {abs(r):.3f} < {r_crit:.3f}, the two-sided {alpha:.0%} critical value "
                       f"for n = {n}; term scores do not track this corpus's labels")
            independent = True
        else:
            verdict = (f"not independent: |r| = {abs(r):.3f} >= {r_crit:.3f}, the two-sided {alpha:.0%} critical value "
                       f"for n = {n}; term scores track this corpus's labels. Fitting to the labels produces this, "
                       "but so does a lexicon that encodes real bias knowledge when n is large: the test cannot "
                       "tell them apart, provenance (seeds written without labels) must")
            independent = False
        n_terms = len(frame)
        return IndependenceResult(
            n_records=len(texts), bias_rate=float(y.mean()) if len(y) else float("nan"), n_terms=n_terms,
            n_absent=n_terms - n, share_absent=(n_terms - n) / n_terms if n_terms else float("nan"),
            n=n, r=r, p_value=p, r_critical=r_crit, alpha=alpha, independent=independent, verdict=verdict,
            frame=frame,
        )

    # -- views -------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.terms)

    def __repr__(self) -> str:
        return (f"Lexicon(version={self.version!r}, terms={len(self.terms)}, categories={len(self.categories)}, "
                f"protected={len(self.protected)})")

    def terms_frame(self) -> "pd.DataFrame":
        """One row per term: term, category, taxonomy, meta_category, band, pos, variants, n_forms, note."""
        import pandas as pd

        rows = [
            {"term": t.term, "category": t.category, "taxonomy": self.categories[t.category].taxonomy,
             "meta_category": self.categories[t.category].meta_category, "band": t.band, "pos": t.pos,
             "variants": ", ".join(t.variants), "n_forms": len(t.forms), "note": t.note}
            for t in self.terms
        ]
        return pd.DataFrame(rows, columns=["term", "category", "taxonomy", "meta_category", "band", "pos",
                                           "variants", "n_forms", "note"])

    def categories_frame(self) -> "pd.DataFrame":
        """One row per category with its taxonomy, meta-category, term count and terms per band."""
        import pandas as pd

        bands = self.config.lexicon.bands
        rows = []
        for c in self.categories.values():
            ts = [t for t in self.terms if t.category == c.id]
            row = {"category": c.id, "name": c.name, "taxonomy": c.taxonomy, "meta_category": c.meta_category,
                   "n_terms": len(ts)}
            for b in bands:
                row[f"band_{b:.2f}"] = sum(1 for t in ts if abs(t.band - b) < 1e-9)
            row["description"] = c.description
            rows.append(row)
        return pd.DataFrame(rows)

    def protected_frame(self) -> "pd.DataFrame":
        import pandas as pd

        return pd.DataFrame([{"term": p.term, "context": p.context, "note": p.note} for p in self.protected],
                            columns=["term", "context", "note"])

    def prompt_knowledge(self, max_per_category: int = 3) -> str:
        """A compact, deterministic description of the taxonomy with example terms, for LLM prompts.

        Examples per category come from its highest band, spread evenly over the alphabet (so the
        prompt does not show three near-identical phrases); protected contexts are shown one per word.
        """
        lines = ["Bias taxonomy (category -> taxonomy type -> meta-category), with example terms:"]
        for c in self.categories.values():
            ts = [t for t in self.terms if t.category == c.id]
            top = sorted((t.term for t in ts if t.band == max(x.band for x in ts)), key=str.lower) if ts else []
            k = min(max_per_category, len(top))
            picks = [top[(i * len(top)) // k] for i in range(k)] if k else []
            ex = ", ".join(f'"{t}"' for t in picks)
            lines.append(f"- {c.id} ({c.taxonomy} -> {c.meta_category}): {c.name}. e.g. {ex}")
        seen: dict[str, str] = {}
        for p in self.protected:
            seen.setdefault(p.term, p.context)
        examples = list(seen.values())[: max(3, max_per_category * 3)]
        lines.append("Neutral domain uses are not bias, e.g. " + "; ".join(f'"{e}"' for e in examples) + ".")
        return "\n".join(lines)


@dataclass(frozen=True)
class IndependenceResult:
    """Outcome of :meth:`Lexicon.independence`; ``frame`` has one row per term."""

    n_records: int
    bias_rate: float
    n_terms: int
    n_absent: int
    share_absent: float
    n: int
    r: float
    p_value: float
    r_critical: float
    alpha: float
    independent: bool | None
    verdict: str
    frame: "pd.DataFrame"

    def summary(self) -> dict[str, Any]:
        """The figures without the per-term table (for printing and reports)."""
        return {k: getattr(self, k) for k in ("n_records", "bias_rate", "n_terms", "n_absent", "share_absent", "n",
                                              "r", "p_value", "r_critical", "alpha", "independent", "verdict")}

    def __repr__(self) -> str:
        return (f"IndependenceResult(terms absent {self.n_absent}/{self.n_terms} = {self.share_absent:.1%}, "
                f"r = {self.r:+.3f}, critical {self.r_critical:.3f} at n = {self.n}: {self.verdict.split(':')[0]})")


def critical_r(n: int, alpha: float = 0.05) -> float:
    """Two-sided critical value of Pearson r for ``n`` pairs: |r| above it is significant at ``alpha``.

    From the t distribution with n - 2 degrees of freedom: r* = t* / sqrt(n - 2 + t*^2).

    >>> round(critical_r(48), 4)
    0.2845
    """
    if n < 3:
        return float("nan")
    from scipy import stats

    t = float(stats.t.ppf(1 - alpha / 2, n - 2))
    return t / (n - 2 + t * t) ** 0.5


def _pearson_with_critical(x: Any, y: Any, alpha: float) -> tuple[float, float, float]:
    """(r, two-sided p-value, critical r) for paired arrays; NaNs when r is undefined."""
    import numpy as np

    n = len(x)
    r_crit = critical_r(n, alpha)
    if n < 3 or np.std(x) == 0 or np.std(y) == 0:
        return float("nan"), float("nan"), r_crit
    from scipy import stats

    r = float(np.corrcoef(x, y)[0, 1])
    r = max(-1.0, min(1.0, r))
    if abs(r) == 1.0:
        return r, 0.0, r_crit
    t = r * ((n - 2) / (1 - r * r)) ** 0.5
    return r, float(2 * stats.t.sf(abs(t), n - 2)), r_crit


def _as_binary(v: Any) -> int:
    if isinstance(v, str):
        low = v.strip().lower()
        if low in ("biased", "bias", "1", "true", "yes"):
            return 1
        if low in ("neutral", "unbiased", "non-biased", "0", "false", "no"):
            return 0
        raise ValueError(f"label {v!r} is not biased/neutral or 1/0")
    return int(bool(v))


def _default_taxonomy() -> dict[str, str]:
    """Taxonomy type -> meta-category as shipped (used for lexicons built from entries)."""
    return dict(json.loads(resource_path().read_text(encoding="utf-8"))["taxonomy"])


@lru_cache(maxsize=4)
def _default_lexicon(path: str | None) -> Lexicon:
    return Lexicon.from_json(path or resource_path())


@lru_cache(maxsize=8)
def _lexicon_for(section: LexiconConfig) -> Lexicon:
    if section == Config().lexicon:
        return Lexicon.default()
    return Lexicon.from_json(section.path or resource_path(), config=Config(lexicon=section))


# ---------------------------------------------------------------------------------------------
# CLI: mabpd lexicon build | check | match
# ---------------------------------------------------------------------------------------------


def cli_add_arguments(parser: argparse.ArgumentParser) -> None:
    sub = parser.add_subparsers(dest="lexicon_command", metavar="ACTION", required=True)
    b = sub.add_parser("build", help="seeds -> resources/lexicon.json (deterministic)")
    b.add_argument("--seeds", default=None, help="seed folder (default: data/lexicon)")
    b.add_argument("--out", default=None, help="output JSON (default: the shipped resource)")
    c = sub.add_parser("check", help="is the shipped JSON exactly a fresh build of the seeds?")
    c.add_argument("--seeds", default=None)
    c.add_argument("--json", default=None, help="JSON to check (default: the shipped resource)")
    m = sub.add_parser("match", help="show lexicon matches in TEXT (or '-' for stdin)")
    m.add_argument("text", nargs="+")


def cli_run(args: argparse.Namespace) -> int:
    action = args.lexicon_command
    if action == "build":
        data = build_bytes(args.seeds)
        out = Path(args.out) if args.out else resource_path()
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(data)
        lex = Lexicon(json.loads(data))
        print(f"built {out}: {len(lex.terms)} terms, {len(lex.categories)} categories, "
              f"{len(lex.protected)} protected contexts, {lex.checksum}")
        return 0
    if action == "check":
        path = Path(args.json) if args.json else resource_path()
        fresh = build_bytes(args.seeds)
        shipped = path.read_bytes() if path.exists() else b""
        if fresh == shipped:
            print(f"ok: {path} matches the seeds ({json.loads(fresh)['checksum']})")
            return 0
        print(f"stale: {path} differs from a fresh build of the seeds; run `mabpd lexicon build`", file=sys.stderr)
        return 1
    if action == "match":
        text = sys.stdin.read() if args.text == ["-"] else " ".join(args.text)
        lex = Lexicon.default()
        for m in lex.match(text):
            print(f"{m.start:>5}-{m.end:<5} {m.text!r:<28} {m.term!r:<24} {m.category:<24} {m.band:.2f}")
        sig = lex.signal(text)
        print(f"signal: {sig.term!r} ({sig.category}, {sig.band:.2f})" if sig else "signal: none")
        return 0
    raise ValueError(f"unknown lexicon action {action!r}")

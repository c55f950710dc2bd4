"""The matcher: a built lexicon with one trie-shaped regular expression over all its surface forms."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mabpd_kit.config import Config, LexiconConfig
from mabpd_kit.lexicon.boundaries import content_tokens, trim
from mabpd_kit.lexicon.build import checksum, default_taxonomy, finalize, resource_path
from mabpd_kit.lexicon.model import Category, LexMatch, Protected, Term
from mabpd_kit.lexicon.morphology import GAP, SEP_RE, lookup_key
from mabpd_kit.text import normalise_quotes
from mabpd_kit.types import Span

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from mabpd_kit.lexicon.stats import IndependenceResult
    from mabpd_kit.text import CleanText

__all__ = ["Lexicon"]

_GAP_CHAR = "\x00"  # GAP inside the trie (one character, so it becomes one branch)
_MISSING = object()
_HIT_INFO_MAX = 65536  # stretches remembered by Lexicon._fields_for before the memo starts over


def _gap_re(max_gap_words: int) -> str:
    return rf"(?:{SEP_RE}\w+){{1,{max_gap_words}}}?{SEP_RE}"


def _gapped_form_re(form: str, max_gap_words: int) -> str:
    """The full-match regex of one gapped form: ``rammed ... through`` -> ``rammed<gap>through``."""
    parts = (SEP_RE.join(re.escape(w) for w in part.split(" ")) for part in form.split(GAP))
    return _gap_re(max_gap_words).join(parts)


def _trie_regex(keys: Iterable[str], max_gap_words: int = 4) -> str:
    """One alternation shaped like a trie (``slam|slammed|slams`` -> ``slam(?:med|s)?``): one branch per character."""
    trie: dict[str, Any] = {}
    for k in keys:
        node = trie
        for ch in k.replace(GAP, _GAP_CHAR):
            node = node.setdefault(ch, {})
        node[""] = True

    def render(node: dict[str, Any]) -> str:
        branches = []
        for ch in sorted(c for c in node if c):
            atom = SEP_RE if ch == " " else _gap_re(max_gap_words) if ch == _GAP_CHAR else re.escape(ch)
            branches.append(atom + render(node[ch]))
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:  # a key ends here: the longer continuation is optional (greedy, tried first)
            return "(?:" + body + ")?" if len(branches) == 1 else body + "?"
        return body

    return render(trie)


def _compile(keys: Iterable[str], max_gap_words: int = 4) -> re.Pattern[str] | None:
    """A pattern reporting, at every word start, the longest key starting there (lower-cased text)."""
    keys = sorted(set(keys))
    if not keys:
        return None
    return re.compile(r"(?<!\w)(?=(" + _trie_regex(keys, max_gap_words) + r")(?!\w))")


def _scanner(rx: re.Pattern[str] | None) -> re.Pattern[str] | None:
    """``rx`` past position 0, consuming the non-word character before a word start: a tighter loop."""
    return None if rx is None else re.compile(r"\W" + rx.pattern[len(r"(?<!\w)"):])


def _finditer(rx: re.Pattern[str], scan: re.Pattern[str], low: str) -> list[re.Match[str]]:
    """What ``rx.finditer(low)`` finds, faster."""
    first = rx.match(low)
    found = list(scan.finditer(low))
    if first is not None:
        found.insert(0, first)
    return found


def _lower_same_length(text: str) -> str:
    """Lower case with offsets intact (a few characters, e.g. 'İ', lowercase to two code points)."""
    low = normalise_quotes(text).lower()
    if len(low) == len(text):
        return low
    return "".join(c if len(c.lower()) != 1 else c.lower() for c in normalise_quotes(text))


class Lexicon:
    """A built lexicon: typed entries plus a compiled matcher. Immutable; :meth:`extend` makes a new one."""

    def __init__(self, data: dict[str, Any], *, config: Config | None = None) -> None:
        if data.get("checksum") != checksum(data):
            raise ValueError("lexicon checksum mismatch: the JSON was edited by hand; rebuild with "
                             "`mabpd lexicon build`")
        self.config = config or Config()
        self.data = data
        self.version: str = data.get("version", "0")
        self.checksum: str = data.get("checksum", "")
        self.categories: dict[str, Category] = {c["id"]: Category(**c) for c in data["categories"]}
        self.terms: list[Term] = [Term(**t) for t in data["terms"]]
        self.protected: list[Protected] = [Protected(**p) for p in data["protected"]]
        self._by_form: dict[str, Term] = {f: t for t in self.terms for f in t.forms}
        self._prot_by_form: dict[str, Protected] = {f: p for p in self.protected for f in p.forms}
        self._lookup = {lookup_key(f): t for f, t in self._by_form.items() if GAP not in f}
        gap = self.config.lexicon.max_gap_words
        self._gapped = [(re.compile(_gapped_form_re(f, gap)), t) for f, t in self._by_form.items() if GAP in f]
        self._prot_lookup = {lookup_key(f): p for f, p in self._prot_by_form.items()}
        self._re = _compile(self._by_form, gap)
        self._prot_re = _compile(self._prot_by_form)
        self._scan, self._prot_scan = _scanner(self._re), _scanner(self._prot_re)
        # terms sharing a word with a protected context: only these need the protected scan
        prot_words = {w for f in self._prot_by_form for w in re.findall(r"\w+", f)}
        self._protectable = {t.term for t in self.terms for f in t.forms
                             if prot_words.intersection(re.findall(r"\w+", f))}
        # the pipeline asks the same sentence again (signal, verifier): the last one's hits are kept
        self._last_match: tuple[str, tuple[LexMatch, ...]] | None = None
        self._last_protected: tuple[str, tuple[tuple[int, int, Protected], ...]] | None = None
        self._hit_info: dict[str, tuple[Any, ...] | None] = {}

    @classmethod
    def default(cls) -> Lexicon:
        """The shipped resource, loaded once per process."""
        return _default_lexicon(Config().lexicon.path)

    @classmethod
    def from_config(cls, config: Config) -> Lexicon:
        """The lexicon ``config.lexicon`` asks for (shared per distinct section)."""
        return _lexicon_for(config.lexicon)

    @classmethod
    def from_json(cls, path: str | Path, *, config: Config | None = None) -> Lexicon:
        return cls(json.loads(Path(path).read_text(encoding="utf-8")), config=config)

    @classmethod
    def from_entries(cls, categories: Iterable[Category], terms: Iterable[Term], protected: Iterable[Protected] = (),
                     *, version: str = "custom", config: Config | None = None) -> Lexicon:
        """A lexicon from typed entries, e.g. a small teaching lexicon written in a notebook."""
        cfg = config or Config()
        meta = {"version": version, "name": "custom lexicon", "bands": list(cfg.lexicon.bands),
                "taxonomy": default_taxonomy()}
        return cls(finalize(meta, categories, terms, protected), config=cfg)

    def extend(self, categories: Iterable[Category] = (), terms: Iterable[Term] = (),
               protected: Iterable[Protected] = ()) -> Lexicon:
        """A new lexicon with extra categories / terms / protected contexts (version gets ``+local``)."""
        meta = {k: v for k, v in self.data.items() if k not in ("categories", "terms", "protected", "checksum")}
        meta["version"] = str(meta.get("version", "0")).split("+")[0] + "+local"
        base_terms = [t.model_copy(update={"forms": ()}) for t in self.terms]
        base_prot = [p.model_copy(update={"forms": ()}) for p in self.protected]
        return Lexicon(finalize(meta, [*self.categories.values(), *categories], [*base_terms, *terms],
                                [*base_prot, *protected]), config=self.config)

    def _candidates(self, text: str, low: str | None = None) -> list[LexMatch]:
        if not text or self._re is None:
            return []
        low = _lower_same_length(text) if low is None else low
        out = []
        info = self._hit_info
        for m in _finditer(self._re, self._scan, low):
            a, b = m.span(1)
            matched = low[a:b]
            fields = info.get(matched, _MISSING)
            if fields is _MISSING:
                fields = self._fields_for(matched)
            if fields is not None:  # None: function words only, the modal "would be", not "would-be"
                out.append(LexMatch(a, b, text[a:b], *fields))
        return out

    def _fields_for(self, matched: str) -> tuple[Any, ...] | None:
        """A hit's fields past its offsets and text, or None for function words only (memoised)."""
        fields = self._entry(matched) if content_tokens(matched) else None
        if len(self._hit_info) >= _HIT_INFO_MAX:
            self._hit_info.clear()
        self._hit_info[matched] = fields
        return fields

    def _entry(self, matched: str) -> tuple[str, str, str, str, float, str]:
        """Term, category, taxonomy, meta-category, band and note of the entry behind a stretch the regex matched:
        a direct look-up, else a gapped phrase."""
        t = self._lookup.get(lookup_key(matched))
        if t is None:
            t = next(term for rx, term in self._gapped if rx.fullmatch(matched))
        c = self.categories[t.category]
        return t.term, t.category, c.taxonomy, c.meta_category, t.band, t.note

    def _protected_spans(self, text: str, low: str | None = None) -> tuple[tuple[int, int, Protected], ...]:
        if not text or self._prot_re is None:
            return ()
        last = self._last_protected
        if last is not None and last[0] == text:
            return last[1]
        low = _lower_same_length(text) if low is None else low
        out = tuple((m.start(1), m.end(1), self._prot_lookup[lookup_key(m.group(1))])
                    for m in _finditer(self._prot_re, self._prot_scan, low))
        self._last_protected = (text, out)
        return out

    def match(self, text: str) -> list[LexMatch]:
        """All non-overlapping hits in ``text``, in reading order, each narrowed to its loaded words. Hits in a
        protected context are dropped; among overlapping hits the highest band wins (then the longer, the
        earlier), and a losing phrase is cut back to its longest shorter entry that still fits."""
        last = self._last_match
        if last is not None and last[0] == text:
            return list(last[1])
        chosen = [t for m in self._match(text) if (t := _trimmed(text, m)) is not None]
        if isinstance(text, str):
            self._last_match = (text, tuple(chosen))
        return chosen

    def _match(self, text: str) -> list[LexMatch]:
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
        m = self._re.match(low, start, endpos) if self._re is not None else None
        if m is None or not m.group(1):
            return None
        a, b = m.span(1)
        hit = LexMatch(a, b, text[a:b], *self._entry(low[a:b]))
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
        """Why ``text[start:end]`` is neutral domain vocabulary here (a protected context), else None."""
        for a, b, p in self._protected_spans(text):
            if start < b and a < end:
                note = f": {p.note}" if p.note else ""
                return f"protected term {p.term!r} in {text[a:b]!r}{note}"
        return None

    def to_span(self, m: LexMatch, agent: str = "bias", ct: CleanText | None = None) -> Span:
        """A shared :class:`~mabpd_kit.types.Span`; pass the :class:`CleanText` to fill raw offsets."""
        orig = ct.to_orig(m.start, m.end) if ct is not None else (None, None)
        return Span(text=m.text, start=m.start, end=m.end, orig_start=orig[0], orig_end=orig[1], category=m.category,
                    taxonomy=m.taxonomy, meta_category=m.meta_category, agent=agent, score=m.band,
                    reason=f"lexicon: {m.term!r} ({m.category}, band {m.band:.2f})", note=m.note)

    def occurrences(self, text: str) -> list[LexMatch]:
        """Every hit of every term, protected contexts removed, overlaps not resolved."""
        low = _lower_same_length(text) if text else ""
        return self._filter_protected(text, low, self._candidates(text, low))

    def independence(self, texts: Sequence[str], labels: Sequence[Any], *, alpha: float = 0.05) -> IndependenceResult:
        """Was this lexicon built independently of a labelled corpus? See :func:`.stats.independence`."""
        from mabpd_kit.lexicon.stats import independence

        return independence(self, texts, labels, alpha=alpha)

    def __len__(self) -> int:
        return len(self.terms)

    def __repr__(self) -> str:
        return (f"Lexicon(version={self.version!r}, terms={len(self.terms)}, categories={len(self.categories)}, "
                f"protected={len(self.protected)})")

    def terms_frame(self) -> pd.DataFrame:
        """One row per term: term, category, taxonomy, meta_category, band, pos, variants, n_forms, note."""
        import pandas as pd

        rows = [{"term": t.term, "category": t.category, "taxonomy": self.categories[t.category].taxonomy,
                 "meta_category": self.categories[t.category].meta_category, "band": t.band, "pos": t.pos,
                 "variants": ", ".join(t.variants), "n_forms": len(t.forms), "note": t.note} for t in self.terms]
        return pd.DataFrame(rows, columns=["term", "category", "taxonomy", "meta_category", "band", "pos",
                                           "variants", "n_forms", "note"])

    def categories_frame(self) -> pd.DataFrame:
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

    def prompt_knowledge(self, max_per_category: int = 3) -> str:
        """The taxonomy with example terms (each category's highest band) for LLM prompts."""
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


def _trimmed(text: str, m: LexMatch) -> LexMatch | None:
    cut = trim(text, m.start, m.end)
    if cut is None:
        return None
    a, b = cut
    if (a, b) == (m.start, m.end):
        return m
    return LexMatch(a, b, text[a:b], m.term, m.category, m.taxonomy, m.meta_category, m.band, m.note)


@lru_cache(maxsize=4)
def _default_lexicon(path: str | None) -> Lexicon:
    return Lexicon.from_json(path or resource_path())


@lru_cache(maxsize=8)
def _lexicon_for(section: LexiconConfig) -> Lexicon:
    if section == Config().lexicon:
        return Lexicon.default()
    return Lexicon.from_json(section.path or resource_path(), config=Config(lexicon=section))

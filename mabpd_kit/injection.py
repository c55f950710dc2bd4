"""Text addressed to the model inside an item (prompt injection), and fencing an item as data.

:func:`find_instructions` finds stretches that speak to the model, from how instructions are addressed (not
from any benchmark's labels): an override, a role tag, a fence tag of our prompts, a vocative, a task
imperative, a meta statement; reported speech is not addressed to the model. Such text never grounds a
verdict (:class:`Instructions`, :func:`addressed`). :func:`fence` is the one fencing function of every method.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass
from itertools import filterfalse

from mabpd_kit import roster

__all__ = ["BLOCKED", "FENCE_TAGS", "TASK_WORDS", "VERDICT_WORDS", "WITHHELD", "Instruction", "Instructions",
           "addressed", "fence", "find_instructions"]

#: Every fence marker our prompts use (MABPD, RADAR), plus the chat-role names a model reads as turns.
FENCE_TAGS: tuple[str, ...] = ("article", "transcript", "claim", "evidence", "debate", "system", "user", "assistant",
                               "developer", "instructions", "instruction", "prompt")
#: Every reason :meth:`Instructions.blocks` gives contains this.
BLOCKED = "instruction-like text addressed to the model"
#: What the prompts show instead of an instruction-like stretch.
WITHHELD = "[instruction-like text withheld]"

_TAG_RE = re.compile(r"<\s*(/?)\s*(" + "|".join(FENCE_TAGS) + r")\b[^<>]{0,80}>", re.IGNORECASE)
_SPECIAL_RE = re.compile(r"<\|\s*([\w.-]{1,30})\s*\|>|<<\s*(/?)\s*SYS\s*>>|\[\s*(/?)\s*INST\s*\]", re.IGNORECASE)

_I = re.IGNORECASE
_NOUN = r"(?:text|sentence|article|passage|input|item|statement|paragraph|content|document|story|claim|excerpt|snippet|piece|headline|news)"
_THIS = rf"(?:this|that|it|the\s+(?:above\s+|following\s+|preceding\s+|previous\s+|whole\s+)?{_NOUN}|this\s+{_NOUN}|that\s+{_NOUN})"
_VERDICT = (r"[\"'“‘]?(?:biased|unbiased|not\s+biased|neutral|partisan|balanced|one-sided|"
            r"true|false|mostly\s+true|mostly\s+false|half-true|misleading|propaganda)\b[\"'”’]?")
#: a verdict word that ends its clause ("label this biased." - not "report false claims")
_VERDICT_END = _VERDICT + r"(?=\s*(?:[.,;:!?)\]\"'”’]|$|(?:and|then|or|with|because|now|immediately|instead)\b))"
_QUOTED = r"[\"'“‘][^\"“”‘’\n]{1,200}?[\"'”’]"
_LABEL_VERBS = (r"(?:re-?label|label|classify|categori[sz]e|tag|flag|mark|rate|score|grade|judge|annotate|treat|"
                r"consider|deem|call|decide|conclude|uphold|verify)")
_OUTPUT_VERBS = r"(?:output|return|answer|respond|reply|print|emit|generate)"
_QUOTE_VERBS = r"(?:quote|cite|highlight|extract)"
#: what a task verb aims at when the model is its addressee
_TASK = (rf"(?:{_LABEL_VERBS}\s+(?:{_THIS}\s+)?(?:as\s+|is\s+|to\s+be\s+)?{_VERDICT_END}"
         rf"|{_OUTPUT_VERBS}\s+(?:(?:with|in|using)\s+)?(?:only\s+|just\s+|exactly\s+|the\s+word\s+|a\s+|valid\s+)*"
         rf"(?:json\b|{_VERDICT_END}|{_QUOTED})"
         rf"|{_QUOTE_VERBS}\s+(?:the\s+(?:words?|phrases?|spans?|text|quote)\s+|as\s+evidence\s+)?{_QUOTED})")
#: a clause opening: text start, sentence or clause punctuation, a line break, a dash or bracket, a quote mark
_OPEN = r"(?:^|(?<=[.!?;:,\n(\[{—–\"“'‘])|(?<=\s-)|(?<=\s--))\s*"
#: words that may come before an imperative aimed at the model
_LEAD = (r"(?:(?:and|then|now|so|also|instead|first|finally|next|just|simply|please|kindly|but|important|"
         r"note|remember|attention)[\s,:!]+)*"
         r"(?:(?:you|u)\s+(?:must|should|shall|will|need\s+to|have\s+to|are\s+to|are\s+(?:required|instructed|"
         r"asked|supposed|expected)\s+to|may\s+only|can\s+only|now)\s+(?:now\s+|only\s+|always\s+)?)?")
#: the MABPD agents' titles as the debate prompts give them ("bias analyst"), from the roster at import
_TITLES = "|".join(r"\s+".join(map(re.escape, s.title.split())) for s in roster.specs())
_MODEL = (r"(?:(?:the|an?|dear|hey|hi|any|all)\s+)?(?:ai|a\.i\.|ai\s+assistant|assistant|chatbot|bot|"
          r"(?:large\s+)?language\s+models?|llms?|model|gpt(?:-?\d\w*)?|chatgpt|claude|gemini|llama|classifier|"
          rf"annotators?|label(?:l)?ers?|grader|(?:{_TITLES})s?|verifier)")
_PRIOR = r"(?:previous|prior|above|earlier|preceding|foregoing|former|original|initial|system)"
_RULES = r"(?:instructions?|prompts?|system\s+prompt|directives?|guidelines?|rules?|commands?|directions|context|text|programming)"
#: a verb after "to" or after a subject of its own is reported or described, not addressed to the model
_REPORTED_RE = re.compile(
    r"(?:\bto|\b(?:he|she|they|we|i|who|which|people|voters|officials|users|workers|drivers|residents|"
    r"[a-z]+s)\s+(?:(?:often|always|never|simply|just|also|would|should|could|will|can|may|might|did|do|does|"
    r"not|to)\s+)*)\s*$", _I)

_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("override", re.compile(
        rf"\b(?:ignore|disregard|forget|override|overrule|bypass|discard)\s+"
        rf"(?:all\s+|any\s+|every\s+|each\s+)?(?:of\s+)?(?:the\s+|your\s+|my\s+|these\s+|those\s+|its\s+)?"
        rf"(?:(?:{_PRIOR})\s+){{1,3}}{_RULES}\b"
        r"|" + _OPEN + _LEAD + r"(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:your|the|these)\s+"
        r"(?:instructions|system\s+prompt|prompt)\b"
        r"|" + _OPEN + _LEAD + r"(?:ignore|disregard|forget)\s+(?:everything|anything|all)\s+(?:above|before|"
        r"previously|you\s+(?:were|have\s+been)\s+told)\b", _I)),
    ("role tag", re.compile(
        r"(?:^|(?<=\n)|(?<=[.!?]\s))[ \t]*[#*\[(]*[ \t]*(?:system|assistant|user|developer|human|instructions?|"
        r"admin|operator)(?:[ \t]+(?:message|prompt|note|override|instructions?))?[ \t]*[\])*]*[ \t]*:"
        r"|(?:^|(?<=\n))[ \t]*#{2,}[ \t]*(?:system|instructions?|response|assistant|user)\b"
        r"|" + _SPECIAL_RE.pattern, _I)),
    ("vocative", re.compile(
        _OPEN + r"(?:(?:note|message|instructions?|attention|reminder)\s+(?:to|for)\s+" + _MODEL + r"\b"
        r"|" + _MODEL + r"\s*[,:]\s*(?:please\s+)?(?:" + _TASK + r"|(?:ignore|disregard|forget)\b))", _I)),
    ("task imperative", re.compile(_OPEN + _LEAD + r"(?:please\s+)?" + _TASK, _I)),
    ("meta statement", re.compile(
        rf"\b(?:this|the)\s+{_NOUN}\s+(?:should|must|shall|is\s+to|needs\s+to|has\s+to|will)\s+be\s+"
        rf"(?:re-?labell?ed|labell?ed|classified|marked|flagged|tagged|rated|scored|judged|categori[sz]ed)\s+(?:as\s+)?{_VERDICT}"
        rf"|\b(?:the\s+)?(?:correct|expected)\s+(?:label|classification|verdict|output)\s+(?:is|=|:)"
        rf"|\b(?:the|this)\s+(?:(?:above|preceding|foregoing)\s+{_NOUN}|{_NOUN}\s+above)\s+(?:is|was|should|must|"
        rf"contains|uses)\b"
        rf"|\byour\s+(?:new|real|actual|true|only|next)\s+(?:task|instructions?)\b"
        rf"|\byour\s+instructions\s+(?:are|:)"
        rf"|\byou\s+are\s+(?:now\s+)?(?:an?\s+|the\s+)?(?:ai|assistant|language\s+model|llm|chatbot|"
        rf"bias\s+(?:analyst|detector|classifier))\b", _I)),
)
_LABEL_WORDS = ("relabel re-label label classify categorize categorise tag flag mark rate score grade judge annotate "
                "treat consider deem call decide conclude uphold verify")
_VERDICT_WORDS = "biased unbiased neutral partisan balanced one-sided true false half-true misleading propaganda json"
_MODEL_WORDS = ("ai assistant chatbot bot language llm llms model models gpt chatgpt claude gemini llama classifier "
                "annotator annotators labeler labelers labeller labellers grader analyst analysts verifier detector "
                + " ".join(f"{w} {w}s" for w in sorted({s.title.split()[-1].lower() for s in roster.specs()})))
#: a pattern runs only when the text has one of its trigger words (speed: most news sentences skip them all)
_TRIGGERS: dict[str, frozenset[str]] = {
    "override": frozenset("ignore disregard forget override overrule bypass discard".split()),
    "role tag": frozenset(),  # characters: see _may_be_role_tag
    "vocative": frozenset(_MODEL_WORDS.split()),
    "task imperative": frozenset((_LABEL_WORDS + " output return answer respond reply print emit generate "
                                  "quote cite highlight extract").split()),
    "meta statement": frozenset(("above preceding foregoing labeled labelled relabeled relabelled classified marked flagged tagged rated scored "
                                 "judged categorized categorised correct expected task instructions instruction "
                                 + _MODEL_WORDS).split()),
}
#: every trigger word of every cue (a text with none of them and no role character skips every pattern)
_ANY_TRIGGER = frozenset().union(*_TRIGGERS.values())
_VERDICT_SET = frozenset(_VERDICT_WORDS.split())
_TOKEN_RE = re.compile(r"[a-z]+(?:-[a-z]+)?")


#: the non-ASCII letters an IGNORECASE regex takes for an ASCII letter (İ and ı for i, ſ for s, Kelvin K for k)
_ASCII_LOOKALIKES = (("İ", "i"), ("ı", "i"), ("ſ", "s"), ("\u212a", "k"))
#: the role-tag forms from their role word on, lower case: a superset of the role-tag pattern on :func:`_folded` text
_ROLE_GATE_RE = re.compile(
    r"(?:system|assistant|user|developer|human|instructions?|admin|operator)"
    r"(?:[ \t]+(?:message|prompt|note|override|instructions?))?[ \t]*[\])*]*[ \t]*:"
    r"|##[ \t]*(?:system|instructions?|response|assistant|user)"
    r"|\[\s*/?\s*inst\s*\]")
#: a word every role-tag form has: most texts have none, ruled out before :data:`_ROLE_GATE_RE`
_ROLE_WORDS = ("system", "assistant", "user", "developer", "human", "inst", "admin", "operator", "response")


def _folded(text: str) -> str:
    """``text`` lower-cased, with the letters an IGNORECASE regex takes for ASCII ones read as them."""
    if not text.isascii():
        for letter, ascii_letter in _ASCII_LOOKALIKES:
            text = text.replace(letter, ascii_letter)
    return text.lower()


def _may_be_role_tag(text: str) -> bool:
    """Can the role-tag pattern match ``text``? A cheap superset of it: "<|", "<<", or "[", ":", "#" and a role word."""
    if "<|" in text or "<<" in text:
        return True
    if not (":" in text or "#" in text or "[" in text):
        return False
    low = _folded(text)
    return any(w in low for w in _ROLE_WORDS) and _ROLE_GATE_RE.search(low) is not None


def _runs(kind: str, text: str, words: AbstractSet[str]) -> bool:
    if kind == "role tag":
        return _may_be_role_tag(text)
    if _TRIGGERS[kind].isdisjoint(words):
        return False
    if kind == "task imperative":  # a task verb aims at a verdict, JSON or a quotation
        return not _VERDICT_SET.isdisjoint(words) or any(q in text for q in "\"'“‘")
    return True


#: the end of an instruction-like clause: sentence end, line end, a closing dash or bracket
_END_RE = re.compile(r"[.!?](?=[\s\"'”’)\]]|$)|\n|\s[—–]|\s--|[)\]]|[—–](?=\s)")
_WORDS_RE = re.compile(r"\w+(?:['-]\w+)*")


def fence(text: str) -> str:
    """``text`` as inert data: fence tags in any case and spacing become ``[/article]``; special tokens too."""
    text = _TAG_RE.sub(lambda m: f"[{m.group(1)}{m.group(2).lower()}]", text)
    return _SPECIAL_RE.sub(_special, text)


def _special(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return f"[|{m.group(1)}|]"
    return f"[{m.group(2) or m.group(3) or ''}{'SYS' if m.group(2) is not None else 'INST'}]"


@dataclass(frozen=True, slots=True)
class Instruction:
    """One instruction-like stretch ``text[start:end]`` and the cue that found it."""

    start: int
    end: int
    kind: str
    text: str


def _norm(s: str) -> str:
    return " ".join(_WORDS_RE.findall(s.casefold().replace("’", "'")))


@dataclass(frozen=True)
class Instructions:
    """The instruction-like stretches of one text (falsy when there is none)."""

    text: str
    found: tuple[Instruction, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.found)

    def __iter__(self):  # type: ignore[no-untyped-def]
        return iter(self.found)

    def __len__(self) -> int:
        return len(self.found)

    @staticmethod
    def from_tokens(text: str, tokens: Iterable[str]) -> Instructions | None:
        """``find_instructions(text, words=words_from_tokens(tokens)) or None`` from the cue scan's runs
        ``[a-z0-9]+(?:[-'][a-z0-9]+)*`` of ``text.lower()``, with find_instructions' early return done first."""
        runs = tokens if isinstance(tokens, set | frozenset) else set(tokens)
        if ("<" not in text and _ANY_TRIGGER.isdisjoint(runs) and not _trigger_in_compound_runs(text, runs)
                and not _may_be_role_tag(text)):
            return None
        return find_instructions(text, words=words_from_tokens(runs)) or None

    def overlapping(self, start: int | None, end: int | None) -> Instruction | None:
        """The stretch ``[start, end)`` overlaps, if any."""
        if start is None or end is None:
            return None
        return next((i for i in self.found if start < i.end and i.start < end), None)

    def naming(self, quote: str) -> Instruction | None:
        """The stretch that itself contains the words of ``quote`` (it names them), if any."""
        q = _norm(quote)
        if not q:
            return None
        return next((i for i in self.found if f" {q} " in f" {_norm(i.text)} "), None)

    def blocks(self, quote: str, start: int | None, end: int | None) -> str | None:
        """Why a quoted span cannot ground a verdict (it lies in, or is named by, text addressed to the model)."""
        if (i := self.overlapping(start, end)) is not None:
            return f"inside {BLOCKED} ({i.kind}): {i.text[:60]!r}"
        if (i := self.naming(quote)) is not None:
            return f"named by {BLOCKED} ({i.kind}): {i.text[:60]!r}"
        return addressed(self.text, start, end)

    def withheld(self) -> str:
        """The text with every instruction-like stretch replaced by :data:`WITHHELD` (what prompts show)."""
        out, pos = [], 0
        for i in self.found:
            out += [self.text[pos:i.start], WITHHELD]
            pos = i.end
        return "".join(out) + self.text[pos:]


def _clause_end(text: str, pos: int) -> int:
    m = _END_RE.search(text, pos)
    if m is None:
        return len(text)
    return m.end() if text[m.start()] in ".!?" else m.start()


def words_from_tokens(tokens: Iterable[str]) -> set[str]:
    """The words :func:`find_instructions` looks for, from the runs of ``text.lower()`` (most runs are a word)."""
    runs = tokens if isinstance(tokens, AbstractSet) else set(tokens)
    out = set(filter(str.isalpha, runs))
    for t in runs - out:
        out.update(_TOKEN_RE.findall(t))
    return out


def _trigger_in_compound_runs(text: str, runs: AbstractSet[str]) -> bool:
    """Is a trigger word among the runs that are not letters only ("gpt-4", "model's")? Those have an apostrophe,
    a hyphen or a digit, which ``str.lower`` makes from no other character (``in`` tests beat a regex)."""
    if not ("'" in text or "-" in text or "0" in text or "1" in text or "2" in text or "3" in text
            or "4" in text or "5" in text or "6" in text or "7" in text or "8" in text or "9" in text):
        return False
    return not _ANY_TRIGGER.isdisjoint(_TOKEN_RE.findall(" ".join(filterfalse(str.isalpha, runs))))


def find_instructions(text: str, *, words: AbstractSet[str] | None = None) -> Instructions:
    """The instruction-like stretches of ``text`` in reading order; ``words``: its words if known."""
    if not isinstance(text, str) or not text:
        return Instructions(text if isinstance(text, str) else "")
    hits: list[tuple[int, int, str]] = []
    for m in _TAG_RE.finditer(text) if "<" in text else ():
        end = m.end()
        if m.group(1):  # a closing fence tag: what follows pretends to be outside the item
            nxt = re.compile(r"<\s*" + re.escape(m.group(2)) + r"\b[^<>]{0,80}>", _I).search(text, end)
            end = nxt.end() if nxt else len(text)
        hits.append((m.start(), end, "fence tag"))
    if words is None:
        words = set(_TOKEN_RE.findall(text.lower()))
    if not hits and _ANY_TRIGGER.isdisjoint(words) and not _runs("role tag", text, words):
        return Instructions(text)  # no trigger word, role character or fence tag: most news sentences
    for kind, pat in _PATTERNS:
        if not _runs(kind, text, words):
            continue
        for m in pat.finditer(text):
            a = m.start() + (len(m.group(0)) - len(m.group(0).lstrip()))
            if m.end() <= a or (kind == "override" and _REPORTED_RE.search(text[max(0, a - 60):a])):
                continue
            if kind == "role tag":  # a turn runs to the end of its line
                line = text.find("\n", m.end())
                end = line if line >= 0 else len(text)
            else:
                end = _clause_end(text, m.end())
            hits.append((a, max(end, m.end()), kind))
    merged: list[list] = []
    for a, b, kind in sorted(hits):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b, kind])
    return Instructions(text, tuple(Instruction(a, b, k, text[a:b]) for a, b, k in merged))


#: the task's vocabulary a planted instruction must name to be obeyed, in seven languages (:func:`addressed`)
TASK_WORDS = frozenset("""bias biased unbiased neutral verdict verdicts label labels labelled labeled classify classification
evidence cite citing cited quote quoting rating rater raters grader graders annotator annotators automated ai llm llms
model models assistant chatbot classifier output json answer respond reply instruction instructions prompt
sesgado sesgada sesgo imparcial veredicto etiqueta etiqueten etiquetar evidencia evidencias cita citar citen cite
clasifica clasificar respuesta responde responda modelo asistente evaluador evaluadores calificador
biaise biaisee partial partiale neutre etiquette preuve preuves citez citer classez reponse repondez modele
correcteur correcteurs evaluateur evaluateurs
voreingenommen tendenzios urteil etikett beweis belege zitiere zitieren zitat antwort antworte modell assistent
bewerter bewertung einstufung einstufen parteiisch
parziale tendenzioso etichetta prova citare risposta valutatore tendencioso viesado veredito evidencia resposta
предвзятый предвзято предвзятая нейтральный нейтрально вердикт метка доказательство цитата цитируй цитировать
ответ модель ассистент оценщик""".split())
#: the verdict values among them (a stretch giving one beside another task word states the task)
VERDICT_WORDS = frozenset("""biased unbiased sesgado sesgada imparcial biaise biaisee partial partiale voreingenommen
tendenzios parteiisch parziale tendenzioso tendencioso viesado предвзятый предвзято предвзятая""".split())
#: look-alike letters read as the Latin letter they imitate (Cyrillic and Greek), for finding task words only
_CONFUSABLE = str.maketrans("асеорхуіјѕԁАВСЕНКМОРТХУІΑΒΕΗΙΚΜΝΟΡΤΧΥΖαεικνορτυχ",
                            "aceopxyijsdABCEHKMOPTXYIABEHIKMNOPTXYZaeikvoptux")
_STRETCH_END = re.compile(r"[.!?](?=\s|$)|[\n;]")
_GROUP = re.compile(r"\{[^{}]{0,400}\}|\([^()]{0,400}\)|\[[^\[\]]{0,400}\]")
_KEYED = re.compile(r"([^\W\d_]{2,})[\"']?\s*[:=]")
_CONTENT = re.compile(r"[^\W\d_]{2,}")


def _folded_text(s: str) -> str:
    """``s`` with look-alike letters read as Latin, compatibility forms and accents folded, in lower case."""
    import unicodedata

    if s.isascii():
        return s.lower()
    f = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", s).translate(_CONFUSABLE))
    return "".join(c for c in f if not unicodedata.combining(c)).casefold()


def _fold(s: str) -> list[str]:
    """The words of ``s`` folded, and where ``s`` is not ASCII also as written (a Russian word is Cyrillic)."""
    words = _CONTENT.findall(_folded_text(s))
    return words if s.isascii() else words + _CONTENT.findall(s.casefold())


def _stretches(text: str) -> list[tuple[int, int, int]]:
    """Sentences, clauses and bracketed groups as ``(start, end, marks)``: 0, no task word; 1, one; 2, a task word
    as a key with its value, a verdict beside another task word, or three task words."""
    cuts = [0] + [m.end() for m in _STRETCH_END.finditer(text) if not _continued(text, m)] + [len(text)]
    spans = [(a, b) for a, b in zip(cuts, cuts[1:]) if b > a] + [m.span() for m in _GROUP.finditer(text)]
    out = []
    for a, b in spans:
        found = TASK_WORDS.intersection(_fold(text[a:b]))
        keyed = found and not TASK_WORDS.isdisjoint(_KEYED.findall(_folded_text(text[a:b]) + " " + text[a:b].casefold()))
        strong = keyed or len(found) >= 3 or (len(found) >= 2 and not VERDICT_WORDS.isdisjoint(found))
        out.append((a, b, 0 if not found else 2 if strong else 1))
    if any(m == 2 for _, _, m in out):  # a text that states the task: its other clauses naming it are part of it
        out = [(a, b, 2 if m else 0) for a, b, m in out]
    return out


def _continued(text: str, m: re.Match[str]) -> bool:
    return m.group() == "\n" and (text[:m.start()].rstrip().endswith(":") or text[m.end():m.end() + 1] in (" ", "\t", "-", "*", "|"))


def addressed(text: str, start: int | None, end: int | None) -> str | None:
    """Why ``text[start:end]`` grounds nothing by the structure of ``text``, else None: it lies in a stretch
    stating the task, its words are in another stretch naming the task, or its own names the task and its
    words occur again elsewhere (a planted instruction must name the words it wants cited)."""
    if start is None or end is None or not text:
        return None
    words = set(_fold(text[start:end]))
    if not words or TASK_WORDS.isdisjoint(_fold(text)):
        return None
    for a, b, marks in _stretches(text):
        if not marks:
            continue
        own = a <= start and end <= b
        if own and marks == 2:
            return f"inside {BLOCKED} (a stretch stating the task): {text[a:b].strip()[:60]!r}"
        if not own and (start < b and a < end):
            continue  # a stretch overlapping the span's: neither its own nor another
        if not own and words <= set(_fold(text[a:b])):
            return f"repeats the words of {BLOCKED} (a stretch naming the task): {text[a:b].strip()[:60]!r}"
        if own and words <= set(_fold(text[:start] + " " + text[end:])):
            return f"inside {BLOCKED} (its words named again elsewhere): {text[a:b].strip()[:60]!r}"
    return None

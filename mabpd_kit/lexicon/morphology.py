"""Morphology: every surface form of a lexicon term, and the keys forms are stored and looked up by."""

from __future__ import annotations

import re

from mabpd_kit.text import normalise_quotes

__all__ = ["FORM_SHAPE", "GAP", "IRREGULAR_NOUNS", "IRREGULAR_VERBS", "SEP_RE", "form_key", "inflections", "lookup_key"]

#: What may separate two words of a phrase in the text.
SEP_RE = r"[\s\-']+"
_SEP = re.compile(SEP_RE)
#: In a phrase, "..." stands for 1 to ``config.lexicon.max_gap_words`` words ("ram ... through").
GAP = " ... "
#: The shape every written form must have: words joined by spaces, hyphens, apostrophes or a gap.
FORM_SHAPE = re.compile(r"\w+(?:(?:[\s\-']+|\s\.\.\.\s)\w+)*")


def form_key(form: str) -> str:
    """The lookup key of a surface form: lower case, hyphens and whitespace runs as one space."""
    return re.sub(r"[\s\-]+", " ", normalise_quotes(form).lower()).strip()


def lookup_key(matched: str) -> str:
    """A matched stretch as it is looked up: any separator run as one space (the regex accepts any)."""
    return _SEP.sub(" ", matched)


_VOWELS = set("aeiou")
#: Verbs whose forms do not follow the rules below (base -> extra forms).
IRREGULAR_VERBS: dict[str, tuple[str, ...]] = {
    "lie": ("lies", "lied", "lying"), "take": ("takes", "took", "taken", "taking"),
    "sneak": ("sneaks", "sneaked", "snuck", "sneaking"), "go": ("goes", "went", "gone", "going"),
    "slay": ("slays", "slew", "slain", "slaying"), "spin": ("spins", "spun", "spinning"),
    "strike": ("strikes", "struck", "stricken", "striking"), "tear": ("tears", "tore", "torn", "tearing"),
    "mislead": ("misleads", "misled", "misleading"), "hide": ("hides", "hid", "hidden", "hiding"),
    "steal": ("steals", "stole", "stolen", "stealing"), "fight": ("fights", "fought", "fighting"),
    "shake": ("shakes", "shook", "shaken", "shaking"), "break": ("breaks", "broke", "broken", "breaking"),
    "bite": ("bites", "bit", "bitten", "biting"), "blow": ("blows", "blew", "blown", "blowing"),
    "throw": ("throws", "threw", "thrown", "throwing"), "sink": ("sinks", "sank", "sunk", "sinking"),
    "swear": ("swears", "swore", "sworn", "swearing"), "sting": ("stings", "stung", "stinging"),
    "fling": ("flings", "flung", "flinging"), "sling": ("slings", "slung", "slinging"),
    "bend": ("bends", "bent", "bending"), "shoot": ("shoots", "shot", "shooting"),
    "feed": ("feeds", "fed", "feeding"), "bleed": ("bleeds", "bled", "bleeding"),
    "flee": ("flees", "fled", "fleeing"), "ride": ("rides", "rode", "ridden", "riding"),
    "run": ("runs", "ran", "running"), "grind": ("grinds", "ground", "grinding"),
    "sweep": ("sweeps", "swept", "sweeping"), "creep": ("creeps", "crept", "creeping"),
    "weep": ("weeps", "wept", "weeping"), "seek": ("seeks", "sought", "seeking"),
    "freeze": ("freezes", "froze", "frozen", "freezing"),
    "forsake": ("forsakes", "forsook", "forsaken", "forsaking"), "undo": ("undoes", "undid", "undone", "undoing"),
    "overthrow": ("overthrows", "overthrew", "overthrown", "overthrowing"),
    "blackmail": ("blackmails", "blackmailed", "blackmailing"), "panic": ("panics", "panicked", "panicking"),
    "mimic": ("mimics", "mimicked", "mimicking"), "admit": ("admits", "admitted", "admitting"),
    "rebut": ("rebuts", "rebutted", "rebutting"), "commit": ("commits", "committed", "committing"),
    "regret": ("regrets", "regretted", "regretting"), "patrol": ("patrols", "patrolled", "patrolling"),
    "compel": ("compels", "compelled", "compelling"), "rebel": ("rebels", "rebelled", "rebelling"),
    "control": ("controls", "controlled", "controlling"), "upset": ("upsets", "upsetting"),
    "beset": ("besets", "besetting"), "outwit": ("outwits", "outwitted", "outwitting"),
    "extol": ("extols", "extolled", "extolling"),
}
#: Nouns with irregular plurals.
IRREGULAR_NOUNS: dict[str, str] = {
    "thief": "thieves", "wolf": "wolves", "life": "lives", "knife": "knives", "crisis": "crises",
    "thesis": "theses", "hypothesis": "hypotheses", "child": "children", "person": "people",
    "analysis": "analyses", "mouse": "mice", "foot": "feet", "tooth": "teeth"}
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
    """All surface forms of ``term`` (lower case, the term first) for a part of speech ``verb+noun+adj``."""
    base = " ".join(term.lower().split())
    words = base.split(" ")
    forms = {base}
    for p in pos.split("+"):
        if p == "verb":
            for f in _verb_forms(words[0]):
                forms.add(" ".join([f, *words[1:]]))
        elif p == "noun":
            forms.add(" ".join([*words[:-1], _plural(words[-1])]))
        elif p == "adj" and len(words) == 1 and words[0].endswith("ist"):
            forms.add(words[0] + "s")  # an -ist adjective is also a noun of persons (leftist -> leftists), no -ly
        elif p == "adj" and len(words) == 1:
            adv = _adverb(words[0])
            if adv:
                forms.add(adv)
    return [base] + sorted(forms - {base})

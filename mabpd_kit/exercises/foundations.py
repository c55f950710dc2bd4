"""Exercises 01, 02 and 04: a lexicon category that generalises, reported speech, quotes, the burden of proof.
The checks also test held-out cases the notebook does not show, so an answer fitted to the visible ones fails."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

CATEGORY = "horse_race_framing"
#: Unseen sentences that report the race, not the proposals: a horse-race category should fire on most.
RACE_HELD_OUT = ("The frontrunner lost ground in the latest polls.",
                 "Once the underdog, the mayor now trails by two points.",
                 "Commentators framed the governor's contest as a horse race.")
#: Unseen election sentences about proposals and procedure: a horse-race term must not fire on them.
POLICY_HELD_OUT = ("The governor released her tax plan before the primary.",
                   "Polls open at seven on election day.",
                   "The senator answered questions about health care at the town hall.")
#: Another locust attack (must be silent) and other uses of 'attack' (must still fire).
LOCUST_HELD_OUT = "Farmers reported a locust attack near the river."
ATTACK_HELD_OUT = ("The minister will attack the budget on Monday.", "Critics attacked the report as misleading.",
                   "The governor launched an attack on her rival.")
_WORD = re.compile(r"[a-z]+")
_STOP = frozenset("a an the of on in at to by for and or but is was were be as with after before from it its "
                  "this that these those their his her they he she".split())


def _race_hits(lexicon: Any, texts: Sequence[str]) -> list[str]:
    return [t for t in texts if any(m.category == CATEGORY for m in lexicon.match(t))]


def check_lexicon(lex: Any, lex2: Any, sentences: Sequence[str]) -> str:
    """Exercise 01: a horse-race category (framing / framing bias) that finds the race in unseen sentences and
    not in policy ones, and a protected phrase (not the bare word) that silences every locust attack."""
    assert lex2 is not lex, "Build a new lexicon with lex.extend(categories=[...], terms=[...], protected=[...])."
    assert CATEGORY in lex2.categories, f"Add a Category with id={CATEGORY!r}."
    cat = lex2.categories[CATEGORY]
    assert (cat.taxonomy, cat.meta_category) == ("framing", "framing bias"), (
        f"{CATEGORY} maps to {cat.taxonomy!r} / {cat.meta_category!r}; use taxonomy 'framing', meta 'framing bias'.")
    mine = [t.term for t in lex2.terms if t.category == CATEGORY]
    assert len(mine) >= 3, f"Add at least three terms to {CATEGORY} (you have {len(mine)})."
    missed = [s for s in sentences[:2] if not _race_hits(lex2, [s])]
    assert not missed, (f"{missed} should signal {CATEGORY}: include terms that occur in them "
                        "(e.g. 'horse race', 'frontrunner', 'underdog').")
    wrong = _race_hits(lex2, POLICY_HELD_OUT)
    assert not wrong, (f"Your terms {mine} fire on election sentences that report no race: {wrong}. A horse-race "
                       "term names the contest ('frontrunner'), not a neutral word of election news ('primary', 'polls').")
    found = _race_hits(lex2, RACE_HELD_OUT)
    assert len(found) >= 2, (
        f"Your terms {mine} find the race in only {len(found)} of {len(RACE_HELD_OUT)} unseen election sentences: they "
        "fit the two sentences shown. Use the framing word itself ('frontrunner', 'underdog', 'horse race'), "
        "not a longer phrase copied from a sentence.")
    assert lex.signal(sentences[2]) is not None and lex2.signal(sentences[2]) is None, (
        "'locust attack' still fires: add a Protected context for the word 'attack' in the phrase 'locust attack'.")
    shipped = {(p.term, p.context) for p in lex.protected}
    yours = [p for p in lex2.protected if (p.term, p.context) not in shipped]
    bare = [p for p in yours if len(p.context.split()) < 2 or p.context.strip().lower() == p.term.strip().lower()]
    assert not bare, (f"{[p.context for p in bare]}: a protected context must be the neutral phrase around the word "
                      "('locust attack'), never the bare word, which would silence every use of it.")
    assert all(p.term.strip().lower() == "attack" for p in yours), (
        f"Protect the word 'attack' (term='attack'), not {[p.term for p in yours if p.term.strip().lower() != 'attack']}: "
        "the term is the word that fires, the context the neutral phrase around it.")
    still = [s for s in (*sentences[3:], *ATTACK_HELD_OUT)
             if not any(m.text.lower().startswith("attack") for m in lex2.match(s))]
    assert not still, (f"Your protected context is too broad: 'attack' no longer fires in {still}. Protect the phrase "
                       "'locust attack', not 'attack on' or the bare word.")
    assert not any(m.text.lower().startswith("attack") for m in lex2.match(LOCUST_HELD_OUT)), (
        f"Your protection silences only the sentence shown: in {LOCUST_HELD_OUT!r} 'attack' still fires. Protect the "
        "short phrase 'locust attack', not a whole sentence.")
    return (f"Correct: {len(found)} of {len(RACE_HELD_OUT)} unseen race sentences found, none of "
            f"{len(POLICY_HELD_OUT)} policy sentences, every locust attack protected and 'attack' still fires elsewhere.")


def _still_biased(sentence: str, flagged: list[str]) -> str:
    """Why the Evidence agent still says biased: only the clauses that apply to this sentence."""
    outside = re.sub(r'"[^"]*"|\u201c[^\u201d]*\u201d', " ", sentence).lower()
    voice = [w for w in flagged if w.lower() in outside]
    vague = re.search(r"\b(critics|some|many|observers|experts|people|sources)\b", outside)
    why = ([f"{', '.join(map(repr, voice))} {'is' if len(voice) == 1 else 'are'} outside the quotes, in the "
            "writer's voice"] if voice else [])
    why += [f"the source '{vague.group(1)}' is unnamed (who?)"] if vague else []
    reason = "; ".join(why) or "the loaded words are the writer's"
    return (f"The Evidence agent still says biased, on {flagged}: {reason}. "
            "Keep every loaded word inside the quotes and name the speaker ('..., the senator said').")


def check_reported_speech(sentence: Any, reports: Any) -> str:
    """Exercise 02-1: loaded words the Bias agent flags, in a quotation attributed to a source, so the Evidence agent
    says neutral. ``reports(text)`` gives the agents' reports."""
    assert isinstance(sentence, str) and sentence.strip(), "Set my_sentence to a sentence of your own."
    got = reports(sentence)
    assert got["bias"].verdict == "biased", (
        "The Bias agent must say biased: use words the lexicon knows as loaded (e.g. 'radical', 'slammed').")
    assert got["evidence"].verdict == "neutral", _still_biased(sentence, [s.text for s in got["evidence"].spans])
    kinds = {s.note for s in got["evidence"].counter_spans}
    assert "attributed quotation" in kinds, (
        f"The Evidence agent found no attributed quotation (it found {sorted(kinds) or 'no grounding'}): "
        "put the words in double quotes next to a speech verb such as 'said'.")
    outside = re.sub(r'"[^"]*"|\u201c[^\u201d]*\u201d', " ", sentence)
    assert len(_WORD.findall(outside.lower())) >= 2, (
        "Nothing outside the quotation says who is speaking: a quotation alone is a scare quote, not reported "
        "speech. Name the source and a speech verb outside the quotes ('..., the senator said').")
    writer = re.sub(r'["\u201c\u201d]', "", sentence)
    assert reports(writer)["evidence"].verdict == "biased", (
        f"Without the quote marks ({writer!r}) the Evidence agent still says neutral, so the quotation is not what "
        "made it neutral: keep the loaded words and put them in a source's mouth.")
    return ("Correct: the words are loaded, but they are a source's words, not the writer's; without the quote marks "
            "the Evidence agent calls the same words biased.")


def _same_words(text: str, quotes: Sequence[str], config: Any) -> str:
    """Why the store kept fewer than three spans: two quotes point at the same words of ``text``."""
    from mabpd_kit.mabpd import EvidenceStore
    from mabpd_kit.types import Span
    one = [EvidenceStore.build(text, [Span(text=q, agent="bias")], ratio=config.text.fuzzy_ratio).spans[0] for q in quotes]
    where = [(sp.start, sp.end, sp.reason) for sp in one]
    i, j = next(((i, j) for i in range(3) for j in range(i + 1, 3) if where[i] == where[j]), (0, 1))
    return (f"Quotes {i + 1} and {j + 1} ({quotes[i]!r}, {quotes[j]!r}) find the same words of TEXT the same way "
            f"({one[j].reason}): both find {one[j].text!r} (case, spacing and hyphens are typography), so the store keeps "
            "them as one span. Each quote "
            "needs its own passage (quote 2: other words, typed differently, e.g. a hyphen left out).")


def check_quotes(text: str, quotes: Sequence[Any], config: Any) -> str:
    """Exercise 02-2: one exact quote, one found only up to typography, one paraphrase of the text (invalid)."""
    assert isinstance(quotes, (list, tuple)) and len(quotes) == 3 and all(isinstance(q, str) and q.strip()
                                                                           for q in quotes), "Write three non-empty quotes."
    from mabpd_kit.mabpd import EvidenceStore
    from mabpd_kit.types import Span
    spans = EvidenceStore.build(text, [Span(text=q, agent="bias") for q in quotes], ratio=config.text.fuzzy_ratio).spans
    assert len(spans) == 3, _same_words(text, quotes, config)
    got = [s.reason if s.valid else "invalid" for s in spans]
    why = [f"{s.reason}" for s in spans]
    assert got[0] == "exact", (f"Quote 1 should match exactly, it was {got[0]!r} ({why[0]}): copy a stretch of TEXT "
                               "word for word, longer than a name and shorter than the whole sentence.")
    assert got[1] == "fuzzy", (f"Quote 2 should be found only fuzzily, it was {got[1]!r}: the same words typed "
                               "differently (leave out a hyphen); a changed letter makes a word the text does not have.")
    assert got[2] == "invalid", f"Quote 3 should be invalid, it was {got[2]!r}: reword it so it is no longer in the text."
    own = {w for w in _WORD.findall(text.lower()) if w not in _STOP}
    said = {w for w in _WORD.findall(quotes[2].lower()) if w not in _STOP}
    assert own & said, (f"Quote 3 {quotes[2]!r} shares no content word with TEXT ('the', 'a', 'of' ... do not "
                        "count): that is not a paraphrase of it. Reword a part "
                        "of TEXT (keep a word or two of it) the way an LLM paraphrases evidence.")
    return "Correct: " + ", ".join(f"{i} {g} ({q!r})" for i, (q, g) in enumerate(zip(quotes, got), 1)) + "."


def check_burden_flip(arguments: Any, debate_of: Any) -> str:
    """Exercise 04-1: one argument per agent (at least one neutral), neutral with evidence weighting and biased
    without."""
    assert isinstance(arguments, (list, tuple)) and sorted(getattr(a, "agent", None) for a in arguments) == [
        "bias", "evidence", "framing"], "Give exactly one argument per agent: bias, evidence and framing."
    assert any(a.verdict == "neutral" for a in arguments), (
        "Every argument says biased: with weighting on nothing counts (B = N = 0) and the vote is neutral by default, "
        "not by the burden of proof. Let at least one agent argue neutral.")
    on, off = debate_of(list(arguments), True).vote, debate_of(list(arguments), False).vote
    assert off.label == "biased", (
        f"Without evidence weighting the vote is {off.label} (B={off.B:.3f}, N={off.N:.3f}): "
        "the biased side needs enough confidence and role weight to win when every argument counts fully.")
    assert on.label == "neutral", (
        f"With evidence weighting the vote is still biased (B={on.B:.3f}, N={on.N:.3f}): "
        "the biased arguments must cite quotes that are not in EX_TEXT, so that their f = q drops.")
    return f"Correct: weighting on -> neutral (B={on.B:.3f}), off -> biased (B={off.B:.3f}). The burden of proof decided."


def _quotes(a: Any) -> list[str]:
    return [s.text for s in a.spans]


def check_grounded(grounded: Any, arguments: Any, debate_of: Any) -> str:
    """Exercise 04-2: only the biased arguments' quotes changed, and the vote biased with evidence weighting on."""
    assert isinstance(grounded, (list, tuple)) and len(grounded) == 3, "Give three arguments, one per agent."
    key = lambda args: sorted((a.agent, a.verdict, a.confidence) for a in args)   # noqa: E731
    assert key(grounded) == key(arguments), (
        "Change only the quotes: keep every agent's verdict and confidence from my_arguments.")
    before = {a.agent: a for a in arguments}
    moved = [a.agent for a in grounded if a.verdict == "neutral" and _quotes(a) != _quotes(before[a.agent])]
    assert not moved, (f"You changed the quotes of the neutral argument(s) {moved}: weakening the other side is not "
                       "grounding. Keep them and change only the biased argument's quotes.")
    vote = debate_of(list(grounded), True).vote
    bad = [f"{sp.text!r}: {sp.reason}" for a in grounded if a.verdict == "biased" for sp in a.spans if not sp.valid]
    spans = [sp for a in grounded if a.verdict == "biased" for sp in a.spans]
    valid = sum(sp.valid for sp in spans)
    assert not bad, (
        f"Not every quote of the biased argument is in EX_TEXT (q = {valid} of {len(spans)} valid): {'; '.join(bad)}. "
        f"The exercise asks for q = 1; the vote is {vote.label} here (B={vote.B:.3f}, N={vote.N:.3f}), "
        + ("but partly grounded evidence is not grounding." if valid else "and a claim with no valid quote is not grounded."))
    assert vote.label == "biased", (
        f"With evidence weighting the vote is {vote.label} (B={vote.B:.3f}, N={vote.N:.3f}): every quote of the biased "
        "argument(s) must be valid evidence in EX_TEXT.")
    return f"Correct: same verdicts and confidences, real quotes -> biased (B={vote.B:.3f}, N={vote.N:.3f})."

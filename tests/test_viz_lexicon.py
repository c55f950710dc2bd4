"""The lexicon construction control of notebook 01: one edit, its effect, and edits that are refused."""

from __future__ import annotations

import pytest

import mabpd_kit as mk
from mabpd_kit.viz import lexicon as vl


@pytest.fixture(scope="module")
def lex():
    return mk.Lexicon.default()


def test_edit_adds_a_term_and_protects_a_phrase(lex):
    new, notes = vl.edit_lexicon(lex, "Disaster", "hyperbole", 0.7, "noun", "disaster relief")
    assert new is not lex and new.signal("The plan is a disaster.").term == "disaster"
    assert new.signal("Disaster relief teams arrived.") is None, "the protected phrase silences the term"
    assert lex.signal("The plan is a disaster.") is None, "the shipped lexicon is unchanged"
    assert any("added 'disaster'" in n for n in notes) and any("protected 'disaster'" in n for n in notes)


@pytest.mark.parametrize(("args", "said"), [
    (("attack", "attack_verbs", 0.7, "verb", ""), "already in the lexicon"),
    (("", "attack_verbs", 0.7, "verb", "attack"), "protecting the bare word would silence it everywhere"),
    (("", "attack_verbs", 0.7, "verb", "heart attack"), "already a protected context"),
    (("", "attack_verbs", 0.7, "verb", "quiet afternoon"), "nothing to protect"),
    (("zzzword", "no_such_category", 0.7, "noun", ""), "unknown category"),
    (("zzzword", "hyperbole", 0.65, "noun", ""), "band 0.65 not one of"),
])
def test_refused_edits_say_why_and_change_nothing(lex, args, said):
    new, notes = vl.edit_lexicon(lex, *args)
    assert any(said in n for n in notes), notes
    assert len(new.terms) == len(lex.terms) and len(new.protected) == len(lex.protected)


def test_effect_and_panel_redraw(lex):
    dev = mk.data.samples().text.tolist()
    html, caption = vl.lexicon_effect(lex, dev_texts=dev, dev_name="teaching samples")
    assert ("Flag rate on the teaching samples (28 sentences, hits above 0.45; one sentence = 3.6 points, "
            "an illustration): 39.3% -> 42.9%") in caption
    assert "1 newly flagged, 0 no longer" in caption
    assert html.data.count('class="mabpd-chart"') == 2 and 'alt="' in html.data and "mabpd-spans" in html.data
    panel = mk.widgets.lexicon_panel(lex, dev_texts=dev, dev_name="teaching samples")
    assert panel.error is None and list(panel.controls)[:2] == ["term", "category"]
    before = panel.caption
    panel.set(category="attack_verbs")
    assert panel.error is None and panel.caption != before and "(attack_verbs, band 0.60" in panel.caption
    panel.set(term="", protect="")
    assert panel.caption.startswith("no change") and "unchanged" in panel.caption
    panel.set(floor=0.75)  # the floor control: only 0.80 and 0.90 hits count, the rate falls visibly
    assert "hits above 0.75" in panel.caption and "raising the floor from 0.45 to 0.75 alone moves" in panel.caption
    shipped = vl.flag_rate(lex, dev)
    assert vl.flag_rate(lex, dev, floor=0.75) < shipped - 0.1, "a higher floor flags clearly fewer sentences"


def test_panel_starts_with_an_edit_that_moves_the_rate_and_refuses_nonsense_forms(lex):
    dev = mk.data.samples().text.tolist() + list(vl.TRY_SENTENCES)
    panel = mk.widgets.lexicon_panel(lex, dev_texts=dev, dev_name="dev")
    assert panel.error is None and "added 'even'" in panel.caption and "protected 'even' inside 'even if'" in panel.caption
    assert "1 newly flagged" in panel.caption, panel.caption  # "Even the mayor's allies ..."; "even if" stays protected
    new, notes = vl.edit_lexicon(lex, "said", "attack_verbs", 0.7, "verb", "")
    forms = next(t.forms for t in new.terms if t.term == "said")
    assert list(forms) == ["said"] and "looks like an inflected form" in notes[0], (forms, notes)
    need = vl.edit_lexicon(lex, "heed", "attack_verbs", 0.7, "verb", "")[0]
    assert "heeded" in next(t.forms for t in need.terms if t.term == "heed"), "a base form ending in -eed is a base form"

"""Bias lexicon: seeds and builder, inflections, matcher, protected terms, signal, CLI."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from mabpd_kit.config import Config
from mabpd_kit.lexicon import (
    META_CATEGORIES,
    TAXONOMY_TYPES,
    Category,
    Lexicon,
    Protected,
    Term,
    build,
    build_bytes,
    inflections,
    resource_path,
    seeds_dir,
)
from mabpd_kit.text import clean


@pytest.fixture(scope="module")
def lex() -> Lexicon:
    return Lexicon.default()


def _cat(id_: str, taxonomy: str = "loaded language") -> Category:
    meta = {"loaded language": "biased language", "political labeling": "biased language",
            "framing": "framing bias", "exaggeration": "unsupported claims"}[taxonomy]
    return Category(id=id_, name=id_, taxonomy=taxonomy, meta_category=meta)


# -- the shipped resource ----------------------------------------------------------------------


def test_shipped_json_is_exactly_a_fresh_build_of_the_seeds():
    assert resource_path().read_bytes() == build_bytes(seeds_dir()), "run `mabpd lexicon build`"


def test_building_twice_gives_identical_bytes_and_a_valid_checksum():
    a, b = build_bytes(), build_bytes()
    assert a == b
    data = json.loads(a)
    assert data["checksum"].startswith("sha256:") and data["version"]
    Lexicon(data)  # verifies the checksum


def test_a_hand_edited_resource_is_rejected():
    data = build()
    data["terms"][0]["band"] = 0.6 if data["terms"][0]["band"] != 0.6 else 0.7
    with pytest.raises(ValueError, match="checksum"):
        Lexicon(data)


def test_size_and_taxonomy_requirements(lex):
    assert len(lex.categories) >= 26
    assert len(lex.terms) >= 800
    assert {c.taxonomy for c in lex.categories.values()} == set(TAXONOMY_TYPES)
    assert {c.meta_category for c in lex.categories.values()} == set(META_CATEGORIES)
    bands = set(Config().lexicon.bands)
    for t in lex.terms:
        assert t.category in lex.categories
        assert t.band in bands, t
        assert t.note.strip(), t
        assert t.forms and t.forms[0], t
    per_cat = lex.categories_frame().set_index("category")["n_terms"]
    assert (per_cat > 0).all()
    assert per_cat.sum() == len(lex.terms) == len(lex.terms_frame())


def test_taxonomy_mapping_is_the_spec_one(lex):
    mapping = lex.data["taxonomy"]
    for kind in ("loaded language", "emotional language", "political labeling"):
        assert mapping[kind] == "biased language"
    assert mapping["framing"] == "framing bias"
    assert mapping["exaggeration"] == "unsupported claims"
    assert mapping["selection"] == mapping["omission"] == "selective presentation"


# -- seeds validation --------------------------------------------------------------------------


def _copy_seeds(tmp_path: Path) -> Path:
    d = tmp_path / "seeds"
    shutil.copytree(seeds_dir(), d)
    return d


def test_builder_rejects_duplicates_bad_bands_and_missing_notes(tmp_path):
    d = _copy_seeds(tmp_path)
    extra = d / "categories" / "zz_extra.toml"
    head = '[category]\nid = "zz_extra"\nname = "x"\ntaxonomy = "framing"\n\n'
    extra.write_text(head + '[[group]]\nband = 0.8\nnote = "n"\nterms = ["so-called"]\n')
    with pytest.raises(ValueError, match="appears twice"):
        build(d)
    extra.write_text(head + '[[group]]\nband = 0.75\nnote = "n"\nterms = ["brand new term"]\n')
    with pytest.raises(ValueError, match="band 0.75"):
        build(d)
    extra.write_text(head + '[[group]]\nband = 0.8\nterms = ["brand new term"]\n')
    with pytest.raises(ValueError, match="teaching note"):
        build(d)
    extra.write_text(head.replace("framing", "spin") + '[[group]]\nband = 0.8\nnote = "n"\nterms = ["x"]\n')
    with pytest.raises(ValueError, match="taxonomy"):
        build(d)


def test_seed_edits_change_the_build(tmp_path):
    d = _copy_seeds(tmp_path)
    before = build_bytes(d)
    (d / "categories" / "zz_extra.toml").write_text(
        '[category]\nid = "zz_extra"\nname = "x"\ntaxonomy = "framing"\n\n'
        '[[group]]\nband = 0.9\npos = "verb"\nnote = "n"\nterms = ["befuddle"]\n'
    )
    after = build_bytes(d)
    assert after != before
    lx = Lexicon(json.loads(after))
    assert [m.term for m in lx.match("He befuddled them.")] == ["befuddle"]


# -- inflections -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "term, pos, expected",
    [
        ("slam", "verb", {"slams", "slammed", "slamming"}),          # doubled consonant
        ("berate", "verb", {"berates", "berated", "berating"}),      # silent e
        ("bully", "verb", {"bullies", "bullied", "bullying"}),       # y -> ied
        ("panic", "verb", {"panics", "panicked", "panicking"}),      # irregular: c -> ck
        ("lie", "verb", {"lies", "lied", "lying"}),                  # irregular: ie -> ying
        ("spin", "verb", {"spins", "spun", "spinning"}),             # irregular past
        ("rant", "verb", {"rants", "ranted", "ranting"}),            # no doubling
        ("ram through", "verb", {"rams through", "rammed through", "ramming through"}),  # first word
        ("thug", "noun", {"thugs"}),
        ("union thug", "noun", {"union thugs"}),                     # last word
        ("crisis", "noun", {"crises"}),
        ("strongman", "noun", {"strongmen"}),
        ("horrific", "adj", {"horrifically"}),
        ("terrible", "adj", {"terribly"}),
        ("angry", "adj", {"angrily"}),
        ("outrageous", "adj", {"outrageously"}),
        ("so-called", "fixed", set()),
        ("take ... to task", "verb",
         {"takes ... to task", "took ... to task", "taken ... to task", "taking ... to task"}),
        ("smear", "noun+verb", {"smears", "smeared", "smearing"}),
    ],
)
def test_inflections(term, pos, expected):
    forms = inflections(term, pos)
    assert forms[0] == term
    assert set(forms[1:]) == expected


# -- matching ----------------------------------------------------------------------------------


def test_matching_is_case_insensitive_whole_word_and_inflected(lex):
    ms = lex.match("Critics SLAMMED the plan, then kept slamming it.")
    assert [(m.text, m.term) for m in ms if m.term == "slam"] == [("SLAMMED", "slam"), ("slamming", "slam")]
    assert lex.match("The slammer and thuggery are not whole-word hits.") == []
    m = lex.match("The regime's thugs.")
    assert [(x.text, x.term) for x in m] == [("regime", "regime"), ("thugs", "thug")]


def test_offsets_point_into_the_text(lex):
    text = "Outrageously, the far-left mob tore into the so-called reform."
    for m in lex.match(text):
        assert text[m.start:m.end] == m.text
    assert [m.term for m in lex.match(text)][:2] == ["outrageous", "far-left"]


def test_multi_word_phrases_tolerate_hyphens_spaces_and_line_breaks(lex):
    for text in ("a far left group", "a far-left group", "a far -\n left group"):
        assert [m.term for m in lex.match(text)] == ["far-left"], text
    assert [m.term for m in lex.match("They rammed it through on Friday.")] == ["rammed it through"]
    assert [m.term for m in lex.match("It remains to be seen.")] == ["it remains to be seen"]


def test_gapped_phrases_match_a_few_words_in_the_middle(lex):
    ms = lex.match("The mayor rammed the zoning overhaul through the council.")
    assert [(m.text, m.term, m.band) for m in ms] == [("rammed the zoning overhaul through", "ram ... through", 0.9)]
    assert [m.term for m in lex.match("She took the senator to task.")] == ["take ... to task"]
    # the gap is words only (punctuation ends it) and at most config.lexicon.max_gap_words long
    assert lex.match("He rammed the car. Through the gate he went.") == []
    assert lex.match("They rammed one two three four five through.") == []
    wide = Lexicon.from_json(resource_path(), config=Config().replace(**{"lexicon.max_gap_words": 6}))
    assert [m.term for m in wide.match("They rammed one two three four five through.")] == ["ram ... through"]


def test_typographic_apostrophes_match(lex):
    assert [m.term for m in lex.match("It\u2019s no coincidence.")] == ["it's no coincidence"]


def test_overlaps_resolve_to_the_highest_band():
    lx = Lexicon.from_entries(
        [_cat("a"), _cat("b", "political labeling")],
        [
            Term(term="radical", category="a", band=0.6, note="n"),
            Term(term="radical left", category="b", band=0.8, note="n"),
            Term(term="left wing", category="b", band=0.9, note="n"),
        ],
    )
    ms = lx.match("the radical left wing")
    # "radical left" (0.8) and "left wing" (0.9) overlap: the 0.9 wins, then "radical" fits beside it.
    assert [(m.text, m.band) for m in ms] == [("radical", 0.6), ("left wing", 0.9)]
    assert [(m.text, m.band) for m in lx.match("the radical left")] == [("radical left", 0.8)]


def test_neutral_sentences_have_no_signal(lex):
    for text in (
        "The city council approved the budget on Tuesday by a vote of 7 to 2.",
        "Officials said the bridge will reopen next month after repairs.",
        "The company reported quarterly revenue of $4.2 billion.",
    ):
        assert lex.signal(text) is None, [m.term for m in lex.match(text)]


def test_signal_is_the_highest_band_match_above_the_floor(lex):
    text = "Critics say the so-called reform is a power grab by thugs."
    sig = lex.signal(text)
    assert sig is not None and sig.band == max(m.band for m in lex.match(text)) == 0.9
    strict = Lexicon.from_json(resource_path(), config=Config().replace(**{"lexicon.confidence_floor": 0.85}))
    assert strict.signal("Critics say the so-called reform failed.") is None  # 0.70 and 0.80 only
    assert strict.signal(text).band == 0.9


# -- protected terms ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    "neutral, loaded",
    [
        ("He had a heart attack on Monday.", "They attacked the plan on Monday."),
        ("Fines for illegal parking rose.", "Illegal aliens crossed, he said."),
        ("Free radicals damage cells.", "A radical plan, he said."),
        ("The new tax regime starts in May.", "The regime starts in May."),
        ("Call the crisis hotline.", "It is a crisis, he said."),
        ("The car slammed into a tree.", "The senator slammed the bill."),
        ("The Chinese Communist Party met.", "A communist plot, he said."),
    ],
)
def test_protected_contexts_never_match(lex, neutral, loaded):
    assert lex.signal(neutral) is None, [m.term for m in lex.match(neutral)]
    assert lex.signal(loaded) is not None


def test_protected_reason_explains_the_context(lex):
    text = "The treatment regimes differ."
    a = text.index("regimes")
    reason = lex.protected_reason(text, a, a + len("regime"))
    assert reason is not None and "treatment regimes" in reason
    assert lex.protected_reason("The regime fell.", 4, 10) is None


def test_extend_adds_a_category_and_a_protected_term(lex):
    assert lex.signal("They called it a nothingburger.") is None
    cat = Category(id="dismissive_slang", name="Dismissive slang", taxonomy="loaded language",
                   meta_category="biased language")
    lx2 = lex.extend(categories=[cat], terms=[Term(term="nothingburger", category="dismissive_slang", band=0.8,
                                                   pos="noun", note="Waves a story away.")])
    assert lx2.signal("They called it a nothingburger.").category == "dismissive_slang"
    assert lx2.signal("Two nothingburgers.").term == "nothingburger"
    assert lx2.version.endswith("+local") and len(lx2.terms) == len(lex.terms) + 1
    lx3 = lx2.extend(protected=[Protected(term="nothingburger", context="nothingburger sandwich", note="A snack.")])
    assert lx3.signal("I ate a nothingburger sandwich.") is None
    assert lx3.signal("It was a nothingburger.") is not None
    assert lex.signal("They called it a nothingburger.") is None  # the original is unchanged


def test_to_span_carries_offsets_category_and_band(lex):
    ct = clean("<b>Senators</b> slammed the&nbsp;bill.")
    m = lex.signal(ct.text)
    span = lex.to_span(m, agent="bias", ct=ct)
    assert (span.text, span.category, span.taxonomy, span.score) == ("slammed", "attack_verbs", "loaded language", 0.8)
    assert ct.raw[span.orig_start:span.orig_end] == "slammed"
    assert span.meta_category == "biased language" and span.note


def test_prompt_knowledge_lists_every_category(lex):
    text = lex.prompt_knowledge(max_per_category=2)
    for cid in lex.categories:
        assert f"- {cid} (" in text
    assert "heart attack" in text or "Neutral domain uses" in text


def test_empty_and_odd_inputs(lex):
    assert lex.match("") == [] and lex.signal("") is None
    assert lex.match("İstanbul radical") and lex.match("İstanbul radical")[0].text == "radical"


# -- CLI ---------------------------------------------------------------------------------------


def test_cli_check_build_and_match(tmp_path, capsys):
    from mabpd_kit.cli import main

    assert main(["lexicon", "check"]) == 0
    out = tmp_path / "lex.json"
    assert main(["lexicon", "build", "--out", str(out)]) == 0
    assert out.read_bytes() == resource_path().read_bytes()
    out.write_text(out.read_text().replace('"version": "', '"version": "x'))
    assert main(["lexicon", "check", "--json", str(out)]) == 1
    capsys.readouterr()
    assert main(["lexicon", "match", "They", "slammed", "the", "thugs"]) == 0
    printed = capsys.readouterr().out
    assert "attack_verbs" in printed and "signal: 'thug' (pejorative_labels, 0.90)" in printed


def test_trim_grows_a_part_of_a_compound_and_drops_a_denied_one():
    from mabpd_kit.lexicon.boundaries import trim

    assert trim("x-mob", 2, 5) == (0, 5) and trim("mob", 0, 3) == (0, 3) and trim("radical-free", 0, 7) is None

"""Text layer: cleaning with an offset map, sentences, span validation, truncation."""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mabpd_kit.text import clean, normalise_quotes, split_sentences, truncate_words, validate_span

# -- cleaning ----------------------------------------------------------------------------------

_TAG = re.compile(r"<[^>]*>")


def _decode_fully(piece: str) -> str:
    """What a raw stretch should read as: tags dropped, entities decoded until stable, quotes ASCII."""
    piece = _TAG.sub(" ", piece)
    for _ in range(5):
        nxt = html.unescape(piece)
        if nxt == piece:
            break
        piece = nxt
    return normalise_quotes(piece)


words = st.text(alphabet="abcdefghijklmnopqrstuvwxyzABCDEFGHIJ0123456789.,!?'-é", min_size=1, max_size=8)
fragments = st.one_of(
    words,
    st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "\r\n\r\n"]),
    st.sampled_from(["<p>", "</p>", "<b>", "</b>", "<br/>", '<a href="x.html">', "</a>", "<div class='c'>", "</div>"]),
    st.sampled_from(["&amp;", "&lt;", "&gt;", "&quot;", "&#39;", "&#x27;", "&nbsp;", "&amp;quot;", "&amp;amp;lt;",
                     "&eacute;", "&#8220;", "&#8221;", "&hellip;"]),
    st.sampled_from(["\u201c", "\u201d", "\u2018", "\u2019"]),
)


@settings(max_examples=120, deadline=None)
@given(st.lists(fragments, min_size=0, max_size=40))
def test_every_cleaned_char_maps_back_to_the_raw_text_it_came_from(parts):
    raw = "".join(parts)
    ct = clean(raw)
    assert len(ct.src_start) == len(ct.text) == len(ct.src_end)
    assert ct.text == ct.text.strip()
    prev = 0
    for i, ch in enumerate(ct.text):
        a, b = ct.src_start[i], ct.src_end[i]
        assert 0 <= a < b <= len(raw)
        assert a >= prev, "offsets must not go backwards"
        prev = a
        source = _decode_fully(raw[a:b])
        if ch in " \n":
            assert source.strip() == "", f"space at {i} came from {raw[a:b]!r}"
        else:
            assert ch in source, f"{ch!r} at {i} came from {raw[a:b]!r}"
    # No markup survives
    assert "<p>" not in ct.text and "&amp;" not in ct.text


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["alpha", "beta", "<i>", "</i>", "&amp;", " ", "\n\n", "gamma"]), max_size=30))
def test_words_round_trip_through_to_orig(parts):
    raw = " ".join(parts)
    ct = clean(raw)
    for m in re.finditer(r"alpha|beta|gamma", ct.text):
        a, b = ct.to_orig(m.start(), m.end())
        assert raw[a:b] == m.group()


def test_html_entities_quotes_and_offsets():
    raw = "<p>Senators &ldquo;slammed&rdquo; the&nbsp;bill &amp; more</p>"
    ct = clean(raw)
    assert ct.text == 'Senators "slammed" the bill & more'
    assert ct.flags == ["html"]
    s = ct.text.index("slammed")
    a, b = ct.to_orig(s, s + len("slammed"))
    assert raw[a:b] == "slammed"
    a, b = ct.to_orig(s - 1, s)  # the opening quote maps to the whole entity
    assert raw[a:b] == "&ldquo;"


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("&amp;quot;loaded&amp;quot;", '"loaded"'),
        ("Fish &amp;amp; Chips", "Fish & Chips"),
        ("&amp;amp;lt;tag&amp;amp;gt;", "<tag>"),
        ("it&amp;#39;s", "it's"),
        ("&unknownentity; stays", "&unknownentity; stays"),
    ],
)
def test_double_escaped_entities(raw, expected):
    assert clean(raw).text == expected


def test_script_style_and_comments_are_dropped():
    ct = clean("<style>p{color:red}</style>Hello<!-- hidden --> <script>alert('x')</script>world")
    assert ct.text == "Hello world"


def test_block_tags_become_line_breaks_and_inline_tags_do_not_glue_words():
    assert clean("<p>One.</p><p>Two.</p>").text == "One.\nTwo."
    assert clean("bold<b>face</b>").text == "bold face"


def test_wrong_encodings_are_repaired_and_flagged():
    ct = clean("The \u201cbill\u201d".encode("cp1252"))
    assert ct.text == 'The "bill"' and "encoding" in ct.flags
    ct = clean("caf\u00e9".encode("utf-8"))
    assert ct.text == "caf\u00e9" and ct.flags == []
    moji = "It\u00e2\u20ac\u2122s a caf\u00c3\u00a9"  # UTF-8 read as Windows-1252
    ct = clean(moji)
    assert ct.text == "It's a caf\u00e9" and "encoding" in ct.flags
    a, b = ct.to_orig(2, 3)
    assert moji[a:b] == "\u00e2\u20ac\u2122"
    ct = clean(b"\x81\x8d bytes cp1252 cannot decode")  # falls back to Latin-1, never raises
    assert "encoding" in ct.flags and ct.text.endswith("bytes cp1252 cannot decode")


@pytest.mark.parametrize("raw", [None, float("nan"), "", "   \n\t ", "<p></p>", "&nbsp;"])
def test_empty_and_non_text_inputs_are_flagged_not_raised(raw):
    ct = clean(raw)
    assert ct.text == "" and "empty" in ct.flags
    assert ct.to_orig(0, 0) == (len(ct.raw), len(ct.raw))


def test_non_string_input_is_flagged():
    ct = clean(12345)
    assert ct.text == "12345" and "not_text" in ct.flags


def test_huge_text_is_cut_and_flagged():
    ct = clean("word " * 1000, max_chars=1000)
    assert "too_long" in ct.flags and len(ct.raw) == 1000 and len(ct.text) <= 1000
    ct = clean("x" * 300_000)  # default Config().text.max_chars = 200_000
    assert "too_long" in ct.flags and len(ct.text) == 200_000


def test_control_and_zero_width_characters_are_dropped():
    assert clean("a\u200bb\x00c\ufeffd").text == "abcd"


def test_to_orig_rejects_spans_outside_the_text():
    ct = clean("short")
    with pytest.raises(ValueError):
        ct.to_orig(2, 99)


# -- sentences ---------------------------------------------------------------------------------


def test_split_sentences_handles_abbreviations_quotes_and_numbers():
    text = ('Sen. J. Smith said the U.S. economy grew 3.5 percent. "It is a disaster!" he said. '
            "Critics disagreed? Yes.\n\nNew paragraph")
    spans = split_sentences(text)
    got = [text[a:b] for a, b in spans]
    assert got == [
        "Sen. J. Smith said the U.S. economy grew 3.5 percent.",
        '"It is a disaster!" he said.',
        "Critics disagreed?",
        "Yes.",
        "New paragraph",
    ]


def test_split_sentences_on_empty_and_unterminated_text():
    assert split_sentences("") == []
    assert split_sentences("   ") == []
    assert split_sentences("no end mark") == [(0, 11)]


# -- span validation ---------------------------------------------------------------------------

TEXT = "The  senator \u201cslammed\u201d the Reform bill on Monday."


def test_exact_after_normalisation_returns_offsets_in_the_original_text():
    chk = validate_span('"SLAMMED" the reform', TEXT)
    assert chk.valid and chk.method == "exact" and chk.score == 1.0
    assert TEXT[chk.start:chk.end] == "slammed\u201d the Reform"
    chk = validate_span("the senator", TEXT)  # whitespace run in the text
    assert chk.valid and chk.method == "exact" and TEXT[chk.start:chk.end] == "The  senator"


@pytest.mark.parametrize(
    "quote, text, found",
    [
        ("long term average", "Rainfall was close to the long-term average.", "long-term average"),  # hyphen
        ("the long\u2013term average", "Rainfall was close to the long-term average.", "the long-term average"),  # dash
        ("Senators slammed the bill", 'Senators "slammed" the bill', 'Senators "slammed" the bill'),  # quote marks
        ("caf\u00e9 owners", "The cafe owners met.", "cafe owners"),  # an accent
        ("\uff53\uff4c\uff41\uff4d\uff4d\uff45\uff44", "They slammed it.", "slammed"),  # full-width letters
        ("the plan the senator said", "It slammed the plan, the senator said.", "the plan, the senator said"),
    ],
)
def test_a_fuzzy_match_is_typography_only_and_keeps_the_texts_words(quote, text, found):
    chk = validate_span(quote, text)
    assert chk.valid and chk.method == "fuzzy" and text[chk.start:chk.end] == found


@pytest.mark.parametrize(
    "quote, text",
    [
        ("an excuse for cabinet to seize", "an excuse for bureaucrats to seize power"),  # a content word changed
        ("abcdefghij", "zz abcdefgXij zz"),  # one letter changed
        ("slamed", "They slammed it."),  # a typo is a changed word too
        ("the", "They met other people."),  # inside words only
        ("led climate emergency", "the so-called climate emergency"),  # starts mid-word
        (".", "They met."), (",", "a, b"),  # no word at all
        ("a completely different and much longer sentence than the text", "short text"),
    ],
)
def test_a_changed_word_or_a_part_of_a_word_is_not_found(quote, text):
    chk = validate_span(quote, text)
    assert not chk.valid and chk.start is None and chk.reason


def test_a_quote_is_found_at_word_boundaries_only():
    text = "Others said the plan failed."
    chk = validate_span("the", text)
    assert chk.valid and (chk.start, chk.end) == (12, 15)  # not the "the" inside "Others"


def test_empty_quote_and_empty_text_are_invalid_with_a_reason():
    assert validate_span("", TEXT).reason == "empty quote"
    assert validate_span('  "" ', TEXT).reason == "empty quote"
    assert validate_span("slammed", "").reason == "empty text"
    assert not validate_span(None, TEXT).valid  # type: ignore[arg-type]


# -- truncation --------------------------------------------------------------------------------


def test_truncate_words_reports_what_was_cut():
    text = " ".join(f"w{i}" for i in range(700))
    tr = truncate_words(text, 600)
    assert tr.truncated and tr.n_words_in == 700 and tr.n_words_out == 600
    assert tr.text.split() == text.split()[:600] and tr.text.endswith("w599")
    same = truncate_words("a  b\nc", 5)
    assert not same.truncated and same.text == "a  b\nc" and same.n_words_in == 3
    assert truncate_words("a b", 0).text == ""
    with pytest.raises(ValueError):
        truncate_words("a", -1)


# -- decoding files: one decoder for the CLI and the API ----------------------------------------


def test_decode_reads_cp1252_as_the_api_does():
    from mabpd_kit.text import clean, decode

    raw = "The mayor\x92s \x93plan\x94 \x96 a caf\xe9".encode("latin-1")
    assert decode(raw) == "The mayor’s “plan” – a café"
    assert clean(raw).text == 'The mayor\'s "plan" – a café'


def test_decode_utf8_bom_and_utf16():
    from mabpd_kit.text import decode

    assert decode("\ufeffcafé".encode("utf-8")) == "café"
    assert decode("café".encode("utf-16")) == "café"


def test_looks_binary():
    import random

    from mabpd_kit.text import looks_binary

    rnd = random.Random(0)
    assert looks_binary(b"\x7fELF\x02\x01\x01\x00" + bytes(rnd.randrange(256) for _ in range(2000)))
    assert looks_binary(b"%PDF-1.4\n" + bytes(rnd.randrange(256) for _ in range(2000)))
    assert looks_binary(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    assert not looks_binary(b"")
    assert not looks_binary("One sentence.\nAnother one, with a caf\xe9.\n".encode("cp1252"))
    assert not looks_binary("Новости дня. 中国新闻。".encode())
    assert not looks_binary("text".encode("utf-16"))
    assert not looks_binary(("é" * 5000).encode("utf-8")[:8191] + b"abc")  # a character cut by the sample


def test_normalise_quotes_maps_one_character_for_one():
    from mabpd_kit.text import normalise_quotes

    assert normalise_quotes("the `so-called\u2019 \u201creform\u201d \u00abx\u00bb") == "the 'so-called' \"reform\" \"x\""
    assert normalise_quotes("plain news") == "plain news"

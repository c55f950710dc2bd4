"""Language detection: English on the fast path, other languages by py3langid, "und" when unsure."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mabpd_kit import language
from mabpd_kit.text import detect_language

FOREIGN = {
    "zh": "中国政府今天宣布了新的经济政策，以促进国内消费。",
    "ar": "أعلنت الحكومة اليوم عن سياسة اقتصادية جديدة لتعزيز الاستهلاك المحلي.",
    "ru": "Правительство сегодня объявило о новой экономической политике.",
    "de": "Die Regierung hat das Gesetz beschlossen, aber die Opposition ist dagegen.",
    "fr": "Le gouvernement a annoncé aujourd'hui une nouvelle politique économique pour soutenir la consommation.",
    "es": "El gobierno anunció hoy una nueva política económica para impulsar el consumo interno.",
    "ja": "政府は本日、新しい経済政策を発表した。",
}

ENGLISH = [
    "The senator slammed the bill as a disgrace to the country.",
    "Police made scores of arrests at Friday’s massive demonstration in Brooklyn.",
    "Biden rejects Trump claim that COVID-19 vaccine is imminent",
    "An upcoming CNN town hall on the\xa0coronavirus pandemic\xa0will feature Greta Thunberg.",
    "Beyoncé and her fans said the café was closed.",
    "<p>The mayor said that the plan &amp; the budget were fine.</p>",
]


@pytest.mark.parametrize("lang", sorted(FOREIGN))
def test_other_languages_are_recognised(lang):
    assert detect_language(FOREIGN[lang]) == lang


@pytest.mark.parametrize("text", ENGLISH)
def test_english_news_is_english(text):
    assert detect_language(text) == "en"


def test_english_takes_the_fast_path_without_the_model(monkeypatch):
    def boom():
        raise AssertionError("the model was asked about plain English")

    monkeypatch.setattr(language, "_identifier", boom)
    for text in ENGLISH:
        if "Police" not in text:  # "of", "at", "in" alone are words in other languages too: the model decides
            assert detect_language(text) == "en"


@pytest.mark.parametrize("text", ["", "   ", "ok", "may", "中国", "12345 67890 !!!", None, float("nan"), 42])
def test_too_short_or_not_text_is_und(text):
    assert detect_language(text) == "und"


def test_low_confidence_latin_text_is_und_not_a_foreign_language():
    # py3langid alone calls this Latin (la) at 0.12: not a reason to flag a headline as unsupported
    assert detect_language("Institutionalized racism.") == "und"


def test_non_latin_script_never_comes_back_english_or_und(monkeypatch):
    class Unsure:
        def classify(self, text):
            return "en", 0.2

    monkeypatch.setattr(language, "_identifier", lambda: Unsure())
    assert detect_language(FOREIGN["ar"]) == "ar"
    assert detect_language(FOREIGN["ru"]) == "ru"
    assert detect_language(FOREIGN["zh"]) == "zh"


def test_an_english_sentence_with_a_short_foreign_quote_stays_english():
    assert detect_language("The senator said “我们必须行动” before leaving the chamber.") == "en"


def test_no_model_is_loaded_on_import():
    code = "import sys, mabpd_kit.text, mabpd_kit.language; print('py3langid' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"


def test_document_language_short_latin_text_is_assumed_whatever_its_whitespace():
    assert language.document_language("Rennie\x1cwrote:\u3000yes", min_chars=40, assume="xx") == "xx"
    assert language.document_language("Rennie wrote:", min_chars=0, assume="xx") != "xx"
    assert language.document_language("Rennie wrote:", min_chars=-5, assume="xx") != "xx"
    assert language.document_language(FOREIGN["ru"], min_chars=100) == "ru"
    assert language.document_language(None, min_chars=40) == "und"

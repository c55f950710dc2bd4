"""SemEval-2019 Task 4 HyperPartisan (by article): whole news articles, label 1 = hyperpartisan.

``load_hyperpartisan(split)`` columns: id, title, published_at, url, text, label (1 hyperpartisan),
n_words, truncated; ``df.attrs["n_truncated"]``."""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from mabpd_kit.data.download import locate

if TYPE_CHECKING:  # pandas loads inside the loader
    import pandas as pd

__all__ = ["HYPERPARTISAN", "load_hyperpartisan"]

HYPERPARTISAN = "SemEval2019-Task4-Hyperpartisan"
_HP_FILES = {
    "train": ("articles-training-byarticle-20181122.xml", "ground-truth-training-byarticle-20181122.xml"),
    "test": ("articles-test-byarticle-20181207.xml", "ground-truth-test-byarticle-20181207.xml"),
}
_BLOCK_TAGS = {"p", "q", "blockquote", "h1", "h2", "h3", "h4", "li"}
_SPACES = re.compile(r"[ \t\u00a0\u200b]+")


def _clean_article(text: str) -> str:
    """HTML entities decoded (repeatedly: the files double-escape) and whitespace normalised, paragraphs kept; the
    pipeline cleans again with offsets."""
    from mabpd_kit.text import _unescape_fully
    lines = (_SPACES.sub(" ", line).strip() for line in _unescape_fully(text).splitlines())
    return "\n".join(line for line in lines if line)


def _article_text(elem) -> str:
    """Text of an <article> element: every text node in order, block elements (``<p>``, ``<q>``, ...) on their own lines."""
    parts: list[str] = [elem.text or ""]
    for child in elem:
        block = child.tag in _BLOCK_TAGS
        parts += ["\n" if block else "", "".join(child.itertext()), "\n" if block else "", child.tail or ""]
    return "".join(parts)


def load_hyperpartisan(split: str = "train", data_dir: str | os.PathLike | None = None, truncate: int | None = None,
                       download: bool = True, download_dir: str | os.PathLike | None = None) -> pd.DataFrame:
    """SemEval-2019 Task 4 by-article news, label 1 = hyperpartisan (train 645, test 628), one paragraph per line.
    ``truncate=N`` keeps the first N words; ``n_words`` is the length before, ``truncated`` and
    ``df.attrs["n_truncated"]`` say what was cut."""
    import xml.etree.ElementTree as ET

    import pandas as pd

    from mabpd_kit.text import truncate_words
    if split not in _HP_FILES:
        raise ValueError(f"HyperPartisan split must be 'train' or 'test', not {split!r}")
    art_name, gt_name = _HP_FILES[split]
    art_path = locate(HYPERPARTISAN, art_name, data_dir, download=download, download_dir=download_dir)
    gt_path = locate(HYPERPARTISAN, gt_name, data_dir, download=download, download_dir=download_dir)
    truth = {
        a.get("id"): (a.get("hyperpartisan", "").lower() == "true", a.get("url"))
        for a in ET.parse(gt_path).getroot().iter("article")
    }
    rows = []
    for a in ET.parse(art_path).getroot().iter("article"):
        aid = a.get("id")
        if aid not in truth:
            raise ValueError(f"article {aid} of {art_path.name} has no label in {gt_path.name}")
        text = _clean_article(_article_text(a))
        title = _clean_article(a.get("title") or "")
        n_words = len(text.split())
        cut = False
        if truncate is not None:
            t = truncate_words(text, truncate)
            text, cut = t.text, t.truncated
        rows.append({"id": aid, "title": title, "published_at": a.get("published-at"), "url": truth[aid][1],
                     "text": text, "label": int(truth[aid][0]), "n_words": n_words, "truncated": cut})
    df = pd.DataFrame(rows)
    df.attrs.update(source=[str(art_path), str(gt_path)], dataset=f"HyperPartisan/{split}",
                    truncate=truncate, n_truncated=int(df["truncated"].sum()))
    return df


"""Matcher throughput: sentences per second on one core (target >= 20,000).

Timed with CPU time of this process (time.process_time), so a busy shared machine does not
distort the figure; best of nine passes (a shared machine only ever makes a pass slower).

Reads the BABE training sentences from MABPD_DATA_DIR (text column only); without the data it
falls back to synthetic news-like sentences. Prints figures, asserts nothing.

    MABPD_DATA_DIR=../shared/data .venv/bin/python bench/bench_lexicon.py
"""

from __future__ import annotations

import os
import random
import time
from pathlib import Path

from mabpd_kit.lexicon import Lexicon
from mabpd_kit.text import clean

BABE_TRAIN = Path("BABE/derived/babe_hf_train3121_reconstructed.csv")


def sentences() -> tuple[list[str], str]:
    d = os.environ.get("MABPD_DATA_DIR")
    if d and (Path(d) / BABE_TRAIN).exists():
        import pandas as pd

        texts = pd.read_csv(Path(d) / BABE_TRAIN, usecols=["text"])["text"].astype(str).tolist()
        return texts, f"BABE train ({len(texts)} sentences)"
    rng = random.Random(0)
    words = ("the senator said on monday that the bill would cut taxes for families while critics "
             "slammed the so-called reform as a power grab and officials in the city reported").split()
    texts = [" ".join(rng.choice(words) for _ in range(rng.randint(15, 40))).capitalize() + "." for _ in range(3000)]
    return texts, "synthetic (3000 sentences; set MABPD_DATA_DIR for BABE)"


def rate(fn, texts: list[str], repeat: int = 9) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        for t in texts:
            fn(t)
        best = min(best, time.process_time() - t0)
    return len(texts) / best


def main() -> None:
    t0 = time.process_time()
    lex = Lexicon.default()
    load = time.process_time() - t0
    texts, source = sentences()
    mean_chars = sum(map(len, texts)) / len(texts)
    print(f"lexicon {lex.version}: {len(lex.terms)} terms, {len(lex._by_form)} surface forms, "
          f"{len(lex.categories)} categories, {len(lex.protected)} protected contexts (load {load * 1000:.0f} ms)")
    print(f"corpus: {source}, mean {mean_chars:.0f} chars")
    m = rate(lex.match, texts)
    s = rate(lex.signal, texts)
    c = rate(lambda t: lex.match(clean(t).text), texts, repeat=3)
    hits = sum(1 for t in texts if lex.signal(t) is not None)
    print(f"match():             {m:>10,.0f} sentences/s  (target >= 20,000)")
    print(f"signal():            {s:>10,.0f} sentences/s")
    print(f"clean() + match():   {c:>10,.0f} sentences/s")
    print(f"sentences with a signal above the floor: {hits}/{len(texts)} ({hits / len(texts):.1%})")


if __name__ == "__main__":
    main()

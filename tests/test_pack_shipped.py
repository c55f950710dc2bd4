"""The course pack shipped for lesson 10 still replays: a change to the prompts, the cues or the lexicon
changes every request the agents send, so the recorded answers stop matching (helper-20 found 0 of 8
sentences decided after the span work, 53a2b0d, where the recording decided 4). Re-record the pack with
``tools/record_real_pack.py`` when this fails."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import mabpd_kit as mk
from mabpd_kit.llm.pack import load_pack, pack_llm

PACK = Path(str(resources.files("mabpd_kit") / "resources" / "packs" / "smollm2-135m-samples.pack.json"))
IDS = ["s01", "s03", "s09", "s11", "n01", "n02", "n06", "n09"]  # tools/record_real_pack.py's sentences


def test_the_shipped_pack_still_decides_what_it_decided_while_recording(monkeypatch):
    monkeypatch.delenv("MABPD_PACK", raising=False)
    pack = load_pack(PACK)
    cfg = mk.Config().replace(**{"agents.max_tokens": 512, "llm.timeout_s": 900.0, "llm.server": "llama-cpp-python"})
    chosen = mk.data.samples().set_index("id").loc[IDS].reset_index()
    res = mk.Pipeline(cfg, llm=pack_llm(PACK, config=cfg)).analyze_many(
        chosen["text"].tolist(), ids=IDS, gold=chosen["label"].tolist(), progress=False)
    decided = [d for d in res if not d.failed]
    misses = [d.id for d in res if d.failed and "ReplayMissError" in (d.error or "")]
    assert decided, (f"the shipped pack ({pack['created']}) decides none of its {len(IDS)} sentences on replay "
                     f"(misses: {misses}): re-record it with tools/record_real_pack.py")
    assert not misses, f"requests the pack has no answer for, on {misses}: re-record it with tools/record_real_pack.py"

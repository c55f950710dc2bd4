"""Evaluation charts stay readable: labelled confusion cells, precision/recall labels that do not overlap."""

from __future__ import annotations

import pandas as pd

import mabpd_kit as mk
from mabpd_kit.viz.evaluation import _place_labels


def test_confusion_cells_say_what_they_are():
    chart = mk.viz.evaluation.confusion_chart([0, 0, 0, 1, 1, 1, 1], [0, 0, 1, 1, 1, 1, 0], title="cm")
    spec = chart.to_dict()
    data = next(iter(spec["datasets"].values()))
    cells = {(r["gold"], r["pred"]): r for r in data}
    assert cells[("gold neutral", "predicted biased")]["cell"] == "false positive"
    assert cells[("gold biased", "predicted biased")]["label"] == "true positive\n3 (75% of row)"
    assert spec["width"] >= 200 and "false negative" in spec["description"]


def test_precision_recall_labels_do_not_overlap():
    metrics = pd.DataFrame({"system": [f"system_{i}" for i in range(12)], "kind": ["a"] * 6 + ["b"] * 6,
                            "precision": [0.80, 0.801, 0.802, 0.79, 0.81, 0.80, 0.7, 0.71, 0.72, 0.9, 0.91, 0.5],
                            "recall": [0.70, 0.701, 0.702, 0.71, 0.69, 0.705, 0.6, 0.61, 0.62, 0.9, 0.905, 0.8]})
    spec = mk.viz.evaluation.precision_recall_chart(metrics).to_dict()
    assert spec["description"].startswith("Precision against recall of 12 systems")
    pts = [(float(i * 3), 100.0, f"label{i}") for i in range(6)]  # six points almost on top of each other
    boxes = []
    for x, y, text, align in _place_labels(pts):
        w = 6.0 * len(text)
        boxes.append((x, y - 6, x + w, y + 6) if align == "left" else (x - w, y - 6, x, y + 6))
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            assert a[2] <= b[0] or a[0] >= b[2] or a[3] <= b[1] or a[1] >= b[3], (a, b)


def test_confusion_text_is_dark_on_light_cells():
    """A 10% cell is light grey: its text is black, never white (review40e, lesson 08 cell 15)."""
    spec = mk.viz.evaluation.confusion_chart([0] * 20 + [1] * 20, [0] * 18 + [1] * 2 + [1] * 16 + [0] * 4).to_dict()
    data = next(iter(spec["datasets"].values()))
    inks = {r["cell"]: r["ink"] for r in data}
    assert inks["false positive"] == "black" and inks["false negative"] == "black"
    assert inks["true negative"] == "white"
    assert {layer["mark"]["color"] for layer in spec["layer"][1:]} == {"black", "white"}


def test_reference_llms_are_one_band_not_ten_greys():
    """Ten reference LLMs are one min-max band per metric; the colour legend lists the kit's systems only."""
    refs = [f"llm_{i}" for i in range(10)]
    metrics = pd.DataFrame({"system": ["full", "no-debate", *refs], "kind": ["config"] * 2 + ["reference LLM"] * 10,
                            "macro_f1": [0.6, 0.62] + [0.5 + i / 50 for i in range(10)], "f1": 0.6, "precision": 0.7,
                            "recall": 0.5, "macro_f1_lo": 0.55, "macro_f1_hi": 0.65})
    spec = mk.viz.evaluation.metrics_chart(metrics).to_dict()
    colour = [layer for layer in spec["layer"] if "color" in layer.get("encoding", {})]
    assert colour[0]["encoding"]["color"]["scale"]["domain"] == ["full", "no-debate"]
    band = next(v for k, v in spec["datasets"].items() if v and "hi" in v[0] and "what" in v[0])
    assert len(band) == 4 and band[0]["lo"] == 0.5 and abs(band[0]["hi"] - 0.68) < 1e-9


def test_reference_llms_share_one_grey_in_the_precision_recall_plane():
    """The ten reference LLMs are one grey (their band's), not ten shades that mean nothing (review40f, cell 13)."""
    refs = [f"llm_{i}" for i in range(10)]
    metrics = pd.DataFrame({"system": ["full", *refs], "kind": ["config"] + ["reference LLM"] * 10,
                            "precision": [0.7] + [0.6 + i / 50 for i in range(10)], "recall": 0.6})
    spec = mk.viz.evaluation.precision_recall_chart(metrics).to_dict()
    scale = spec["layer"][0]["encoding"]["color"]["scale"]
    assert set(scale["range"][1:]) == {"#bdbdbd"} and scale["range"][0] != "#bdbdbd"


def test_threshold_chart_shows_a_chosen_threshold_at_the_edge_of_the_sweep():
    """The x domain is padded beyond the sweep, so a dashed rule at its first threshold is not drawn on the axis."""
    sweep = mk.evaluate.threshold_sweep([0, 1, 1, 0], [0.2, 0.7, 0.5, 0.4], [0.05, 0.5, 0.95]).assign(half="calibrate")
    spec = mk.viz.evaluation.threshold_chart(sweep, chosen=0.05).to_dict()
    x = spec["layer"][0]["encoding"]["x"]
    assert x["scale"]["domain"][0] < 0.05 and x["scale"]["domain"][1] > 0.95 and "0.05-0.95" in x["title"]

"""The builder: seed files (``taxonomy.toml``, ``categories/<id>.toml``, ``protected.toml``) -> one JSON resource
with a version and a sha256 checksum, deterministic (``mabpd lexicon check`` compares it byte for byte)."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from mabpd_kit.config import Config
from mabpd_kit.lexicon.model import Category, Protected, Term
from mabpd_kit.lexicon.morphology import FORM_SHAPE, form_key, inflections

__all__ = ["build", "build_bytes", "checksum", "default_taxonomy", "dump", "finalize", "read_seeds", "resource_path",
           "seeds_dir"]


def seeds_dir() -> Path:
    """The seed files, shipped inside the package."""
    return Path(__file__).resolve().parents[1] / "resources" / "lexicon"


def resource_path() -> Path:
    """The shipped, built lexicon."""
    return Path(__file__).resolve().parents[1] / "resources" / "lexicon.json"


def default_taxonomy() -> dict[str, str]:
    """Taxonomy type -> meta-category as shipped."""
    return dict(json.loads(resource_path().read_text(encoding="utf-8"))["taxonomy"])


def _load_toml(path: Path) -> dict[str, Any]:
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"{path}: {exc}") from exc


def read_seeds(seed_dir: str | Path | None = None
               ) -> tuple[dict[str, Any], list[Category], list[Term], list[Protected]]:
    """Parse the seed files into typed entries (no forms yet). Raises ValueError with the file name."""
    d = Path(seed_dir) if seed_dir is not None else seeds_dir()
    if not (d / "taxonomy.toml").exists():
        raise FileNotFoundError(f"no taxonomy.toml in {d}: lexicon seeds live in mabpd_kit/resources/lexicon/")
    tax = _load_toml(d / "taxonomy.toml")
    mapping: dict[str, str] = tax["taxonomy"]
    categories: list[Category] = []
    terms: list[Term] = []
    for path in sorted((d / "categories").glob("*.toml")):
        doc = _load_toml(path)
        head = doc.get("category", {})
        if head.get("id") != path.stem:
            raise ValueError(f"{path}: category id {head.get('id')!r} must equal the file name {path.stem!r}")
        taxonomy = head.get("taxonomy", "")
        if taxonomy not in mapping:
            raise ValueError(f"{path}: taxonomy {taxonomy!r} is not in taxonomy.toml")
        categories.append(Category(id=head["id"], name=head["name"], taxonomy=taxonomy,
                                   meta_category=mapping[taxonomy], description=head.get("description", "")))
        for i, group in enumerate(doc.get("group", [])):
            for item in group.get("terms", []):
                spec = {"term": item} if isinstance(item, str) else dict(item)
                try:
                    terms.append(Term(term=spec["term"], category=head["id"],
                                      band=float(spec.get("band", group.get("band"))),
                                      pos=spec.get("pos", group.get("pos", "fixed")),
                                      variants=tuple(spec.get("variants", ())),
                                      note=spec.get("note", group.get("note", ""))))
                except (KeyError, TypeError, ValueError) as exc:
                    raise ValueError(f"{path}: group {i + 1}, entry {item!r}: {exc}") from exc
    protected: list[Protected] = []
    if (d / "protected.toml").exists():
        for item in _load_toml(d / "protected.toml").get("protected", []):
            for ctx in item["contexts"]:
                protected.append(Protected(term=item["term"], context=ctx, pos=item.get("pos", "noun"),
                                           note=item.get("note", "")))
    meta = {"version": str(tax.get("version", "0")), "name": tax.get("name", "mabpd-kit bias lexicon"),
            "taxonomy": dict(sorted(mapping.items())), "bands": list(Config().lexicon.bands)}
    return meta, categories, terms, protected


def finalize(meta: dict[str, Any], categories: Iterable[Category], terms: Iterable[Term],
             protected: Iterable[Protected]) -> dict[str, Any]:
    """Check the entries and expand every term into its forms (a shared form goes to the higher band)."""
    cats = sorted(categories, key=lambda c: c.id)
    ids = [c.id for c in cats]
    if len(set(ids)) != len(ids):
        raise ValueError(f"duplicate category ids: {sorted({i for i in ids if ids.count(i) > 1})}")
    bands = tuple(meta.get("bands", Config().lexicon.bands))
    seen: dict[str, Term] = {}
    for t in terms:
        if t.category not in ids:
            raise ValueError(f"term {t.term!r}: unknown category {t.category!r}")
        if not any(abs(t.band - b) < 1e-9 for b in bands):
            raise ValueError(f"term {t.term!r}: band {t.band} not one of {bands}")
        if not t.note.strip():
            raise ValueError(f"term {t.term!r}: every term needs a teaching note")
        k = form_key(t.term)
        if k in seen:
            raise ValueError(f"term {t.term!r} appears twice ({seen[k].category} and {t.category})")
        seen[k] = t
    for t in seen.values():
        for f in [t.term, *t.variants]:
            if not FORM_SHAPE.fullmatch(form_key(f)):
                raise ValueError(f"term {t.term!r}: form {f!r} must be words joined by spaces, hyphens or apostrophes")
    # a term owns its written form; a variant or inflection two terms share goes to the higher band
    owner: dict[str, Term] = {k: t for k, t in seen.items()}
    for t in sorted(seen.values(), key=lambda t: (-t.band, t.category, form_key(t.term))):
        for f in inflections(t.term, t.pos) + [form_key(v) for v in t.variants]:
            owner.setdefault(form_key(f), t)
    built_terms = []
    for t in sorted(seen.values(), key=lambda t: (t.category, form_key(t.term))):
        forms = sorted({form_key(f) for f in inflections(t.term, t.pos) + list(t.variants) if owner[form_key(f)] is t})
        built_terms.append(t.model_copy(update={"forms": tuple(forms), "band": round(t.band, 2)}))
    prot = []
    for p in sorted(protected, key=lambda p: (form_key(p.term), form_key(p.context))):
        if form_key(p.term) not in form_key(p.context):
            raise ValueError(f"protected context {p.context!r} does not contain {p.term!r}")
        forms = tuple(dict.fromkeys(form_key(f) for f in inflections(p.context, p.pos)))
        prot.append(p.model_copy(update={"forms": forms}))
    payload = {**meta, "categories": [c.model_dump() for c in cats],
               "terms": [t.model_dump(mode="json") for t in built_terms],
               "protected": [p.model_dump(mode="json") for p in prot]}
    payload["checksum"] = checksum(payload)
    return payload


def _canonical(payload: dict[str, Any]) -> bytes:
    body = {k: v for k, v in payload.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def checksum(payload: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the canonical JSON of everything but the checksum itself."""
    return "sha256:" + hashlib.sha256(_canonical(payload)).hexdigest()


def build(seed_dir: str | Path | None = None) -> dict[str, Any]:
    """Seeds -> the lexicon resource as a dict (version, taxonomy, categories, terms, protected, checksum)."""
    return finalize(*read_seeds(seed_dir))


def build_bytes(seed_dir: str | Path | None = None) -> bytes:
    """The exact bytes of ``resources/lexicon.json``."""
    return dump(build(seed_dir))


def dump(payload: dict[str, Any]) -> bytes:
    """The resource as bytes: sorted keys, one-space indent, a final newline."""
    return (json.dumps(payload, sort_keys=True, ensure_ascii=False, indent=1) + "\n").encode("utf-8")

"""A lesson exported to one HTML file that opens with no network: nbconvert's ``lab`` exporter without its CDN
blocks, local pictures embedded, remote ones replaced by their alternative text.
Command line: ``python -m mabpd_kit.export NOTEBOOK.ipynb [...] [-o DIR] [--no-execute]``."""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from mabpd_kit.files import write_text

__all__ = ["export_lesson", "external_resources", "offline_html"]

#: the lab template without the blocks that fetch scripts from a CDN
_TEMPLATE = """{%- extends 'lab/index.html.j2' -%}
{%- block html_head_js_requirejs -%}{%- endblock html_head_js_requirejs -%}
{%- block html_head_js_mathjax -%}{%- endblock html_head_js_mathjax -%}
{%- block html_head_js_mermaidjs -%}{%- endblock html_head_js_mermaidjs -%}
{% block jupyter_widgets %}{% endblock jupyter_widgets %}
"""
_REMOTE = r"(?:https?:)?//"
_MD_IMAGE = re.compile(rf"!\[([^\]]*)\]\(\s*<?{_REMOTE}[^)]*\)")
_HTML_IMAGE = re.compile(rf"<img\b[^>]*\bsrc\s*=\s*[\"']?{_REMOTE}[^>]*>", re.I)
_ALT = re.compile(r"\balt\s*=\s*(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.I)
#: the ``src`` value of an ``<img>`` tag (group 1: everything before it, group 2: the value, quoted or not)
_IMG_SRC = re.compile(r"(<img\b[^>]*?\bsrc\s*=\s*)(\"[^\"]*\"|'[^']*'|[^\s>]+)", re.I)
#: what makes a browser fetch something (links to click are not requests)
_FETCHES = [
    re.compile(rf"<(?:script|img|iframe|source|video|audio|embed|input|track)\b[^>]*\bsrc\s*=\s*[\"']?({_REMOTE}[^\"'\s>]+)", re.I),
    re.compile(rf"<link\b[^>]*\bhref\s*=\s*[\"']?({_REMOTE}[^\"'\s>]+)", re.I),
    re.compile(rf"<object\b[^>]*\bdata\s*=\s*[\"']?({_REMOTE}[^\"'\s>]+)", re.I),
    re.compile(rf"url\(\s*[\"']?({_REMOTE}[^\"')]+)", re.I),
    re.compile(rf"@import\s+[\"']({_REMOTE}[^\"']+)", re.I)]


def _alt(tag: str) -> str:
    m = _ALT.search(tag)
    return m.group(1).strip("\"'") if m else "image"


def _drop_remote_images(source: str) -> str:
    """A markdown cell with every remote picture replaced by its alternative text."""
    source = _MD_IMAGE.sub(lambda m: m.group(1) or "image", source)
    return _HTML_IMAGE.sub(lambda m: _alt(m.group(0)), source)


def _exporter_class() -> type:
    """nbconvert's HTML exporter whose markdown renderer embeds local pictures by swapping each ``<img>``'s ``src``
    in place: nbconvert's own embedding re-parses the HTML and would open a self-check's folded ``<details>``."""
    from html import unescape

    from jinja2 import pass_context
    from nbconvert import HTMLExporter
    from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
    class Renderer(IPythonRenderer):  # type: ignore[misc]
        def _html_embed_images(self, html: str) -> str:  # nbconvert's version round-trips through bs4
            def swap(m: re.Match[str]) -> str:
                url = self._src_to_base64(unescape(m.group(2).strip("\"'")))
                return m.group(0) if url is None else f'{m.group(1)}"{url}"'

            return _IMG_SRC.sub(swap, html)

    class Exporter(HTMLExporter):  # type: ignore[misc]
        @pass_context  # a Jinja filter that gets the cell (its attachments) and the resources (the folder)
        def markdown2html(self, context: dict, source: str) -> str:
            cell = context.get("cell", {})
            renderer = Renderer(escape=False, attachments=cell.get("attachments", {}), embed_images=self.embed_images,
                                path=context.get("resources", {}).get("metadata", {}).get("path", ""),
                                anchor_link_text=self.anchor_link_text, exclude_anchor_links=self.exclude_anchor_links,
                                **self.lexer_options)
            return MarkdownWithMath(renderer=renderer).render(source)

    return Exporter


def external_resources(page: str) -> list[str]:
    """The URLs an HTML page would fetch from the network (``<a href>`` links are not fetched and not listed)."""
    found: list[str] = []
    for rx in _FETCHES:
        found += rx.findall(page)
    return list(dict.fromkeys(found))


def offline_html(nb: object, *, resources: dict | None = None) -> str:
    """An (executed) notebook node as one offline HTML page; an error if it would still fetch anything."""
    import copy

    from jinja2 import DictLoader
    nb = copy.deepcopy(nb)
    for cell in nb.cells:  # type: ignore[attr-defined]
        if cell.cell_type == "markdown":
            cell.source = _drop_remote_images(cell.source)
    nb.metadata.pop("widgets", None)  # type: ignore[attr-defined]  # panels export as pictures of their state
    exporter = _exporter_class()(template_name="lab", template_file="mabpd_offline.html.j2", embed_images=True,
                            extra_loaders=[DictLoader({"mabpd_offline.html.j2": _TEMPLATE})])
    page, _ = exporter.from_notebook_node(nb, resources=resources or {})
    left = external_resources(page)
    if left:
        raise ValueError(f"the export would still fetch {len(left)} resources: {', '.join(left[:5])}")
    return page


def export_lesson(notebook: str | Path, out: str | Path | None = None, *, execute: bool = True,
                  timeout: int = 300) -> Path:
    """Run ``notebook`` in its own folder and write it as one offline HTML file: ``out`` is a folder or a file name
    (default: beside the notebook). Returns the path."""
    import nbformat
    src = Path(notebook)
    nb = nbformat.read(src, as_version=4)
    if execute:
        from nbconvert.preprocessors import ExecutePreprocessor
        ExecutePreprocessor(timeout=timeout, store_widget_state=False).preprocess(
            nb, {"metadata": {"path": str(src.parent.resolve())}})
    # the notebook's folder: its local pictures are found (and embedded) relative to it, as in Jupyter
    page = offline_html(nb, resources={"metadata": {"name": src.stem, "path": str(src.parent.resolve())}})
    dest = Path(out) if out else src.with_suffix(".html")
    if dest.suffix.lower() != ".html":
        dest = dest / f"{src.stem}.html"
    write_text(dest, page)  # all or nothing: a failed write leaves no partial page
    return dest


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m mabpd_kit.export",
                                 description="Export lessons to HTML files that open with no network.")
    ap.add_argument("notebooks", nargs="+", help="the .ipynb files")
    ap.add_argument("-o", "--output-dir", help="folder for the HTML files (default: beside each notebook)")
    ap.add_argument("--no-execute", action="store_true", help="export the saved outputs as they are")
    ap.add_argument("--timeout", type=int, default=300, help="seconds one cell may run")
    args = ap.parse_args(argv)
    for nb in args.notebooks:
        if not Path(nb).is_file():
            print(f"mabpd export: no notebook {nb}", file=sys.stderr)
            return 2
        try:
            path = export_lesson(nb, args.output_dir, execute=not args.no_execute, timeout=args.timeout)
        except Exception as exc:  # a failing cell or a resource left: one line, not a traceback
            first = str(exc).strip().splitlines()
            print(f"mabpd export: {nb}: {type(exc).__name__}: {first[-1] if first else ''}", file=sys.stderr)
            return 1
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

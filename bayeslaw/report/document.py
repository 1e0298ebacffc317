"""The :class:`Report` document: sections of prose, tables and figures, and its rendering.

A report renders to one self-contained HTML file (figures embedded as PNG data URIs) or
to Markdown (figures written as files beside it).

Only the standard library renders: ``html.escape`` and pandas' ``to_html`` for tables.
Every table and figure is a :class:`Block` paired with one sentence saying what it shows.
The HTML holds no script, so it displays anywhere (mail, artifact viewers, notebooks).
"""

from __future__ import annotations

import base64
import html
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from ..errors import ArgumentError
from ..files import atomic_write, atomic_write_text

_CSS = """
.bayeslaw-report { font-family: system-ui, -apple-system, "Segoe UI", sans-serif;
  max-width: 1150px; margin: 0 auto; padding: 1em 1.5em; color: #222; line-height: 1.45; }
.bayeslaw-report h1 { font-size: 1.6em; border-bottom: 2px solid #345; }
.bayeslaw-report h2 { font-size: 1.3em; margin-top: 1.8em; border-bottom: 1px solid #ccd; }
.bayeslaw-report h3 { font-size: 1.1em; margin-top: 1.4em; }
.bayeslaw-report p.meta { color: #666; font-size: 0.9em; }
.bayeslaw-report table { border-collapse: collapse; font-size: 0.85em; margin: 0.4em 0 1em; }
.bayeslaw-report th, .bayeslaw-report td { border: 1px solid #ccd; padding: 2px 8px;
  text-align: right; }
.bayeslaw-report th { background: #eef1f6; }
.bayeslaw-report pre { background: #f5f6f8; padding: 0.5em 1em; overflow-x: auto; }
.bayeslaw-report img { max-width: 100%; height: auto; }
.bayeslaw-report figure { margin: 0.5em 0 1.2em; }
"""

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def markdown_table(frame: pd.DataFrame, *, digits: int = 4) -> str:
    """A GitHub-flavoured Markdown table (no extra dependency)."""
    def fmt(v: object) -> str:
        if isinstance(v, float):
            return f"{v:.{digits}g}"
        return str(v).replace("|", "\\|")

    index_name = frame.index.name or ""
    header = [index_name, *map(str, frame.columns)]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for idx, row in frame.iterrows():
        lines.append("| " + " | ".join([fmt(idx), *(fmt(v) for v in row)]) + " |")
    return "\n".join(lines) + "\n"


def _inline(text: str) -> str:
    """Escape ``text`` for HTML, turning ```code``` spans into ``<code>`` elements."""
    return re.sub(r"`([^`]+)`", r"<code>\1</code>", html.escape(text))


def slug(text: str) -> str:
    """A file- and anchor-safe name: lower case letters, digits and hyphens."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "x"


@dataclass(frozen=True)
class Image:
    """A PNG figure; ``name`` is its file stem in the Markdown version."""

    name: str
    png: bytes = field(repr=False)
    alt: str = ""

    def __post_init__(self) -> None:
        if not self.png.startswith(_PNG_SIGNATURE):
            raise ArgumentError(f"image {self.name!r} is not a PNG: pass the bytes of a PNG file")

    def data_uri(self) -> str:
        """``data:image/png;base64,...``: the image inside the HTML file."""
        return "data:image/png;base64," + base64.b64encode(self.png).decode("ascii")


def figure_png(fig: Any, *, dpi: int = 100, tight: bool = True) -> bytes:
    """Render a matplotlib figure to PNG bytes and close it.

    ``tight=False``: as laid out (a grid figure,
    :func:`~bayeslaw.plots.panels.lay_out_grid`), not cropped by ``bbox_inches="tight"``.
    """
    import io

    import matplotlib.pyplot as plt

    buf = io.BytesIO()
    try:
        fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight" if tight else None)
    finally:
        plt.close(fig)
    return buf.getvalue()


@dataclass(frozen=True)
class Block:
    """One sentence and the table, figure or code it describes (or the sentence alone)."""

    text: str
    table: pd.DataFrame | None = None
    image: Image | None = None
    code: str | None = None

    def to_html(self) -> str:
        """HTML fragment: the sentence, then the table / figure / code."""
        out = [f"<p>{_inline(self.text)}</p>"] if self.text else []
        if self.code is not None:
            out.append(f"<pre><code>{html.escape(self.code)}</code></pre>")
        if self.table is not None:
            # a named index becomes the first column: one header row instead of two
            table = self.table.reset_index() if self.table.index.name else self.table
            out.append(table.to_html(float_format=lambda v: f"{v:.4g}", border=0, na_rep="",
                                     index=self.table.index.name is None))
        if self.image is not None:
            alt = html.escape(self.image.alt or self.text, quote=True)
            out.append(f'<figure><img src="{self.image.data_uri()}" alt="{alt}"></figure>')
        return "\n".join(out)

    def to_markdown(self) -> str:
        """Markdown: the sentence, then the table / code / a link to the image file."""
        out = [self.text] if self.text else []
        if self.code is not None:
            out.append("```\n" + self.code + "\n```")
        if self.table is not None:
            out.append(markdown_table(self.table).rstrip("\n"))
        if self.image is not None:
            alt = (self.image.alt or self.image.name).replace("]", ")")
            out.append(f"![{alt}]({self.image.name}.png)")
        return "\n\n".join(out)


@dataclass(frozen=True)
class Section:
    """A titled part of a report: blocks under an ``h2`` (``level=2``) or ``h3`` heading."""

    title: str
    blocks: tuple[Block, ...] = ()
    level: int = 2

    @property
    def anchor(self) -> str:
        """The HTML id of the section."""
        return slug(self.title)


@dataclass(frozen=True)
class Report:
    """A document of sections; render with :meth:`to_html` / :meth:`to_markdown`.

    Attributes
    ----------
    title : str
    sections : list of Section
    meta : str
        One line under the title (version, sources).
    """

    title: str
    sections: list[Section]
    meta: str = ""

    def __post_init__(self) -> None:
        names = [i.name for i in self.images]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise ArgumentError(f"image names must be unique, repeated: {sorted(dup)}")

    @property
    def images(self) -> list[Image]:
        """Every figure, in document order."""
        return [b.image for s in self.sections for b in s.blocks if b.image is not None]

    def _body(self) -> str:
        toc = "".join(f'<li class="l{s.level}"><a href="#{s.anchor}">{html.escape(s.title)}'
                      "</a></li>" for s in self.sections)
        parts = [f"<h1>{html.escape(self.title)}</h1>"]
        if self.meta:
            parts.append(f'<p class="meta">{_inline(self.meta)}</p>')
        parts.append(f"<nav><ul>{toc}</ul></nav>")
        for s in self.sections:
            body = "\n".join(b.to_html() for b in s.blocks)
            parts.append(f'<section id="{s.anchor}">\n<h{s.level}>{html.escape(s.title)}'
                         f"</h{s.level}>\n{body}\n</section>")
        return "\n".join(parts)

    def to_html(self) -> str:
        """A complete, self-contained HTML document (figures as PNG data URIs)."""
        return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
                f"<title>{html.escape(self.title)}</title>\n<style>{_CSS}</style>\n</head>\n"
                f"<body>\n<main class=\"bayeslaw-report\">\n{self._body()}\n</main>\n"
                "</body>\n</html>\n")

    def to_markdown(self) -> str:
        """Markdown; figures are linked as ``<name>.png`` files beside the document."""
        parts = [f"# {self.title}"] + ([self.meta] if self.meta else [])
        for s in self.sections:
            parts.append("#" * s.level + " " + s.title)
            parts += [b.to_markdown() for b in s.blocks]
        return "\n\n".join(parts) + "\n"

    def save(self, out: str | Path) -> dict[str, Path]:
        """Write ``report.html``, ``report.md`` and its figures into folder ``out``."""
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        paths = {}
        for image in self.images:
            paths[f"figure {image.name}"] = atomic_write(
                out / f"{image.name}.png", lambda tmp, im=image: Path(tmp).write_bytes(im.png))
        paths["markdown"] = atomic_write_text(out / "report.md", self.to_markdown())
        paths["html"] = atomic_write_text(out / "report.html", self.to_html())
        return paths

    def __repr__(self) -> str:
        titles = ", ".join(s.title for s in self.sections if s.level == 2)
        return (f"Report({self.title!r}, {len(self.sections)} sections, "
                f"{len(self.images)} figures: {titles})")

    def _repr_html_(self) -> str:
        return f'<div class="bayeslaw-report"><style>{_CSS}</style>{self._body()}</div>'

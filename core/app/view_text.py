"""How the read models write for people: escaped text, safe links, instants, and
Markdown bodies rendered as inert HTML.

Every read model whose name ends in ``_html`` builds its HTML with these: *every*
piece of text that came from a source, a model or a person is escaped
(``html.escape``) and every link is http(s) only, so the app can show it with
``st.html`` without letting a fetched page run script.
"""

from __future__ import annotations

import html
import re
from datetime import datetime
from typing import Any

from markdown_it import MarkdownIt

from core.dates import as_utc
from core.domain.citations import install, numbers_written
from core.domain.untrusted import clean_markdown, strip_bidi


def esc(text: Any) -> str:
    """HTML-escape any value (None → ''), without bidi override characters."""
    return html.escape(strip_bidi("" if text is None else str(text)), quote=True)


_SAFE_URL = re.compile(r"^https?://[^\s\"'<>\\]+$", re.IGNORECASE)


def link_html(url: str | None, text: str | None = None) -> str:
    """An escaped link that opens in a new tab — only for http(s) URLs; else plain text."""
    label = esc(text or url or "")
    if url and _SAFE_URL.match(url):
        return f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer">{label}</a>'
    return label


def stamp(dt: datetime | None) -> str | None:
    """An instant for people: 'YYYY-MM-DD HH:MM UTC'."""
    return as_utc(dt).strftime("%Y-%m-%d %H:%M UTC") if dt else None


_MD = install(MarkdownIt("commonmark", {"html": False}).enable("table").disable("image"))


def _citation_html(self: Any, tokens: list[Any], idx: int, options: Any, env: Any) -> str:
    """A citation (core.domain.citations) as written, each number a link to its References entry
    when every marker it names has one (``env["eg_known"]``); else plain text."""
    token = tokens[idx]
    group = token.content
    if not set(token.meta["markers"]) <= env.get("eg_known", set()):
        return esc(group)
    pieces, pos = [], 0
    for start, end, n in numbers_written(group):
        pieces += [esc(group[pos:start]), f'<a class="eg-cite" href="#ref-{n}">{n}</a>']
        pos = end
    return "".join([*pieces, esc(group[pos:])])


_MD.add_render_rule("citation", _citation_html)


def markdown_html(text: str, known_markers: set[int] | None = None) -> str:
    """Markdown → HTML with raw HTML and images off (all text escaped) and ``[n]``
    citations linked to ``#ref-n``: the one place the app renders a body. The body is
    made inert first (``core.domain.untrusted.clean_markdown``: no links, images, autolinks or
    raw HTML from a model, a page or an import), so its only links are the citations."""
    return _MD.render(clean_markdown(text or ""), {"eg_known": known_markers or set()})

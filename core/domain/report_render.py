"""Rendering a report to Markdown in its canonical form, and the body safety that keeps
the rendered text parseable into the same structure.

``render_markdown`` writes the canonical form::

    # {title}

    {preamble body, if any}

    ## {heading}

    {body}

    ## References

    [1] [{title}]({url}) — fetched {YYYY-MM-DD}

    [2] [{title}]({url})

Blocks are separated by one blank line and the text ends with a single newline.
"""

from __future__ import annotations

import re

from core.domain.markdown_text import (
    MD,
    heading_text,
    is_blank,
    normalize_newlines,
    one_line,
    strip_blank_edges,
)
from core.domain.report_state import RefEntry, ReportDoc

_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")


#: what could make a title a link or an image (``[``, ``]``, ``!``), and the escape itself
#: (raw HTML is escaped for every field by ``core.domain.untrusted``; an underscore or a
#: star stays as it is, "OP_VAULT": at worst it is emphasis)
_TITLE_MARKUP = re.compile(r"([\\\[\]!])")


def _escape_link_text(text: str) -> str:
    """A page's title as plain text in Markdown: a title such as ``![r](https://…)``
    stays those characters, never an image a reader's renderer loads."""
    return _TITLE_MARKUP.sub(r"\\\1", text)


def _format_url(url: str) -> str:
    if not re.search(r"[\s()<>]", url):
        return url
    if not re.search(r"[<>\n]", url):
        return f"<{url}>"
    return re.sub(r"[\s()<>]", lambda m: f"%{ord(m.group()):02X}", url)


# --------------------------------------------------------------------------- writer safety

_HEADING_CANDIDATE = re.compile(r"^ {0,3}(?:#{1,6}(?:[ \t]|$)|=+[ \t]*$|-+[ \t]*$)", re.M)
_OPENER_CANDIDATE = re.compile(r"^ {0,3}(?:`{3,}|~{3,}|<)", re.M)


def _escape_at_indent(line: str) -> str:
    indent = len(line) - len(line.lstrip(" "))
    return line[:indent] + "\\" + line[indent:]


def escape_heading_lines(body: str) -> str:
    """Make body lines that would parse as (top-level) headings literal.

    An ATX heading line ``## x`` becomes ``\\## x``; a setext underline (``===`` or
    ``---`` under a paragraph line) becomes ``\\===`` / ``\\---``. Lines inside code
    blocks, list items and block quotes are left alone, since they do not start a
    section. Newlines are normalized to ``\\n``. Idempotent.
    """
    body = normalize_newlines(body)
    if not _HEADING_CANDIDATE.search(body):
        return body
    lines = body.split("\n")
    for _ in range(len(lines) + 1):
        changed = False
        for tok in MD.parse("\n".join(lines)):
            if tok.type != "heading_open" or tok.level != 0 or tok.map is None:
                continue
            idx = tok.map[0] if tok.markup.startswith("#") else tok.map[1] - 1
            lines[idx] = _escape_at_indent(lines[idx])
            changed = True
        if not changed:
            break
    return "\n".join(lines)


def _html_closer(content: str) -> str | None:
    head = content.lstrip().lower()
    m = re.match(r"<(script|pre|style|textarea)(?=[\s>]|$)", head)
    if m:
        return f"</{m.group(1)}>"
    for opener, closer in (("<!--", "-->"), ("<?", "?>"), ("<![cdata[", "]]>"), ("<!", ">")):
        if head.startswith(opener):
            return closer
    return None


def _close_open_blocks(body: str) -> str:
    """Close a fenced code block or raw HTML block left open at the end of ``body``.

    Left open, it would swallow every following heading of the rendered report.
    """
    if not _OPENER_CANDIDATE.search(body):
        return body
    for _ in range(8):
        sentinel = body.count("\n") + 2
        tokens = MD.parse(body + "\n\n# x\n")
        if any(
            t.type == "heading_open" and t.level == 0 and t.map and t.map[0] == sentinel
            for t in tokens
        ):
            return body
        last = next((t for t in reversed(tokens) if t.level == 0 and t.map is not None), None)
        closer = None
        if last is not None and last.type == "fence":
            closer = last.markup
        elif last is not None and last.type == "html_block":
            closer = _html_closer(last.content)
        if not closer:
            return body
        body = f"{body}\n{closer}"
    return body


def _safe_body(body: str) -> str:
    lines = strip_blank_edges(normalize_newlines(body).split("\n"))
    if not lines:
        return ""
    return escape_heading_lines(_close_open_blocks("\n".join(lines)))


# --------------------------------------------------------------------------- render


def _render_reference(ref: RefEntry) -> str:
    url = ref.url.strip()
    title = one_line(ref.title) or url
    if url:
        line = f"[{ref.marker}] [{_escape_link_text(title)}]({_format_url(url)})"
    else:
        line = f"[{ref.marker}] {_escape_link_text(title)}".rstrip()
    if ref.fetched:
        m = _DATE.match(ref.fetched.strip())
        if m:
            line += f" — fetched {m.group()}"
    return line


#: The line an export writes under the title, generated from the version (see
#: ``core.app.export.version_line``): ``_Version 3 · as of 2026-07-15 · 36 claims, 0 stale ·
#: committed by ana on 2026-07-16_``.
VERSION_LINE = re.compile(
    r"^_Version \d{1,9} · as of \d{4}-\d{2}-\d{2}(?: · [0-9a-z ,]{1,120})?"
    r"(?: · committed by [^\W_][\w .@+-]{0,59} on \d{4}-\d{2}-\d{2})?_$"
)


def strip_version_line(body: str) -> str:
    """``body`` without a leading version line (and the blank lines after it): what an
    exported file that was imported again carries at the top of its preamble."""
    lines = normalize_newlines(body).split("\n")
    start = next((i for i, line in enumerate(lines) if not is_blank(line)), None)
    if start is None or not VERSION_LINE.match(lines[start].strip()):
        return body
    return "\n".join(strip_blank_edges(lines[start + 1 :]))


def render_markdown(doc: ReportDoc, *, version_line: str | None = None) -> str:
    """Render ``doc`` in the canonical form (see the module docstring).

    ``version_line`` (an export's ``_Version n · as of YYYY-MM-DD · …_``, matching
    ``VERSION_LINE``) is written right under the title; a version line already at the top
    of the preamble (an exported file imported again) is replaced, never repeated, so
    ``render(parse(render(doc, version_line=v)), version_line=v)`` is
    ``render(doc, version_line=v)``.

    Normalizations that keep the output parseable into the same structure: headings
    lose control characters and newlines (and a trailing '#' run is escaped); levels
    are clamped to 1..6 (a level-0 section renders its body only); bodies lose
    leading/trailing blank lines, get heading-like lines escaped
    (``escape_heading_lines``) and an unterminated code fence or HTML block closed;
    reference titles are put on one line (an empty title shows the URL) and
    ``fetched`` is shown only when it starts with a YYYY-MM-DD date.
    """
    title = heading_text(doc.title)
    blocks = [f"# {title}" if title else "#"]
    if version_line is not None:
        if not VERSION_LINE.match(version_line):
            raise ValueError(f"Not a version line: {version_line!r}")
        blocks.append(version_line)
    for n, section in enumerate(doc.sections):
        text = section.body
        if version_line is not None and n == 0 and section.level == 0:
            text = strip_version_line(text)
        body = _safe_body(text)
        if section.level >= 1:
            heading = heading_text(section.heading)
            hashes = "#" * min(section.level, 6)
            blocks.append(f"{hashes} {heading}" if heading else hashes)
        if body:
            blocks.append(body)
    if doc.references:
        blocks.append("## References")
        blocks.extend(_render_reference(r) for r in sorted(doc.references, key=lambda r: r.marker))
    return "\n\n".join(blocks) + "\n"

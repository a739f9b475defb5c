"""Export a committed version: Markdown (the structured representation) or PDF.

An exported file starts, under its title, with a line generated from the version —
``_Version 3 · as of 2026-07-15 · 36 claims, 0 stale_`` — so a reader of the file knows
which state of the report it is and how many of its cited sentences still hold.

Everything in a version came from a person, a model or a fetched page, so the Markdown
made here (the export, ``evergreen show``, the app's preview) is made inert first
(``core.domain.untrusted``): raw HTML is escaped, bodies keep no links, images, autolinks or link
definitions (only their text and the ``[n]`` citations), and the only links are the
References' own, to http(s) pages or the ``local://`` pages of a corpus.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import replace
from pathlib import Path
from urllib.parse import urlsplit

from sqlmodel import Session

from core.dates import day
from core.domain.pdf import markdown_to_pdf
from core.domain.report_render import render_markdown
from core.domain.report_state import RefEntry, ReportDoc, renumbered
from core.domain.untrusted import clean_line, clean_markdown, strip_controls
from core.errors import EvergreenError
from core.store.models import CLAIM_STATES, Report, ReportVersion
from core.store.repository import claims_of_version, get_version, load_doc

FORMATS = ("md", "pdf")
LINK_SCHEMES = ("http", "https", "local")  # the References may link to these only

# -- file names ------------------------------------------------------------------------
MAX_NAME_CHARS = 120  # of the title part of a file name; whole words only
MAX_NAME_BYTES = 200  # UTF-8 bytes of it: Linux allows 255 per name, with room for the rest
# path separators and what Windows, macOS or Linux refuse in a name (control characters,
# bidi and zero-width marks are removed separately, by category)
_ILLEGAL = re.compile(r'[<>:"/\\|?*\x00]')
_WINDOWS_RESERVED = re.compile(r"(?i)^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\.|$)")
_WORD_BREAK = re.compile(r"[\s\-–—_,;]+")


def claim_summary(session: Session, version: ReportVersion) -> dict[str, int]:
    """How many claims the version has in all and in each state: the counts the update
    stored (``metrics["claims"]``), else counted from its claims."""
    stored = (version.metrics or {}).get("claims")
    if isinstance(stored, dict) and "claims" in stored:
        counts = {k: int(stored.get(k) or 0) for k in ("claims", *CLAIM_STATES)}
    else:
        counts = dict.fromkeys(("claims", *CLAIM_STATES), 0)
        for _section, claim in claims_of_version(session, int(version.id or 0)):
            counts["claims"] += 1
            counts[claim.state] = counts.get(claim.state, 0) + 1
    return counts


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def version_line(
    number: int,
    as_of: str,
    counts: dict[str, int] | None = None,
    committed: tuple[str, str] | None = None,
) -> str:
    """``_Version n · as of YYYY-MM-DD · N claims, S stale · committed by NAME on
    YYYY-MM-DD_`` (unsupported claims too, if any); without the claims part for a version
    that cites nothing, without the last for one nobody committed (``committed``: who,
    on which day). A name keeps only letters, digits, spaces and ``. @ + -``: it is
    written into Markdown."""
    line = f"_Version {int(number)} · as of {as_of}"
    if counts and counts.get("claims"):
        line += f" · {_plural(counts['claims'], 'claim')}, {counts.get('stale', 0)} stale"
        if counts.get("unsupported"):
            line += f", {counts['unsupported']} unsupported"
    if committed is not None:
        name = " ".join(_UNSAFE_NAME.sub(" ", committed[0]).split())[:60]
        if name:
            line += f" · committed by {name} on {committed[1]}"
    return line + "_"


_UNSAFE_NAME = re.compile(r"[^\w .@+-]|_")


def _inert_reference(ref: RefEntry) -> RefEntry:
    """A reference whose title cannot run or load anything and whose link is kept only
    for an http(s) or ``local://`` address (another scheme leaves the title as text)."""
    title = strip_controls(" ".join(ref.title.split())).replace("<", "&lt;")
    url = ref.url.strip()
    if url and urlsplit(url).scheme.lower() not in LINK_SCHEMES:
        url = ""
    return replace(ref, title=title, url=url)


def inert_doc(doc: ReportDoc) -> ReportDoc:
    """``doc`` with every text made inert for Markdown readers (see the module docstring)."""
    return ReportDoc(
        title=clean_line(doc.title),
        sections=[
            replace(s, heading=clean_line(s.heading), body=clean_markdown(s.body))
            for s in doc.sections
        ],
        references=[_inert_reference(r) for r in doc.references],
    )


def version_markdown(
    session: Session,
    report: Report,
    number: int | None = None,
    *,
    with_version_line: bool = False,
) -> str:
    """The version as canonical, inert Markdown (``inert_doc``), its citations numbered
    1, 2, 3 … in reading order with the References (``core.domain.report_state.renumbered``;
    the stored markers do not change); ``with_version_line`` adds
    the line an exported file carries under its title (version, as-of date, claim counts)."""
    version = get_version(session, report, number)
    doc, _numbers = renumbered(inert_doc(load_doc(session, version)))
    if not with_version_line:
        return render_markdown(doc)
    committed = (version.committed_by, day(version.created_at)) if version.committed_by else None
    line = version_line(
        version.number, day(version.as_of), claim_summary(session, version), committed
    )
    return render_markdown(doc, version_line=line)


def export_version(
    session: Session,
    report: Report,
    path: str | Path,
    *,
    fmt: str = "md",
    number: int | None = None,
) -> Path:
    """Write the version to ``path`` atomically (a temp file renamed into place)."""
    if fmt not in FORMATS:
        raise EvergreenError(f"Unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}.")
    out = Path(path).expanduser()
    if not out.parent.is_dir():
        raise EvergreenError(f"Cannot write {out}: folder {out.parent} does not exist.")
    markdown = version_markdown(session, report, number, with_version_line=True)
    tmp = out.with_name(f".{out.name}.part")
    try:
        if fmt == "md":
            tmp.write_text(markdown, encoding="utf-8")
        else:
            tmp.write_bytes(markdown_to_pdf(markdown))
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise EvergreenError(f"Cannot write {out}: {exc.strerror}.") from None
    return out


def _name_char(ch: str) -> str:
    """A format character (bidi, zero-width) goes; a control, separator, surrogate or
    unassigned one becomes a space; any other (accented letters included) stays."""
    category = unicodedata.category(ch)
    if category == "Cf":
        return ""
    return " " if category[0] in "CZ" else ch


def _name_chars(text: str) -> str:
    """``text`` as file-name characters (``_name_char``, illegal ones as spaces), NFC,
    with whitespace runs folded to one space."""
    kept = "".join(_name_char(ch) for ch in unicodedata.normalize("NFC", text))
    return " ".join(_ILLEGAL.sub(" ", kept).split())


def _fits(text: str) -> bool:
    return len(text) <= MAX_NAME_CHARS and len(text.encode("utf-8")) <= MAX_NAME_BYTES


def _cap_on_word(text: str) -> str:
    """``text`` cut to fit ``MAX_NAME_CHARS`` / ``MAX_NAME_BYTES`` (with the "…" it then
    ends with) at the end of a word; a single word longer than that is cut between two
    characters, never inside one (combining marks stay with their letter)."""
    if _fits(text):
        return text
    cut = ""
    for match in _WORD_BREAK.finditer(text):
        if not _fits(text[: match.start()] + "…"):
            break
        cut = text[: match.start()]
    return (cut or _cut_between_chars(text)).rstrip(" -–—_,;") + "…"


def _cut_between_chars(text: str) -> str:
    end = 0
    while end < len(text) and _fits(text[: end + 1] + "…"):
        end += 1
    while 0 < end < len(text) and unicodedata.combining(text[end]):
        end -= 1
    return text[:end]


def safe_file_stem(text: str, fallback: str = "report") -> str:
    """A file name (without extension) from ``text`` that opens on Windows, macOS and Linux:
    no path separators, control or illegal characters, no leading dot, no trailing dot or
    space, not a reserved Windows device name, capped at a word boundary; accents kept."""
    stem = _cap_on_word(_name_chars(text)).lstrip(". ").rstrip(". ")
    if not stem:
        return fallback
    return f"_{stem}" if _WINDOWS_RESERVED.match(stem) else stem


def export_file_name(title: str, number: int, fmt: str) -> str:
    """The download name of a version: ``Énergie stockée — v3.pdf``."""
    if fmt not in FORMATS:
        raise EvergreenError(f"Unknown export format {fmt!r}: choose one of {', '.join(FORMATS)}.")
    return f"{safe_file_stem(title)} — v{int(number)}.{fmt}"

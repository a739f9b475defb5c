"""Export a committed version: Markdown (the structured representation) or PDF."""

from __future__ import annotations

from pathlib import Path

from sqlmodel import Session

from core.errors import EvergreenError
from core.models import Report
from core.report_state import render_markdown
from core.repository import get_version, load_doc

FORMATS = ("md", "pdf")


def version_markdown(session: Session, report: Report, number: int | None = None) -> str:
    return render_markdown(load_doc(session, get_version(session, report, number)))


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
    markdown = version_markdown(session, report, number)
    tmp = out.with_name(f".{out.name}.part")
    try:
        if fmt == "md":
            tmp.write_text(markdown, encoding="utf-8")
        else:
            from core.pdf import markdown_to_pdf

            tmp.write_bytes(markdown_to_pdf(markdown))
        tmp.replace(out)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise EvergreenError(f"Cannot write {out}: {exc.strerror}.") from None
    return out

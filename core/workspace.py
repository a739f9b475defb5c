"""The sample workspace: a sample corpus and a sample report, loaded once."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from core import config
from core.app.importer import import_report, read_markdown_file
from core.dates import parse_as_of
from core.source_spec import SAMPLE_CORPUS
from core.sources.sample_corpus import ensure_sample_corpus
from core.store.models import Report

__all__ = [
    "SAMPLE_AS_OF",
    "SAMPLE_CORPUS",
    "SAMPLE_QUESTION",
    "ensure_sample_corpus",
    "load_sample",
]

SAMPLE_QUESTION = (
    "Where does grid-scale battery energy storage stand: which technologies, what costs, "
    "which deployments, and which policies shape it?"
)
SAMPLE_AS_OF = "2026-01-15"


def load_sample(session: Session) -> dict[str, Any]:
    """Load the sample corpus and import the sample report, unless already there."""
    corpus = ensure_sample_corpus()
    existing = session.exec(select(Report).where(Report.source == "sample")).first()
    if existing is not None:
        return {
            "corpus": corpus,
            "report_id": existing.id,
            "created": False,
            "message": f"Sample workspace already loaded (report {existing.id}).",
        }
    text = read_markdown_file(config.sample_dir() / "report.md")
    report, summary = import_report(
        session,
        text,
        query=SAMPLE_QUESTION,
        as_of=parse_as_of(SAMPLE_AS_OF),
        source="sample",
    )
    return {
        "corpus": corpus,
        "report_id": report.id,
        "created": True,
        "import": summary,
        "message": (
            f"Loaded the sample workspace: corpus '{SAMPLE_CORPUS}' "
            f"({corpus['read']} page versions) and sample report {report.id} as of "
            f"{SAMPLE_AS_OF}. Try: evergreen update {report.id} --as-of 2026-04-15"
        ),
    }

"""The sample workspace: a sample corpus and a sample report, loaded once."""

from __future__ import annotations

from typing import Any

from sqlmodel import Session, select

from core import config
from core.dates import parse_as_of
from core.errors import NotFoundError
from core.store.models import Report

SAMPLE_CORPUS = "sample"
SAMPLE_QUESTION = (
    "Where does grid-scale battery energy storage stand: which technologies, what costs, "
    "which deployments, and which policies shape it?"
)
SAMPLE_AS_OF = "2026-01-15"


def ensure_sample_corpus() -> dict[str, Any]:
    """Import the sample pages into the ``sample`` corpus (idempotent)."""
    # lazy: a cycle (the source registry makes the sample corpus)
    from core.sources.corpus import add_corpus

    pages = config.sample_dir() / "pages"
    if not pages.is_dir():
        raise NotFoundError(f"The sample workspace is missing ({pages}); reinstall Evergreen.")
    return add_corpus(SAMPLE_CORPUS, pages).as_dict()


def load_sample(session: Session) -> dict[str, Any]:
    """Load the sample corpus and import the sample report, unless already there."""
    # lazy: a cycle (the importer reads source specs)
    from core.app.importer import import_report, read_markdown_file

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

"""The results of the analyst's actions (:mod:`core.app.actions`) as typed models: the
``--json`` contract of ``create``, ``rebuild``, ``import-report``, ``update``, ``resume``,
``review``, ``settings`` and ``delete``. The actions return these models and the CLI
prints them, so a field cannot go missing or change type unnoticed, and
``core/app/cli_results.schema.json`` (written by ``python -m core.app.cli_results``) documents it
for scripts; a test keeps the file and the models the same."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

SCHEMA_FILE = Path(__file__).resolve().with_suffix(".schema.json")


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Cost(_Result):
    """What a run spent."""

    llm_calls: int
    tokens_in: int
    tokens_out: int
    searches: int
    fetches: int
    seconds: float | None = None


class ClaimCounts(_Result):
    """A version's cited sentences by the state of their anchors."""

    claims: int
    supported: int
    unsupported: int
    unresolved: int
    stale: int


class Continuity(BaseModel):
    """How much of the previous version the new one keeps (and its claim counts)."""

    model_config = ConfigDict(extra="allow")  # a version's metrics may carry more

    content_rouge_l: float | None = None
    content_bleu4: float | None = None
    outline_rouge_l: float | None = None
    outline_em_f1: float | None = None
    claims: ClaimCounts | None = None


class Created(_Result):
    """``create`` and ``rebuild``: version 1 of a report researched from scratch."""

    report_id: int
    version: int
    sections: int
    sources: int
    run_id: int
    claims: ClaimCounts
    cost: Cost


class UnsupportedClaim(_Result):
    section: str
    marker: int
    sentence: str
    missing: list[str]


class Imported(_Result):
    """``import-report``: version 1 of a report written elsewhere."""

    report_id: int
    version: int
    sections: int
    references: int
    uncited_references: list[int]
    untracked_references: list[int]
    claims: ClaimCounts
    unsupported_claims: list[UnsupportedClaim]
    unresolved_references: list[int]


class Updated(_Result):
    """``update`` and ``resume``: a run and, once committed, its version
    (``version`` and the counts are null while it awaits review)."""

    report_id: int
    run_id: int
    status: str
    version: int | None
    actions: dict[str, int]
    evidence: dict[str, int]
    cost: Cost
    writer_calls: int
    continuity: Continuity | None
    stale_citations: int | None  # the same number as stale_claims, kept for old scripts
    stale_claims: int | None
    claims: ClaimCounts | None


class ProposalRow(_Result):
    key: str
    heading: str
    action: str
    decision: str
    rationale: str


class Reviewed(Updated):
    """``review``: the run as ``update`` gives it, and each section's proposal."""

    proposals: list[ProposalRow]


class SettingsShown(_Result):
    """``settings``: a report's settings an analyst sets (:class:`ReportSettings`)."""

    report_id: int
    tau: float
    concurrency: int
    max_sections: int
    max_sources: int
    max_section_words: int
    writer: str | None
    every_days: int | None


class DeletedCounts(_Result):
    reports: int
    versions: int
    runs: int
    snapshots: int
    sources: int


class Deleted(_Result):
    """``delete``: what deleting a report removed for good."""

    report_id: int
    deleted: DeletedCounts


class Failed(_Result):
    """Any command run with ``--json`` that fails: this object on stdout (and the same
    message as one line on stderr), with the exit code. ``kind``: ``error`` (the message
    says what to do), ``busy`` (another run or command holds the report or the workspace:
    try again), ``stopped`` (cancelled, or taken over by another process), ``interrupted``
    (Ctrl-C: exit code 130) or ``usage`` (the command line itself: exit code 2)."""

    error: str
    kind: str
    exit_code: int


RESULTS: dict[str, type[BaseModel]] = {
    "create": Created,
    "rebuild": Created,
    "import-report": Imported,
    "update": Updated,
    "resume": Updated,
    "review": Reviewed,
    "settings": SettingsShown,
    "delete": Deleted,
}


def as_json_data(result: BaseModel) -> dict[str, Any]:
    """A result as the CLI prints it with ``--json``: JSON-ready data in the model's field
    order, a field the action left out (e.g. a cost without seconds) left out too."""
    return result.model_dump(mode="json", exclude_unset=True)


def schema() -> dict[str, Any]:
    """One JSON Schema document with a definition per command's result."""
    models = dict.fromkeys([*RESULTS.values(), Failed])
    defs: dict[str, Any] = {}
    for model in models:
        one = model.model_json_schema(ref_template="#/$defs/{model}")
        defs.update(one.pop("$defs", {}))
        defs[model.__name__] = one
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "Evergreen CLI --json results",
        "description": __doc__.split("\n\n")[0].replace("\n", " "),
        "commands": {cmd: f"#/$defs/{model.__name__}" for cmd, model in RESULTS.items()},
        "failure": f"#/$defs/{Failed.__name__}",
        "$defs": dict(sorted(defs.items())),
    }


def write_schema(path: Path = SCHEMA_FILE) -> Path:
    path.write_text(json.dumps(schema(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


if __name__ == "__main__":  # python -m core.app.cli_results: rewrite the schema file
    sys.stdout.write(f"{write_schema()}\n")

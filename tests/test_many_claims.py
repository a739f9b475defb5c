"""A version with many claims is read in time linear in its size: its sections are read
once, not once per claim (each claim row carrying its section's whole body made a
10,000-citation import take minutes and gigabytes; BENCHMARKS.md)."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import event

from core.app.importer import import_report
from core.store.db import get_engine, session_scope
from core.store.repository import claims_of_version, get_version


def _report(claims: int, refs: int) -> str:
    lines = ["# Many claims", "", "## Findings", ""]
    lines += [
        f"Capacity fact {i} grew by {i % 97} percent [{i % refs + 1}]." for i in range(claims)
    ]
    lines += ["", "## References", ""]
    lines += [f"[{r}] [Page {r}](https://pages.example/p{r})" for r in range(1, refs + 1)]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("workspace", ["sqlite"], indirect=True)
def test_a_version_s_claims_read_each_section_once(workspace: Path) -> None:
    with session_scope() as session:
        report, _ = import_report(session, _report(400, 20), query="Storage?", source="web")
        version_id = int(get_version(session, report).id)
    statements: list[str] = []

    def seen(_conn, _cursor, statement, *_args) -> None:  # noqa: ANN001
        statements.append(statement)

    engine = get_engine()
    event.listen(engine, "before_cursor_execute", seen)
    try:
        with session_scope() as session:
            pairs = claims_of_version(session, version_id)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    assert len(pairs) == 400 and len({id(section) for section, _ in pairs}) == 1
    assert [claim.position for _, claim in pairs] == sorted(c.position for _, c in pairs)
    together = [s for s in statements if "section.body" in s and "claim." in s.split("FROM")[0]]
    assert not together, together  # no row carries a claim and its section's body

"""Discovery's new pages come out in one order whatever order their fetches finish in:
relevance fuses the search's own ranking with the semantic score, so the search order —
not the order of arrival — is the lexical ranking, and the reference numbers new pages
get follow from it. (Before, an update's report could differ from one run to the next.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import core.engine.fetching
from core.dates import as_utc, parse_as_of
from core.engine.costs import CostMeter
from core.engine.discovery import discover
from core.sources.registry import providers_for
from core.store.db import session_scope
from core.store.repository import get_report, get_version, sections_of
from core.workspace import load_sample

WINDOW_END = "2026-04-15"


def _found(arrival: str, monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, int]]:
    """The new pages of the sample's first window (url, marker), fetched in ``arrival``
    order, then rolled back so the next call starts from the same pool."""
    real = core.engine.fetching.fetch_stream

    def arriving(*args: Any, **kwargs: Any) -> Iterator[Any]:
        pages = list(real(*args, **kwargs))
        pages.sort(key=lambda pair: pair[0], reverse=arrival == "backwards")
        return iter(pages)

    monkeypatch.setattr(core.engine.fetching, "fetch_stream", arriving)
    providers = providers_for("sample")
    try:
        with session_scope() as session:
            report = get_report(session, 1)
            base = get_version(session, report)
            found = discover(
                session,
                report,
                question=report.query,
                sections=[(s.key, s.heading, s.body) for s in sections_of(session, base.id)],
                hot_sections=set(),
                window=(as_utc(base.as_of), as_utc(parse_as_of(WINDOW_END))),
                search=providers.search,
                fetcher=providers.fetcher,
                meter=CostMeter(),
                run_id=None,
                temporal=providers.temporal,
            )
            out = [(f.evidence.url, f.evidence.marker) for f in found]
            session.rollback()
    finally:
        providers.close()
        monkeypatch.setattr(core.engine.fetching, "fetch_stream", real)
    return out


def test_new_pages_keep_the_search_order_whatever_order_their_fetches_finish(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with session_scope() as session:
        load_sample(session)
    forwards = _found("forwards", monkeypatch)
    backwards = _found("backwards", monkeypatch)
    assert len(forwards) >= 2, "the sample's first window has several new pages"
    assert backwards == forwards

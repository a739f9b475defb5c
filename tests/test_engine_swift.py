"""The engine on a slice of the real Swift Evolution corpus: statuses live in Markdown
bullet headers (``* Status: **Implemented (Swift 5.5)**``), a layout the PEP corpus does
not have, and every status change a cited proposal goes through reaches the report."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from core.dates import parse_as_of
from core.engine.creation import create_report
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import Source
from core.store.repository import citations_of, claims_of_version, get_report, get_version

SWIFT = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "swift"


def swift_slice(tmp_path: Path, numbers: set[int]) -> Path:
    corpus = SWIFT / "swift_corpus.jsonl.gz"
    if not corpus.exists():
        pytest.skip("the shared Swift corpus is not beside this checkout")
    out = tmp_path / "swift_slice.jsonl.gz"
    with gzip.open(corpus, "rt", encoding="utf-8") as src, gzip.open(out, "wt") as dst:
        for line in src:
            if json.loads(line)["se"] in numbers:
                dst.write(line)
    return out


def _statuses(report_id: int, url_part: str) -> str:
    """What the report's sentences citing the page at ``url_part`` say."""
    with session_scope() as s:
        version = get_version(s, get_report(s, report_id))
        claims = claims_of_version(s, version.id)
        assert all(c.state != "stale" for _s, c in claims)
        markers = {
            m
            for m, snap in citations_of(s, version.id).items()
            if url_part in s.get(Source, snap.source_id).url
        }
        return " ".join(c.sentence for _s, c in claims if c.marker in markers)


def test_swift_status_changes_reach_the_report(workspace: Path, tmp_path: Path) -> None:
    add_corpus("swift", swift_slice(tmp_path, {296, 297, 302, 304, 306, 311, 313}))
    created = create_report(
        "How is Swift concurrency evolving: async/await, actors and Sendable?",
        as_of=parse_as_of("2020-12-31"),
        source="corpus:swift",
    )
    rid = created["report_id"]
    before = _statuses(rid, "0296-async-await")
    assert "Status: Accepted" in before
    result = update_report(rid, as_of=parse_as_of("2021-12-31"), approve_all=True)
    assert result["stale_claims"] == 0
    after = _statuses(rid, "0296-async-await")
    assert "Implemented (Swift 5.5)" in after and "Status: Accepted" not in after
    update_report(rid, as_of=parse_as_of("2022-12-31"), approve_all=True)
    objc = _statuses(rid, "0297-concurrency-objc")
    assert "Implemented (Swift 5.5)" in objc and "Accepted with modifications" not in objc

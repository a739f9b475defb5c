"""Whether a bench's final long-chain reports put each page under the facet it is about.

A proxy that does not depend on the embedding model: of the pages a report cites whose
title shares a content word with exactly one of its facet headings ("Unsafe pointer
APIs" and "Make unsafe pointer nullability explicit"), the share that sits in that
facet's section (or in a part split off it, "Unsafe pointer APIs: …"). Pages whose title
names no heading, or several, are not counted.

    python scripts/facet_placement.py BENCH_OUT [BENCH_OUT …]

``BENCH_OUT`` is a ``evergreen bench --out`` folder (its ``db/`` holds one database per
question).
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.domain.citations import cited_markers  # noqa: E402
from core.domain.text import terms  # noqa: E402
from core.engine.overview import DERIVED_HEADINGS  # noqa: E402


def _final_sections(db: sqlite3.Connection) -> tuple[list[tuple[str, str]], dict[int, str]]:
    """(heading, body) of each section of the long-chain report's newest version (the
    report with most versions), and marker → the title of the page it cites."""
    (report,) = db.execute(
        "SELECT report_id FROM reportversion GROUP BY report_id ORDER BY COUNT(*) DESC LIMIT 1"
    ).fetchone()
    (version,) = db.execute(
        "SELECT id FROM reportversion WHERE report_id = ? ORDER BY id DESC LIMIT 1", (report,)
    ).fetchone()
    sections = db.execute(
        'SELECT heading, body FROM section WHERE version_id = ? ORDER BY "order"', (version,)
    ).fetchall()
    titles = dict(
        db.execute(
            "SELECT c.marker, sn.title FROM citation c JOIN section se ON se.id = c.section_id "
            "JOIN snapshot sn ON sn.id = c.snapshot_id WHERE se.version_id = ?",
            (version,),
        ).fetchall()
    )
    return sections, titles


def placed(db: sqlite3.Connection) -> tuple[int, int]:
    """(pages in the section their title names, pages whose title names one section)."""
    sections, titles = _final_sections(db)
    own = [(h, b) for h, b in sections if h and h not in DERIVED_HEADINGS]
    facets = {h: set(terms(h)) for h, _b in own if ":" not in h}
    right = counted = 0
    for heading, body in own:
        facet = heading.split(":", 1)[0]
        for marker in set(cited_markers(body)):
            words = set(terms(titles.get(marker) or ""))
            named = [f for f, fw in facets.items() if fw & words]
            if len(named) == 1:
                counted += 1
                right += named[0] == facet
    return right, counted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", nargs="+", type=Path, help="evergreen bench --out folders")
    args = parser.parse_args()
    for out in args.out:
        dbs = sorted((out / "db").glob("*.db"))
        if not dbs:
            print(f"error: {out} holds no db/*.db: give a folder `evergreen bench --out` wrote")
            return 2
        right = counted = 0
        for path in dbs:
            try:
                with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as db:
                    r, c = placed(db)
            except (sqlite3.DatabaseError, TypeError) as exc:
                print(f"error: {path} is not a bench database ({exc})")
                return 2
            right, counted = right + r, counted + c
        share = f"{right / counted:.2f}" if counted else "-"
        print(f"{out}: {right} of {counted} pages sit under the facet their title names ({share})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

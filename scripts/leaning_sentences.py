"""How many sentences of a bench's final long-chain reports lean on a sentence the report
does not carry: a sentence that refers back ("It is …", "… welcomed this provision",
"The second is …"; ``core.domain.sentences.refers_back``) and is not preceded, in its
paragraph, by the sentence before it in its page. Quoted so, it reads as being about
whatever the report said last.

The detector is the one the offline writer obeys, so for that writer this counts what
the rule catches, not what a reader would: it shows a change to the rule at work on
every report, with examples to read.

    python scripts/leaning_sentences.py BENCH_OUT [--examples 5]

``BENCH_OUT`` is a ``evergreen bench --out`` folder (its ``db/`` holds one database per
question).
"""

from __future__ import annotations

import argparse
import re
import sqlite3
import sys
from pathlib import Path

from rapidfuzz import fuzz

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.domain.citations import cited_markers, strip_citations  # noqa: E402
from core.domain.page_units import split_sentences  # noqa: E402
from core.domain.sentences import refers_back, self_reference  # noqa: E402
from core.domain.text import quotable_sentences  # noqa: E402

SAME = 85  # rapidfuzz ratio at which a report's sentence is taken for a page's


def _final_version(db: sqlite3.Connection) -> tuple[int, int]:
    """(report, its newest version) of the long-chain report: the one with most versions."""
    report = db.execute(
        "SELECT report_id FROM reportversion GROUP BY report_id ORDER BY COUNT(*) DESC LIMIT 1"
    ).fetchone()[0]
    version = db.execute(
        "SELECT MAX(id) FROM reportversion WHERE report_id = ?", (report,)
    ).fetchone()[0]
    return report, version


def _carries_its_antecedent(sentence: str, before: str, pages: list[str]) -> bool:
    """Is ``before`` the sentence that precedes ``sentence`` in one of ``pages``?"""
    for content in pages:
        quoted = quotable_sentences(content)
        at = max(range(len(quoted)), key=lambda j: fuzz.ratio(quoted[j], sentence), default=-1)
        if at > 0 and fuzz.ratio(quoted[at - 1], before) > SAME:
            return True
    return False


def count(db_path: Path) -> tuple[int, int, list[tuple[str, str]]]:
    """(sentences, those quoted without their antecedent, examples as (before, sentence))."""
    db = sqlite3.connect(db_path)
    report, version = _final_version(db)
    content = dict(
        db.execute(
            "SELECT p.marker, s.content FROM poolentry p JOIN snapshot s "
            "ON s.id = p.latest_snapshot_id WHERE p.report_id = ?",
            (report,),
        ).fetchall()
    )
    bodies = db.execute(
        "SELECT body FROM section WHERE version_id = ? AND key NOT IN ('overview', 'key-facts')",
        (version,),
    ).fetchall()
    total, alone, examples = 0, 0, []
    for (body,) in bodies:
        for paragraph in re.split(r"\n\s*\n", body):
            if paragraph.lstrip().startswith(("|", "-", "*")):
                continue  # a table or a list: no running prose
            sentences = split_sentences(paragraph)
            for i, raw in enumerate(sentences):
                total += 1
                sentence = strip_citations(raw).strip()
                if not refers_back(sentence) or self_reference(sentence):
                    continue
                before = strip_citations(sentences[i - 1]).strip() if i else ""
                nxt = sentences[i + 1] if i + 1 < len(sentences) else ""
                markers = cited_markers(raw) or cited_markers(nxt)  # an uncited lead's
                pages = [content[m] or "" for m in markers if m in content]
                if not before or not _carries_its_antecedent(sentence, before, pages):
                    alone += 1
                    examples.append((before, sentence))
    return total, alone, examples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="an `evergreen bench --out` folder")
    parser.add_argument("--examples", type=int, default=0)
    args = parser.parse_args()
    dbs = sorted((args.out / "db").glob("*.db"))
    if not dbs:
        print(f"No question databases in {args.out / 'db'}: give a bench's --out folder.")
        return 2
    total = alone = 0
    shown: list[tuple[str, str]] = []
    for db in dbs:
        try:
            t, a, ex = count(db)
        except (sqlite3.DatabaseError, TypeError) as exc:  # not a bench database, or empty
            print(f"{db} is not a bench question's database ({exc}): give a bench's --out folder.")
            return 2
        total, alone = total + t, alone + a
        shown += ex
        print(f"{db.stem}: {a} of {t} sentences without the sentence they lean on")
    print(f"all: {alone} of {total} ({alone / max(1, total):.1%})")
    for before, sentence in shown[: args.examples]:
        print(f"  after: …{before[-80:]}\n  comes: {sentence[:160]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

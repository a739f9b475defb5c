"""Load: many scheduled reports on a local corpus, updated by `evergreen update --due`.

Builds a synthetic two-snapshot corpus (one topic per report), creates the reports as of
the first snapshot with a daily schedule, then times `evergreen update --due --workers N`
as a whole process (via /usr/bin/time -v for peak memory) on a copy of the workspace for
each N. Prints throughput, peak memory, p50/p95 update wall time, and checks that every
report got exactly one run (none lost, none duplicated).

Usage: python scripts/load_due.py [--reports 200] [--pages 40] [--workers 1 2 4] [--db URL]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

WORDS = (
    "storage grid battery solar wind hydrogen nuclear transmission tariff subsidy "
    "capacity auction market demand supply price forecast policy permit project"
).split()


def page(topic: int, i: int, as_of: str, rev: int = 0) -> dict:
    w = [WORDS[(topic + i + k) % len(WORDS)] for k in range(6)]
    name = f"zone{topic:03d}"
    body = " ".join(
        [
            f"The {name} {w[0]} {w[1]} programme {i} reached {100 + 7 * i + 13 * rev} units.",
            f"Analysts in {name} expect {w[2]} {w[3]} costs to move as {w[4]} demand grows.",
            f"Regulators in {name} reviewed the {w[5]} rules for programme {i} this year.",
            f"Operators in {name} plan {3 + i + rev} new {w[1]} sites under the {w[0]} plan.",
            f"The {w[3]} outlook for {name} programme {i} depends on {w[2]} prices.",
        ]
    )
    return {
        "url": f"https://load.invalid/{name}/{i}",
        "title": f"{name} {w[0]} {w[1]} {i}",
        "as_of": as_of,
        "content": body,
    }


def build_corpus(path: Path, reports: int, pages: int) -> None:
    with path.open("w", encoding="utf-8") as fh:
        for t in range(reports):
            for i in range(pages):
                fh.write(json.dumps(page(t, i, "2025-01-01")) + "\n")
            for i in range(0, pages, 5):  # a fifth of the pages change a figure
                fh.write(json.dumps(page(t, i, "2025-06-01", rev=1)) + "\n")
            for i in range(pages, pages + 3):  # three new pages per topic
                fh.write(json.dumps(page(t, i, "2025-06-01")) + "\n")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--reports", type=int, default=200)
    ap.add_argument("--pages", type=int, default=40)
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    ap.add_argument("--db", default=None, help="a PostgreSQL admin URL (default: SQLite)")
    args = ap.parse_args()
    base = Path(tempfile.mkdtemp(prefix="eg-load-"))
    home = base / "ws"
    os.environ["EVERGREEN_HOME"] = str(home)
    if args.db:
        os.environ["EVERGREEN_DB"] = args.db
    from sqlalchemy import text

    from core.dates import parse_as_of
    from core.engine.creation import create_report
    from core.sources.corpus import add_corpus
    from core.store.db import dispose_engine, get_engine, session_scope

    corpus = base / "load.jsonl"
    build_corpus(corpus, args.reports, args.pages)
    add_corpus("load", corpus)
    t0 = time.perf_counter()
    settings = {"every_days": 1, "results_per_query": 14, "section_results": 8}
    for t in range(args.reports):
        create_report(
            f"What is happening in zone{t:03d} programmes, costs and rules?",
            as_of=parse_as_of("2025-03-01"),
            source="corpus:load",
            settings=settings,
        )
    setup = time.perf_counter() - t0
    with session_scope() as s:
        sizes = [
            n for (n,) in s.exec(text("SELECT COUNT(*) FROM poolentry GROUP BY report_id")).all()
        ]  # type: ignore[call-overload]
        # the creations happened just now: make them a day old so the schedule is due
        s.exec(
            text("UPDATE updaterun SET started_at = started_at - INTERVAL '2 days'")
            if args.db
            else text("UPDATE updaterun SET started_at = datetime(started_at, '-2 days')")
        )  # type: ignore[call-overload]
    print(
        f"setup: {args.reports} reports, {statistics.mean(sizes):.1f} sources each "
        f"(min {min(sizes)}, max {max(sizes)}), created in {setup:.0f} s",
        flush=True,
    )
    dispose_engine(os.environ.get("EVERGREEN_DB") or str(get_engine().url))
    results = []
    for workers in args.workers:
        ws = base / f"ws{workers}"
        env = {**os.environ, "EVERGREEN_HOME": str(ws)}
        shutil.copytree(home, ws)  # the corpus index (and, on SQLite, the database)
        if args.db:  # PostgreSQL: a copy of the database for each worker count
            env["EVERGREEN_DB"] = _copy_pg(args.db, workers)
        cmd = [
            "/usr/bin/time",
            "-v",
            sys.executable,
            "-m",
            "core.cli",
            "update",
            "--due",
            "--workers",
            str(workers),
            "--json",
        ]
        start = time.perf_counter()
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
        wall = time.perf_counter() - start
        peak = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", proc.stderr)[1])
        rows = json.loads(proc.stdout)
        os.environ.update({k: v for k, v in env.items() if k.startswith("EVERGREEN_")})
        with session_scope() as s:
            runs = s.exec(
                text("SELECT report_id, status, timings FROM updaterun WHERE kind = 'update'")
            ).all()  # type: ignore[call-overload]
        per_report: dict[int, int] = {}
        walls = []
        for report_id, status, timings in runs:
            per_report[report_id] = per_report.get(report_id, 0) + 1
            data = json.loads(timings) if isinstance(timings, str) else timings
            if status == "awaiting_review":
                walls.append(data["wall"])
        walls.sort()
        result = {
            "workers": workers,
            "reports": args.reports,
            "wall_s": round(wall, 1),
            "reports_per_s": round(args.reports / wall, 2),
            "peak_mib": round(peak / 1024, 1),
            "update_p50_s": round(statistics.median(walls), 3) if walls else None,
            "update_p95_s": round(walls[int(len(walls) * 0.95) - 1], 3) if walls else None,
            "awaiting_review": len(walls),
            "failed": sum(1 for r in rows if r["status"] not in ("awaiting_review",)),
            "lost": args.reports - len(per_report),
            "duplicated": sum(1 for n in per_report.values() if n > 1),
            "exit": proc.returncode,
        }
        results.append(result)
        print(json.dumps(result), flush=True)
        dispose_engine(env.get("EVERGREEN_DB") or f"sqlite:///{ws / 'evergreen.db'}")
    return 0 if all(r["lost"] == r["duplicated"] == r["failed"] == 0 for r in results) else 1


def _copy_pg(admin: str, workers: int) -> str:
    import sqlalchemy as sa

    url = sa.engine.make_url(admin)
    source, target = url.database, f"{url.database}_w{workers}"
    engine = sa.create_engine(url.set(database="postgres"), isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{target}"'))
        conn.execute(sa.text(f'CREATE DATABASE "{target}" TEMPLATE "{source}"'))
    return url.set(database=target).render_as_string(hide_password=False)


if __name__ == "__main__":
    sys.exit(main())

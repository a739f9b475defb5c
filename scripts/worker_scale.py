"""Update rounds on `evergreen worker` processes (PostgreSQL): reports per minute with
1, 2 and 3 workers on network-bound updates, and a worker killed with kill -9 mid-round.

The world is scripts/pool_scale.py's (imported web reports citing overlapping pages of a
loopback site, here with more latency per request); this process serves the site and the
fake search, the workers fetch from it over 127.0.0.1. Each measured round is
``evergreen update --all --force-recheck --wait``: every report re-reads its 30 pages
(network-bound: the site answers after ``--latency`` seconds, two requests at a time per
run), then the round's runs are approved and committed here before the next one.

Counted per round: wall time (queueing to the last run's end), reports per minute, and
from the database: runs started per report in the round (exactly one: none lost, none
duplicated), their final states, and runs taken over from a dead worker (lease > 1).

    python scripts/worker_scale.py --db postgresql+psycopg://USER:PW@127.0.0.1:5432/eg_workers \\
        --reports 60 --workers 1 2 3 --kill --out /tmp/worker-scale.json
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

WORKER_ENV = {  # a killed worker is taken for dead after 5 s of silence
    "EVERGREEN_WORKER_HEARTBEAT": "1",
    "EVERGREEN_WORKER_STALLED": "5",
    "EVERGREEN_WORKER_POLL": "0.5",
}


def fresh_database(url: str) -> None:
    """Drop and create the database the URL names (on the same server)."""
    import psycopg
    from sqlalchemy.engine import make_url

    target = make_url(url)
    name = target.database
    admin = target.set(drivername="postgresql", database="postgres")
    conn = psycopg.connect(admin.render_as_string(hide_password=False), autocommit=True)
    try:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    finally:
        conn.close()


class Workers:
    """``evergreen worker`` processes, started and stopped as a group."""

    def __init__(self) -> None:
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, n: int, logs: Path) -> None:
        from core.engine.queue import live_workers

        before = live_workers()
        for _ in range(n):
            log = open(logs / f"worker-{len(self.procs)}.log", "ab")  # noqa: SIM115
            self.procs.append(
                subprocess.Popen(
                    [sys.executable, "-m", "core.cli", "worker", "-c", "1"],
                    cwd=ROOT,
                    env={**os.environ, **WORKER_ENV},
                    stdout=log,
                    stderr=log,
                    start_new_session=True,
                )
            )
        deadline = time.monotonic() + 120
        while live_workers() < before + n:
            if time.monotonic() > deadline:
                raise SystemExit("the workers did not start (see their logs)")
            time.sleep(0.2)

    def kill_one(self) -> int:
        proc = self.procs.pop(0)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return proc.pid

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
        self.procs.clear()


def round_on_workers(
    report_ids: list[int], workers: Workers, n: int, logs: Path, *, kill_after: float = 0
) -> dict[str, Any]:
    """One update round of every report on ``n`` workers; with ``kill_after`` (a share of
    the round), one worker is killed -9 once that share of the runs has ended."""
    from sqlmodel import col, select

    from core.app.actions import review
    from core.store.db import session_scope
    from core.store.models import UpdateRun

    with session_scope() as s:
        last = max([0, *s.exec(select(UpdateRun.id)).all()])
    workers.start(n, logs)
    start = time.perf_counter()
    cli = subprocess.Popen(
        [sys.executable, "-m", "core.cli", "update", "--all", "--force-recheck", "--wait",
         "--json"],
        cwd=ROOT, env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip
    killed = None
    if kill_after:
        while killed is None and cli.poll() is None:
            with session_scope() as s:
                ended = s.exec(
                    select(UpdateRun.id).where(
                        UpdateRun.id > last, UpdateRun.status == "awaiting_review"
                    )
                ).all()
            if len(ended) >= kill_after * len(report_ids):
                killed = workers.kill_one()
            time.sleep(0.2)
    out, err = cli.communicate()
    wall = time.perf_counter() - start
    workers.stop()
    if cli.returncode != 0:
        raise SystemExit(f"update --all failed: {err.decode()[-2000:]}")
    rows = json.loads(out)
    with session_scope() as s:
        runs = s.exec(select(UpdateRun).where(UpdateRun.id > last)).all()
        per_report: dict[int, int] = {}
        for run in runs:
            per_report[run.report_id] = per_report.get(run.report_id, 0) + 1
        statuses: dict[str, int] = {}
        for run in runs:
            statuses[run.status] = statuses.get(run.status, 0) + 1
        taken_over = sum(1 for run in runs if run.lease > 1)
        waiting = [r.id for r in runs if r.status == "awaiting_review"]
    for run_id in waiting:
        review(run_id, approve_all=True, commit=True)
    with session_scope() as s:
        committed = len(
            s.exec(
                select(UpdateRun.id).where(
                    col(UpdateRun.id).in_(waiting), UpdateRun.status == "committed"
                )
            ).all()
        )
    return {
        "workers": n,
        "wall_s": round(wall, 1),
        "reports_per_minute": round(len(report_ids) / wall * 60, 1),
        "reports": len(report_ids),
        "rows": len(rows),
        "lost": sum(1 for rid in report_ids if per_report.get(rid, 0) == 0),
        "duplicated": sum(1 for n_runs in per_report.values() if n_runs > 1),
        "statuses": statuses,
        "taken_over_from_a_dead_worker": taken_over,
        "committed": committed,
        "killed_worker_pid": killed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--db", required=True, help="a PostgreSQL database URL (recreated)")
    ap.add_argument("--reports", type=int, default=60)
    ap.add_argument("--sources", type=int, default=30)
    ap.add_argument("--latency", type=float, default=0.1, help="seconds per request")
    ap.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--kill", action="store_true", help="also a round with a worker killed")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()

    home = Path(tempfile.mkdtemp(prefix="evergreen-worker-scale-"))
    logs = home / "logs"
    logs.mkdir()
    fresh_database(args.db)
    os.environ.update({"EVERGREEN_HOME": str(home), "EVERGREEN_DB": args.db})
    os.environ.pop("EVERGREEN_JOBS", None)
    from pool_scale import build_site, report_markdown

    from tests.fakes.tavily_server import FakeTavily
    from tests.fakes.website import Page, Website

    world = build_site(args.reports, args.sources, 0.6, 7)
    site = Website({p: Page(v) for p, v in world["pages"].items()},
                   latency=args.latency, validators=True)  # fmt: skip
    with site, FakeTavily(lambda body: [], key="tvly-scale") as tavily:
        os.environ.update(
            {
                "TAVILY_API_KEY": "tvly-scale",
                "TAVILY_BASE_URL": tavily.url,
                "EVERGREEN_FETCH_ALLOWLIST": "127.0.0.1",
                "EVERGREEN_FETCH_DELAY": "0",
                "EVERGREEN_FETCH_BROWSER": "http",
                "EVERGREEN_FETCH_PER_HOST": "2",
                "EVERGREEN_TAVILY_RAW_CONTENT": "false",
                "EVERGREEN_CONFIG": str(home / "none.toml"),
                "EVERGREEN_LLM": "offline",
            }
        )
        from core.app.importer import import_report
        from core.engine.schedule import save_report_settings
        from core.store.db import session_scope

        report_ids = []
        for r in world["reports"]:
            with session_scope() as s:
                report, _ = import_report(
                    s, report_markdown(r, world["first"], site.link), query=r["question"],
                    source="web",
                )  # fmt: skip
                s.flush()
                save_report_settings(s, report, max_sources=0, max_section_words=0)
                report_ids.append(int(report.id))
        workers = Workers()
        results: list[dict[str, Any]] = []
        try:
            # the first update reads every imported citation: not measured
            warm = round_on_workers(report_ids, workers, max(args.workers), logs)
            print("warm-up", warm, file=sys.stderr, flush=True)
            for n in args.workers:
                results.append(round_on_workers(report_ids, workers, n, logs))
                print(results[-1], file=sys.stderr, flush=True)
            if args.kill:
                n = max(args.workers)
                results.append(round_on_workers(report_ids, workers, n, logs, kill_after=0.3))
                print(results[-1], file=sys.stderr, flush=True)
        finally:
            workers.stop()
    one = next((r for r in results if r["workers"] == 1 and not r["killed_worker_pid"]), None)
    for r in results:
        if one:
            r["speedup_vs_1"] = round(one["wall_s"] / r["wall_s"], 2)
    text = json.dumps({"rounds": results, "latency_s": args.latency}, indent=2)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()

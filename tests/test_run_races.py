"""Run state changes under contention: real processes race each transition of one run
(take-over by resume, cancel, commit) and exactly one of them wins; the losers are told
why and nothing is written twice. Every test runs on SQLite and on PostgreSQL."""

from __future__ import annotations

import multiprocessing as mp
import os
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import update
from sqlmodel import col, select

from core.dates import parse_as_of
from core.errors import EvergreenError
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import ReportVersion, Section, SectionProposal, UpdateRun
from tests.conftest import run_cli, write_jsonl
from tests.helpers.corpus import corpus_records, make_report

AS_OF = "2024-06-30"
TIMEOUT = 240  # a hang guard for the racing processes, never a synchronisation


@pytest.fixture
def report(workspace: Path, tmp_path: Path) -> int:
    add_corpus("fx", write_jsonl(tmp_path / "fx.jsonl", corpus_records()))
    return make_report("corpus:fx")


# -- the racing processes -------------------------------------------------------------------
def _act(role: str, run_id: int) -> str:
    """One contender's move, as the CLI makes it (`resume`, `cancel`, `review --commit`)."""
    if role == "resume":
        from core.engine.update import resume_run

        return str(resume_run(run_id)["status"])
    if role == "cancel":
        from core.engine.runs import request_cancel

        return request_cancel(run_id)
    if role == "commit":
        from core.app.actions import review

        return str(review(run_id, approve_all=True, commit=True).status)
    raise ValueError(role)


STOPPED = ("RunCancelled", "RunLost")  # took the run over, then was cancelled or lost it


def _contender(role: str, run_id: int, barrier: Any, results: Any, env: dict[str, str]) -> None:
    for name in [n for n in os.environ if n.startswith("EVERGREEN_")]:
        os.environ.pop(name)
    os.environ.update(env)  # the test's workspace (a forked child has the server's)
    barrier.wait()  # everyone moves at once
    try:
        results.put((role, "won", _act(role, run_id)))
    except EvergreenError as exc:
        results.put((role, "refused", str(exc)))
    except BaseException as exc:  # a stop, or a defect: reported, not hidden
        kind = "stopped" if type(exc).__name__ in STOPPED else "error"
        results.put((role, kind, f"{type(exc).__name__}: {exc}"))


def race(roles: list[str], run_id: int) -> list[tuple[str, str, str]]:
    """Start one process per role; they meet at a barrier, then all act on the run.

    The processes are forked from a server process that imported the core once (each
    spawned Python would spend seconds importing it): new processes all the same, none
    with this process's connections or threads."""
    ctx = mp.get_context("forkserver")
    ctx.set_forkserver_preload([__name__])
    env = {name: value for name, value in os.environ.items() if name.startswith("EVERGREEN_")}
    barrier = ctx.Barrier(len(roles))
    results = ctx.Queue()
    procs = [
        ctx.Process(target=_contender, args=(role, run_id, barrier, results, env)) for role in roles
    ]
    for p in procs:
        p.start()
    for p in procs:  # each puts one small result, then exits
        p.join(timeout=TIMEOUT)
        if p.is_alive():
            p.kill()
    assert all(p.exitcode == 0 for p in procs), [p.exitcode for p in procs]
    return [results.get(timeout=10) for _ in roles]


def killed_run(report_id: int) -> int:
    """An update run whose worker process is gone (as after kill -9): registered, with a
    process id that no longer exists as its worker."""
    from core.engine.update import begin_update

    run_id = begin_update(report_id, as_of=parse_as_of(AS_OF))
    gone = subprocess.Popen(["true"])
    gone.wait()
    with session_scope() as s:
        s.execute(
            update(UpdateRun)
            .where(col(UpdateRun.id) == run_id)
            .values(worker=f"{socket.gethostname()}:{gone.pid}")
        )
    return run_id


def proposals(run_id: int) -> list[SectionProposal]:
    with session_scope() as s:
        return list(s.exec(select(SectionProposal).where(SectionProposal.run_id == run_id)))


def run_row(run_id: int) -> UpdateRun:
    with session_scope() as s:
        run = s.get(UpdateRun, run_id)
        assert run is not None
        return run


def versions() -> list[int]:
    with session_scope() as s:
        return sorted(v.number for v in s.exec(select(ReportVersion)))


def winners(outcomes: list[tuple[str, str, str]]) -> list[tuple[str, str, str]]:
    assert not [o for o in outcomes if o[1] == "error"], outcomes
    return [o for o in outcomes if o[1] == "won"]


# -- take-over -------------------------------------------------------------------------------
def test_racing_resumes_of_a_killed_run_give_one_worker(workspace: Path, report: int) -> None:
    run_id = killed_run(report)
    outcomes = race(["resume"] * 4, run_id)
    [won] = winners(outcomes)
    assert won[2] == "awaiting_review"
    for _role, _, why in (o for o in outcomes if o[1] == "refused"):
        assert f"Run {run_id}" in why, why
        assert any(w in why for w in ("taken over", "being worked on", "nothing to resume")), why
    props = proposals(run_id)
    keys = [p.key for p in props]
    assert keys and len(keys) == len(set(keys))  # no section proposed twice
    from core.app.actions import review

    assert review(run_id, approve_all=True, commit=True).version == 2
    with session_scope() as s:
        v2 = s.exec(select(ReportVersion).where(ReportVersion.number == 2)).one()
        sections = [x.key for x in s.exec(select(Section).where(Section.version_id == v2.id))]
    assert sorted(sections) == sorted(keys)  # the new version holds each section once


def test_a_section_is_proposed_once_per_run(workspace: Path, report: int) -> None:
    """The database itself refuses a second proposal for a section of a run."""
    from sqlalchemy.exc import IntegrityError

    from core.engine.update import update_report

    run_id = update_report(report, as_of=parse_as_of(AS_OF))["run_id"]
    first = proposals(run_id)[0]
    copy = first.model_dump(exclude={"id"})
    with pytest.raises(IntegrityError), session_scope() as s:
        s.add(SectionProposal(**copy))
    assert len(proposals(run_id)) == len({p.key for p in proposals(run_id)})


def test_resume_racing_cancel_of_a_killed_run(workspace: Path, report: int) -> None:
    """Resumers and cancellers of a dead run at once: one resumer at most becomes its
    worker, one cancel at most ends it (a cancelled run may be resumed after), and the
    run ends in the state of whoever moved last — never with a section proposed twice."""
    run_id = killed_run(report)
    outcomes = race(["resume", "cancel", "resume", "cancel"], run_id)
    assert not [o for o in outcomes if o[1] == "error"], outcomes
    took_over = [o for o in outcomes if o[0] == "resume" and o[1] in ("won", "stopped")]
    ended = [o for o in outcomes if o[0] == "cancel" and o[1] == "won" and o[2] == "cancelled"]
    assert len(took_over) <= 1 and len(ended) <= 1 and took_over + ended, outcomes
    status = run_row(run_id).status
    if not took_over:
        assert status == "cancelled" and proposals(run_id) == []
    else:
        assert status in ("awaiting_review", "cancelled")
    keys = [p.key for p in proposals(run_id)]
    assert len(keys) == len(set(keys))


# -- cancel vs commit ---------------------------------------------------------------------------
def test_cancel_racing_commit_has_one_winner(workspace: Path, report: int) -> None:
    from core.engine.update import update_report

    run_id = update_report(report, as_of=parse_as_of(AS_OF))["run_id"]
    assert run_row(run_id).status == "awaiting_review"
    outcomes = race(["commit", "cancel"] * 3, run_id)
    [won] = winners(outcomes)
    run = run_row(run_id)
    if won[0] == "commit":
        assert run.status == "committed" and versions() == [1, 2]
    else:
        assert run.status == "cancelled" and run.version_id is None and versions() == [1]
    for role, _, why in (o for o in outcomes if o[1] == "refused"):
        assert f"Run {run_id}" in why, why
        if role == "cancel" and won[0] == "commit":
            assert "committed" in why and "cancel" in why, why
        if role == "commit" and won[0] == "cancel":
            assert "cancelled" in why, why


def test_a_cancel_after_the_last_step_is_not_lost(
    workspace: Path, report: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cancel that lands after the worker's last checkpoint, before it finishes: the run
    must not end awaiting review over the analyst's cancel."""
    import core.engine.stages
    import core.engine.update
    from core.engine.run_stops import RunCancelled
    from core.engine.runs import request_cancel

    real = core.engine.stages.pool_summary

    def cancel_then_summarise(*args: Any, **kwargs: Any) -> dict[str, int]:
        with session_scope() as s:
            run = s.exec(select(UpdateRun).order_by(col(UpdateRun.id).desc())).first()
        assert request_cancel(run.id) == "cancelling"  # from another connection
        return real(*args, **kwargs)

    monkeypatch.setattr(core.engine.stages, "pool_summary", cancel_then_summarise)
    with pytest.raises(RunCancelled):
        core.engine.update.update_report(report, as_of=parse_as_of(AS_OF))
    with session_scope() as s:
        run = s.exec(select(UpdateRun).order_by(col(UpdateRun.id).desc())).first()
    assert run.status == "cancelled" and "cancelled" in (run.error or "")


def test_a_broad_except_does_not_swallow_a_cancel(
    workspace: Path, report: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    import core.engine.stages
    import core.engine.update
    from core.engine.run_stops import RunCancelled
    from core.engine.runs import request_cancel

    swallowed: list[str] = []

    def refresh(session: Any, report: Any, cited: Any, *, progress: Any, run_id: int, **_: Any):
        session.commit()
        request_cancel(run_id)
        try:
            progress("checking sources")  # the checkpoint sees the cancel
        except EvergreenError as exc:  # e.g. a provider's catch-all for its own failures
            swallowed.append(str(exc))
        return []

    monkeypatch.setattr(core.engine.stages, "refresh", refresh)
    with pytest.raises(RunCancelled, match="cancelled"):
        core.engine.update.update_report(report, as_of=parse_as_of(AS_OF))
    assert swallowed == []
    with session_scope() as s:
        run = s.exec(select(UpdateRun).order_by(col(UpdateRun.id).desc())).first()
    assert run.status == "cancelled"


# -- what a person reads ---------------------------------------------------------------------
def test_cli_errors_keep_their_brackets(workspace: Path) -> None:
    name = "cite every factual sentence with [n], one of [1] [bold]x[/]"
    r = run_cli(workspace, "show", name)
    assert r.returncode == 1
    assert f"No report {name!r}" in r.stderr

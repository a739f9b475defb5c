"""Crash safety with real processes: kill -9 mid-run, then resume without refetching."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from sqlmodel import select

from core.errors import EvergreenError
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import CostEvent, ReportVersion, SectionProposal, Snapshot, UpdateRun
from tests.conftest import run_cli, run_cli_process, write_jsonl
from tests.fakes.loopback import Reply, Request
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.helpers.corpus import corpus_records, make_report


def cli(workspace: Path, *args: str, faults: str | None = None) -> subprocess.CompletedProcess:
    """The CLI in this process; with ``faults``, a real process (a kill -9 kills it)."""
    if faults:
        return run_cli_process(workspace, *args, env={"EVERGREEN_FAULTS": faults})
    return run_cli(workspace, *args)


@pytest.fixture
def report(workspace: Path, tmp_path: Path) -> int:
    add_corpus("fx", write_jsonl(tmp_path / "fx.jsonl", corpus_records()))
    return make_report("corpus:fx")


def _state() -> tuple[list[ReportVersion], UpdateRun]:
    with session_scope() as s:
        versions = list(s.exec(select(ReportVersion)).all())
        run = s.exec(select(UpdateRun).order_by(UpdateRun.id.desc())).first()
        return versions, run


@pytest.mark.parametrize("where", ["kill@fetch:2", "kill@write:1", "kill@commit:1"])
def test_kill_minus_nine_then_resume(workspace: Path, report: int, where: str) -> None:
    killed = cli(
        workspace, "update", str(report), "--as-of", "2024-06-30", "--approve-all", faults=where
    )
    assert killed.returncode == -9  # SIGKILL, for real
    versions, run = _state()
    assert [v.number for v in versions] == [1]  # the committed version is intact
    assert run.status == "running" and run.kind == "update"
    with session_scope() as s:
        fetched_before = len(s.exec(select(Snapshot).where(Snapshot.run_id == run.id)).all())
        drafts_before = len(
            s.exec(select(SectionProposal).where(SectionProposal.run_id == run.id)).all()
        )
    again = cli(workspace, "update", str(report), "--as-of", "2024-06-30")
    assert again.returncode == 1 and f"Run {run.id}" in again.stderr  # one run, not two
    resumed = cli(workspace, "resume", str(run.id), "--approve-all", "--json")
    assert resumed.returncode == 0, resumed.stderr
    result = json.loads(resumed.stdout)
    assert result["version"] == 2 and result["stale_citations"] == 0
    with session_scope() as s:
        snaps = s.exec(select(Snapshot).where(Snapshot.run_id == run.id)).all()
        per_source = {}
        for snap in snaps:
            per_source.setdefault((snap.source_id, snap.as_of), []).append(snap.id)
        assert all(len(ids) == 1 for ids in per_source.values())  # nothing fetched twice
        assert len(snaps) >= fetched_before
        props = s.exec(select(SectionProposal).where(SectionProposal.run_id == run.id)).all()
        assert len({p.key for p in props}) == len(props)  # no section drafted twice
        assert len(props) >= drafts_before
        assert s.exec(select(CostEvent).where(CostEvent.run_id == run.id)).all()


def test_resume_refuses_live_or_finished_runs(workspace: Path, report: int) -> None:
    from core.app.actions import review
    from core.dates import parse_as_of
    from core.engine.update import begin_update, resume_run

    live = begin_update(report, as_of=parse_as_of("2024-06-30"))
    worker = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    try:  # another live process on this host holds the run as its worker
        with session_scope() as s:
            run = s.get(UpdateRun, live)
            run.worker = f"{socket.gethostname()}:{worker.pid}"
            s.add(run)
        with pytest.raises(EvergreenError, match=f"Run {live} is still being worked on by "):
            resume_run(live)
        assert _state()[1].status == "running"  # refused without touching it
    finally:
        worker.kill()
        worker.wait()
    result = resume_run(live)  # its worker gone, the same run resumes
    assert result["run_id"] == live and result["status"] == "awaiting_review"
    with pytest.raises(EvergreenError, match="awaiting_review: there is nothing to resume"):
        resume_run(result["run_id"])
    review(result["run_id"], approve_all=True, commit=True)  # finished
    with pytest.raises(EvergreenError, match="committed: there is nothing to resume"):
        resume_run(result["run_id"])
    versions, run = _state()
    assert [v.number for v in versions] == [1, 2] and run.status == "committed"


def test_two_updates_at_once_give_one_run(workspace: Path, report: int) -> None:
    from core.dates import parse_as_of
    from core.engine.update import begin_update

    barrier = threading.Barrier(4)
    outcomes: list[object] = []

    def go() -> None:
        barrier.wait()
        try:
            outcomes.append(begin_update(report, as_of=parse_as_of("2024-06-30")))
        except EvergreenError as exc:
            outcomes.append(exc)

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    run_ids = [o for o in outcomes if isinstance(o, int)]
    refused = [o for o in outcomes if isinstance(o, EvergreenError)]
    assert len(run_ids) == 1 and len(refused) == 3
    assert all(f"Run {run_ids[0]}" in str(e) and "in progress" in str(e) for e in refused)
    assert all("database is locked" not in str(e) for e in refused)


# -- a run whose worker is gone -------------------------------------------------------------
def test_a_killed_run_reads_interrupted_everywhere_and_cancel_ends_it(
    workspace: Path, report: int
) -> None:
    from core.app.run_views import run_info

    killed = cli(workspace, "update", str(report), "--as-of", "2024-06-30", faults="kill@fetch:2")
    assert killed.returncode == -9
    run_id = _state()[1].id
    again = cli(workspace, "update", str(report), "--as-of", "2024-06-30")
    assert again.returncode == 1
    assert (
        f"Run {run_id} of report {report} was interrupted. Resume it: evergreen resume "
        f"{run_id} (or evergreen cancel {run_id})." in " ".join(again.stderr.split())
    )
    [row] = json.loads(cli(workspace, "list", "--json").stdout)
    assert row["status"] == "interrupted" and row["last_run_status"] == "interrupted"
    assert "interrupted" in cli(workspace, "list").stdout
    with session_scope() as s:
        assert run_info(s, run_id)["status"] == "interrupted"  # what the app shows
    cancelled = cli(workspace, "cancel", str(run_id))
    assert cancelled.returncode == 0, cancelled.stderr
    assert f"Run {run_id}: cancelled." in cancelled.stdout
    assert _state()[1].status == "cancelled"  # at once: there is no worker to wait for
    fresh = cli(workspace, "update", str(report), "--as-of", "2024-06-30", "--json")
    assert fresh.returncode == 0, fresh.stderr
    assert json.loads(fresh.stdout)["status"] == "awaiting_review"


# -- Ctrl-C ------------------------------------------------------------------------------------
class SignallingModel(FakeOpenAI):
    """The fake model, telling the test when the first request is in flight."""

    def __init__(self) -> None:
        self.asked = threading.Event()
        self.answered = threading.Event()  # a reply was ready (after the step's delay)
        super().__init__()

    def _handle(self, req: Request) -> Reply:
        self.asked.set()
        reply = super()._handle(req)
        self.answered.set()
        return reply


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_stops_an_update_marks_it_interrupted_and_exits_130(
    workspace: Path, report: int
) -> None:
    with SignallingModel() as model:
        model.script(*[Step("slow", delay=25) for _ in range(50)])  # a model that hangs
        env = {
            **os.environ,
            "EVERGREEN_HOME": str(workspace),
            "EVERGREEN_LLM": "openai",
            "OPENAI_BASE_URL": model.base_url,
            "OPENAI_API_KEY": "sk-test-ctrl-c",
            "EVERGREEN_LLM_TIMEOUT": "120",
        }
        env.pop("EVERGREEN_FAULTS", None)
        proc = subprocess.Popen(
            [sys.executable, "-m", "core.cli", "update", str(report), "--as-of", "2024-06-30"],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # as a terminal starts it: Ctrl-C delivered (a child inherits an ignored
            # SIGINT, and something earlier in a full test session leaves it ignored here)
            preexec_fn=_default_sigint,
        )
        try:
            assert model.asked.wait(120), "the update never called the model"
            asked = len(model.requests)
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=120)  # a hang guard, not a target
            # it exited while the call in flight was still waiting for its 25 s reply
            gave_up_waiting = not model.answered.is_set()
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
        calls = len(model.requests)
    assert proc.returncode == 130, err
    assert gave_up_waiting
    run = _state()[1]
    assert run.status == "interrupted" and run.kind == "update"
    assert f"Run {run.id} was interrupted — `evergreen resume {run.id}`" in err
    assert calls == asked  # it stopped at the call in flight: no model call after Ctrl-C
    resumed = cli(workspace, "resume", str(run.id), "--json")  # offline writer this time
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["status"] == "awaiting_review"

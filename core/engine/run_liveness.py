"""Who works on a run, and whether that worker still lives: the worker's name, the one
a run waiting in the job queue has, and the status a run shows once its worker is gone."""

from __future__ import annotations

import os
import socket

from core.dates import as_utc, utcnow
from core.states import RunStatus
from core.store.models import UpdateRun

STALE_AFTER_SECONDS = 120  # a running run with no checkpoint for this long has no live worker


def worker_id() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


QUEUED = "queue"  # the worker of a run waiting in the job queue (PostgreSQL, core.engine.queue)


def worker_alive(run: UpdateRun) -> bool:
    """Is some *other* process still doing this run's work? On this host the worker's
    process id says; a worker on another host is alive while its heartbeat is recent, or
    while the queue says a live worker holds the run's job. A run waiting in the queue is
    alive while its job is there. (Whether a thread of this process is on it:
    ``core.engine.jobs.is_working``.)"""
    if run.worker == QUEUED:
        from core.engine.queue import (
            held,  # lazy: a cycle (core.engine.queue moves runs via core.engine.runs)
        )

        return held(int(run.id))
    host, _, pid = (run.worker or "").rpartition(":")
    if host == socket.gethostname() and pid.isdigit():
        try:
            os.kill(int(pid), 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return int(pid) != os.getpid()
    beat = run.heartbeat_at
    if beat is not None and (utcnow() - as_utc(beat)).total_seconds() < STALE_AFTER_SECONDS:
        return True
    if run.worker and run.status in (RunStatus.RUNNING, RunStatus.CANCELLING):
        from core.engine.queue import held

        return held(int(run.id))  # a long step on a worker elsewhere: its job says
    return False


def run_state(run: UpdateRun) -> RunStatus:
    """The status to show: a running (or cancelling) run whose worker is gone — killed,
    crashed, or stopped with Ctrl-C — is *interrupted*, whatever its row still says. (A
    run of this very process is not: this process registered it or works on it.)"""
    if run.status in (RunStatus.RUNNING, RunStatus.CANCELLING) and not (
        worker_alive(run) or _ours(run)
    ):
        return RunStatus.INTERRUPTED
    return run.status


def _ours(run: UpdateRun) -> bool:
    return run.worker == worker_id()

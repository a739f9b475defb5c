"""`evergreen worker` processes for tests, on a PostgreSQL workspace of their own.

``queue_workspace`` is a fresh workspace on a new PostgreSQL database (skipped when no
server is configured, failed under CI), with short worker heartbeats so a killed worker
is noticed quickly. ``workers`` starts real worker processes on it — ``start(faults=...)``
with the fault points of core/faults.py (``pause@fetch:2`` holds a run mid-way until
``release()``) — and stops every one of them at teardown, before the database goes.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import PG_URL_ENV, _postgres_database

HANG_GUARD = 240.0  # seconds: a bound against hanging forever, never a synchronisation
FAST = {  # a killed worker is taken for dead after 3 s of silence
    "EVERGREEN_WORKER_HEARTBEAT": "0.5",
    "EVERGREEN_WORKER_STALLED": "3",
    "EVERGREEN_WORKER_POLL": "0.5",
}


def eventually(check: Callable[[], Any], what: str, timeout: float = HANG_GUARD) -> Any:
    """Poll ``check`` until it returns something truthy (returned); fail after the hang
    guard, saying what never happened."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value:
            return value
        if time.monotonic() > deadline:
            pytest.fail(f"never happened: {what}")
        time.sleep(0.1)


@pytest.fixture
def queue_workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fresh workspace on its own PostgreSQL database, with fast worker heartbeats."""
    admin = os.environ.get(PG_URL_ENV)
    if not admin:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI runs the worker tests on PostgreSQL, but {PG_URL_ENV} is unset")
        pytest.skip(f"no PostgreSQL server ({PG_URL_ENV} unset)")
    home = tmp_path / "ws"
    home.mkdir()
    monkeypatch.setenv("EVERGREEN_HOME", str(home))
    monkeypatch.delenv("EVERGREEN_CORPORA", raising=False)
    monkeypatch.delenv("EVERGREEN_JOBS", raising=False)
    monkeypatch.delenv("EVERGREEN_FAULTS", raising=False)
    for key, value in FAST.items():
        monkeypatch.setenv(key, value)
    with _postgres_database(admin) as url:
        monkeypatch.setenv("EVERGREEN_DB", url)
        yield home


class Worker:
    """One `evergreen worker` process; its log is a file in the test's folder."""

    def __init__(self, home: Path, log: Path, faults_dir: Path, args: list[str], env: dict):
        self.log_path = log
        self.faults_dir = faults_dir
        full = {**os.environ, "EVERGREEN_HOME": str(home), **env}
        with log.open("w") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "core.cli", "worker", *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=full,
            )
        eventually(
            lambda: "Starting worker on queues" in self.log() or self.proc.poll() is not None,
            f"worker {self.pid} started",
        )
        assert self.proc.poll() is None, self.log()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def name(self) -> str:
        """How a run names this worker (``UpdateRun.worker``)."""
        return f"{socket.gethostname()}:{self.pid}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace") if self.log_path.exists() else ""

    def paused(self) -> bool:
        """Whether this worker is held at a ``pause`` fault point."""
        return (self.faults_dir / f"paused-{self.pid}").exists()

    def kill(self) -> int:
        """kill -9; returns the exit status (-9)."""
        self.proc.send_signal(signal.SIGKILL)
        return self.proc.wait(timeout=60)

    def stop(self) -> None:
        if self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)  # no new job; the jobs in hand finish
        try:
            self.proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=60)


class Workers:
    def __init__(self, home: Path, folder: Path) -> None:
        self.home, self.folder = home, folder
        self.faults_dir = folder / "faults"
        self.started: list[Worker] = []

    def start(
        self, *, faults: str | None = None, concurrency: int = 1, env: dict | None = None
    ) -> Worker:
        extra = {"EVERGREEN_FAULTS_DIR": str(self.faults_dir), **(env or {})}
        if faults:
            extra["EVERGREEN_FAULTS"] = faults
        log = self.folder / f"worker-{len(self.started) + 1}.log"
        worker = Worker(self.home, log, self.faults_dir, ["-c", str(concurrency)], extra)
        self.started.append(worker)
        return worker

    def release(self) -> None:
        """Let every worker held at a ``pause`` fault point go on."""
        self.faults_dir.mkdir(parents=True, exist_ok=True)
        (self.faults_dir / "release").write_text("go", encoding="utf-8")

    def stop_all(self) -> None:
        self.release()
        for worker in self.started:
            worker.stop()


@pytest.fixture
def workers(queue_workspace: Path, tmp_path: Path) -> Iterator[Workers]:
    """Start worker processes on the queue workspace; all are stopped at teardown."""
    folder = tmp_path / "workers"
    folder.mkdir()
    pool = Workers(queue_workspace, folder)
    try:
        yield pool
    finally:
        pool.stop_all()

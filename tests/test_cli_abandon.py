"""`evergreen abandon RUN`: the screens' "Mark abandoned" from the command line, through
the same core function (core.engine.jobs.abandon)."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path

from core.engine.update import begin_update
from core.store.db import session_scope
from core.store.models import UpdateRun
from core.workspace import load_sample
from tests.conftest import run_cli as run


def test_a_run_whose_worker_died_is_abandoned_from_the_cli(workspace: Path) -> None:
    with session_scope() as session:
        report_id = load_sample(session)["report_id"]
    run_id = begin_update(report_id)
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)  # fmt: skip
    with session_scope() as session:  # its worker: a process of this host that has ended
        row = session.get(UpdateRun, run_id)
        row.worker = f"{socket.gethostname()}:{gone.stdout.strip()}"
        session.add(row)
    r = run(workspace, "abandon", str(run_id))
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"Run {run_id}: failed."
    with session_scope() as session:
        assert "Abandoned" in (session.get(UpdateRun, run_id).error or "")
    again = run(workspace, "abandon", str(run_id))
    assert again.returncode == 1
    assert again.stderr.strip() == (
        f"Error: Run {run_id} is failed; only an unfinished run is abandoned."
    )

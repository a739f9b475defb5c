"""Who did what to a report: every decision, edit, commit, archive, delete and settings
change is recorded with the person (or the scheduler) who made it, the door it came
through and when (``AuditEvent``), in the same transaction as the change itself.

The doors name the person: the app its signed-in user (or "app user" without a login),
the CLI ``--as NAME`` or the operating-system user, the workers "scheduler".
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session, col, select

from core.store.models import AuditEvent


@dataclass(frozen=True)
class Actor:
    """Who acts, and through which door ("app", "cli", "worker")."""

    name: str
    via: str

    def __str__(self) -> str:
        return self.name


def cli_actor(name: str | None = None) -> Actor:
    """The CLI's actor: ``--as NAME``, else the operating-system user."""
    chosen = " ".join((name or "").split())
    if not chosen:
        try:
            chosen = getpass.getuser()
        except Exception:  # noqa: BLE001 - no user name in this environment
            chosen = "command line"
    return Actor(chosen[:120], "cli")


#: each door as the screens name it ("by ana (command line)")
DOORS = {"app": "app", "cli": "command line", "worker": "worker"}

APP_USER = Actor("app user", "app")  # the app without a login: nobody in particular
SCHEDULER = Actor("scheduler", "worker")


def record(
    session: Session,
    actor: Actor,
    action: str,
    *,
    report_id: int | None = None,
    run_id: int | None = None,
    **detail: Any,
) -> AuditEvent:
    """Append one event (flushed with the change it records, never on its own)."""
    event = AuditEvent(
        actor=actor.name,
        via=actor.via,
        action=action,
        report_id=report_id,
        run_id=run_id,
        detail=detail,
    )
    session.add(event)
    return event


def events_of(session: Session, report_id: int) -> list[AuditEvent]:
    """A report's events, oldest first (a deleted report's too)."""
    query = select(AuditEvent).where(AuditEvent.report_id == report_id)
    return list(session.exec(query.order_by(col(AuditEvent.id))))

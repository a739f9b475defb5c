"""The one exception type that user-facing doors (CLI, UI) turn into a message."""

from __future__ import annotations

from core.redact import redact_credentials


class EvergreenError(Exception):
    """A failure caused by input or state a person can fix.

    The message is shown as-is by the CLI and the app, so it must say what went
    wrong and what to do about it, in one line, without secrets or tracebacks.
    Credentials inside any URL in the message are redacted when the error is made,
    so they reach neither the screen nor a stored run error.
    """

    def __init__(self, *args: object) -> None:
        super().__init__(*(redact_credentials(a) if isinstance(a, str) else a for a in args))


class NotFoundError(EvergreenError):
    """A report, version, run, corpus or page that does not exist."""


class RunBusyError(EvergreenError):
    """A report already has an open run (working, awaiting review or interrupted).

    The message says what holds the report; each door adds its own way on: the CLI its
    commands, the app a link to the run on its Review screen."""

    def __init__(self, message: str, *, run_id: int, report_id: int, state: str, kind: str) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.report_id = report_id
        self.state = state
        self.kind = kind


class StaleViewError(EvergreenError):
    """A decision or a commit made on a view of a run that has changed since it was shown
    (another tab, the command line): refused, nothing written; the message says what the
    section is now, decided where and when."""

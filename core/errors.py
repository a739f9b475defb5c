"""The one exception type that user-facing doors (CLI, UI) turn into a message."""

from __future__ import annotations


class EvergreenError(Exception):
    """A failure caused by input or state a person can fix.

    The message is shown as-is by the CLI and the app, so it must say what went
    wrong and what to do about it, in one line, without secrets or tracebacks.
    """


class NotFoundError(EvergreenError):
    """A report, version, run, corpus or page that does not exist."""

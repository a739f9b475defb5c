"""Why a run's work stops: the RunStopped exceptions (cancelled, interrupted, lost) that
end a run's work from any depth and that the doors (CLI, jobs) turn into a message."""

from __future__ import annotations


class RunStopped(BaseException):
    """The run's work must stop now: cancelled, interrupted, or taken over by another
    process. Like asyncio's CancelledError (and KeyboardInterrupt) it is no Exception, so
    no broad ``except Exception`` / ``except EvergreenError`` on the way swallows it; the
    doors (CLI, jobs) turn it into a message."""


class RunCancelled(RunStopped):
    """The analyst cancelled the run."""


class RunInterrupted(RunStopped):
    """The process was interrupted (Ctrl-C); the run is marked interrupted."""


class RunLost(RunStopped):
    """Another process took the run over, or it changed under this one; nothing of the
    current step was written."""

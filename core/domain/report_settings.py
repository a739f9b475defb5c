"""A report's own settings — τ, writer, schedule, budgets and search breadth — in one
typed place: their defaults, their bounds and the one-line message each bound gives.

The database keeps them as a plain JSON dict on ``Report.settings``, holding only what a
person set (a default changed here reaches every report that never set it).
``settings_of(stored)`` reads such a dict; ``ReportSettings.changed(...)`` validates a
change, and ``to_stored`` writes the dict back. The app's Settings screen, the CLI's
``evergreen settings`` and the scheduler all go through here, so they accept the same
values and refuse the rest with the same words.

Why pydantic: the fields, bounds and coercion of JSON values (``"0.9"`` stored as text, an
int where a float goes) come in one declaration, the same library as the workspace
settings (``core.settings``); the errors are turned into our own sentences below.

A stored dict is read leniently where leniency is safe and strictly where it is not:

- a key this version does not know is ignored, and kept when the dict is written back
  (a newer Evergreen may have written it);
- a missing key takes its default;
- an invalid stored value (a hand edit, a downgrade) is an **error** for the work that
  uses it — an update, a create, the schedule — rather than a silent default, because
  these values decide what a person is shown (τ), what is spent (the writer) and when
  (the schedule); the message says which setting and how to set it again. The Settings
  doors read with ``salvage``: the invalid value is shown at its default beside the same
  message, so saving the form (or ``evergreen settings``) repairs it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, get_args

from annotated_types import Ge, Le
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from core.errors import EvergreenError

WriterName = Literal["offline", "openai"]
WRITERS: tuple[str, ...] = get_args(WriterName)
#: spellings accepted for a writer besides its name (``--writer llm``: the bench's old word)
WRITER_ALIASES = {"llm": "openai"}
DEFAULT_WRITER_WORDS = ("default", "")  # the configured default (``EVERGREEN_LLM``)

DEFAULT_TAU = 0.9
_NOT_A_DICT = "Report settings must be a JSON object of named settings (got {!r})."
MIN_SECTION_WORDS = 50  # a words budget below this would leave a section a sentence long


class ReportSettingsError(EvergreenError):
    """A setting refused: one line naming it, its bounds and the value given."""

    def __init__(self, message: str, *, field: str) -> None:
        super().__init__(message)
        self.field = field


class ReportSettings(BaseModel):
    """What an update (and a from-scratch research) of one report works with."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    #: similarity gate: a changed page at least this similar to before is a minor edit
    tau: float = Field(DEFAULT_TAU, ge=0.5, le=1.0)
    #: pages fetched at once
    concurrency: int = Field(8, ge=1, le=64)
    #: sections a report holds at most: a from-scratch research writes up to this many, and
    #: an update splits a full section only within it (making room by letting the least
    #: relevant section go)
    max_sections: int = Field(6, ge=1, le=30)
    #: search breadth of a from-scratch research and of an update's discovery (not on the
    #: screens; scripts set them)
    queries: int = Field(4, ge=1, le=20)
    results_per_query: int = Field(8, ge=1, le=100)
    section_results: int = Field(4, ge=0, le=100)
    discover_results: int = Field(5, ge=0, le=100)
    #: the report's budget: an update drops the least relevant sources beyond it, and the
    #: least relevant sentences of a section beyond its words (0: no limit)
    max_sources: int = Field(25, ge=0, le=500)
    max_section_words: int = Field(450, ge=0, le=20000)
    #: None: the configured default (``EVERGREEN_LLM``)
    writer: WriterName | None = None
    #: the update schedule in days (None: no schedule)
    every_days: int | None = Field(None, ge=1, le=365)

    @field_validator("writer", mode="before")
    @classmethod
    def _writer(cls, value: Any) -> Any:
        if not isinstance(value, str):
            return value  # None, or a wrong type the Literal refuses
        try:
            return writer_name(value)
        except ReportSettingsError:
            raise ValueError("unknown writer") from None

    @field_validator("every_days", mode="before")
    @classmethod
    def _no_schedule(cls, value: Any) -> Any:
        return None if value in (0, "0", "", None) else value

    @field_validator("tau")
    @classmethod
    def _round_tau(cls, value: float) -> float:
        return round(value, 3)

    @field_validator("max_section_words")
    @classmethod
    def _words(cls, value: int) -> int:
        if 0 < value < MIN_SECTION_WORDS:
            raise ValueError("too few words")
        return value

    # -- reading and writing ----------------------------------------------------------
    @classmethod
    def parse(cls, values: Mapping[str, Any]) -> ReportSettings:
        """Validate ``values`` (the known keys; others are ignored); a refused value raises
        ``ReportSettingsError`` with the line every door shows."""
        if not isinstance(values, Mapping):
            raise ReportSettingsError(_NOT_A_DICT.format(values), field="settings")
        try:
            return cls.model_validate(dict(values))
        except ValidationError as exc:
            first = exc.errors()[0]
            name = str(first["loc"][0]) if first.get("loc") else "settings"
            raise ReportSettingsError(message(name, first.get("input")), field=name) from None

    def changed(self, **changes: Any) -> ReportSettings:
        """These settings with ``changes`` applied (validated together with the rest)."""
        return type(self).parse({**self.to_stored(), **changes})

    def to_stored(self, previous: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """The plain dict for the JSON column: the values a person set (defaults left out,
        so a later default reaches them), plus any key of ``previous`` this version does
        not know."""
        known = self.model_dump(exclude_unset=True, exclude_none=True)
        kept = {k: v for k, v in (previous or {}).items() if k not in type(self).model_fields}
        return {**kept, **known}

    @classmethod
    def salvage(cls, stored: Mapping[str, Any] | None) -> tuple[ReportSettings, list[str]]:
        """A stored dict read for the Settings doors: each invalid value is replaced by its
        default and its message listed, so the screen can show both and a save repairs it."""
        if stored is not None and not isinstance(stored, Mapping):
            return cls(), [f"{_NOT_A_DICT.format(stored)} The defaults are used until saved."]
        values = {k: v for k, v in (stored or {}).items() if k in cls.model_fields}
        problems: list[str] = []
        while True:
            try:
                return cls.parse(values), problems
            except ReportSettingsError as exc:
                if exc.field not in values:  # cannot happen: each error names a given key
                    raise
                problems.append(f"{exc} The default is used until it is saved again.")
                del values[exc.field]

    @staticmethod
    def bounds(name: str) -> tuple[float, float]:
        """The lowest and highest value of a numeric setting (for a door's own widgets)."""
        metadata = ReportSettings.model_fields[name].metadata
        low = next(m.ge for m in metadata if isinstance(m, Ge))
        high = next(m.le for m in metadata if isinstance(m, Le))
        return low, high  # type: ignore[return-value]


def settings_of(stored: Mapping[str, Any] | None) -> ReportSettings:
    """A report's stored settings dict, read for the work that uses it: an invalid stored
    value is an error saying which setting and how to set it again."""
    try:
        return ReportSettings.parse(stored or {})
    except ReportSettingsError as exc:
        raise ReportSettingsError(
            f"The report's stored settings are invalid: {exc} Save them again on the "
            "Settings screen or with evergreen settings REPORT.",
            field=exc.field,
        ) from None


def writer_name(value: str | None) -> str | None:
    """One vocabulary for writers: ``offline`` or ``openai`` (``llm`` accepted as the old
    spelling of ``openai``); None, ``default`` or empty: the configured default."""
    if value is None:
        return None
    word = value.strip().lower()
    if word in DEFAULT_WRITER_WORDS:
        return None
    word = WRITER_ALIASES.get(word, word)
    if word not in WRITERS:
        raise ReportSettingsError(message("writer", value), field="writer")
    return word


def message(name: str, value: Any) -> str:
    """The one line a refused setting gives, whichever door it came through."""
    if name == "writer":
        return f"Unknown writer {value!r}: choose {' or '.join(WRITERS)} (or default)."
    if name not in ReportSettings.model_fields:
        return f"Invalid report settings (got {value!r})."
    low, high = ReportSettings.bounds(name)
    shown = value if isinstance(value, int | float) and not isinstance(value, bool) else repr(value)
    return {
        "tau": f"τ must be between {low} and {high} (got {shown}).",
        "concurrency": f"Concurrency must be between {low} and {high} (got {shown}).",
        "max_sections": f"Max sections must be between {low} and {high} (got {shown}).",
        "max_sources": f"The source budget must be 0 (no limit) to {high} sources (got {shown}).",
        "max_section_words": "The words budget must be 0 (no limit) or "
        f"{MIN_SECTION_WORDS} to {high} words per section (got {shown}).",
        "every_days": f"The schedule must be every {low} to {high} days, or 0 for none "
        f"(got {shown}).",
    }.get(name, f"The setting {name} must be between {low} and {high} (got {shown}).")

"""What the LLM writer asks its model for, and how a parsed reply fails its check.

The structured outputs are pydantic models (``chat.completions.parse`` asks for their
JSON schema). A reply that parsed but cannot be used raises InvalidReply; one that can be
used but has a flaw worth one repair round raises FlawedReply carrying the result to keep
when the repair does no better (``core.writers.llm.LlmWriter.ask``).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)


class QueryPlan(BaseModel):
    queries: list[str]


class OutlineSection(BaseModel):
    heading: str
    source_ids: list[int]


class OutlinePlan(BaseModel):
    sections: list[OutlineSection]


class SentenceQuote(BaseModel):
    sentence: str  # the sentence as written in the body, [n] markers included
    source_id: int
    quote: str  # verbatim text of that source supporting the sentence


class SectionText(BaseModel):
    body: str
    # default_factory keeps "default" out of the JSON schema (strict mode rejects it)
    quotes: list[SentenceQuote] = Field(default_factory=list)

    @field_validator("quotes", mode="before")
    @classmethod
    def _usable_quotes(cls, value: Any) -> list[Any]:
        return usable_quotes(value)


# One section's entry in a joint extension: its id in the prompt, its paragraph. (No
# docstring: pydantic would send it with the JSON schema, in every request.)
class SectionAddition(SectionText):
    section: int


class SectionAdditions(BaseModel):
    """What several sections gain, one entry per section (``extend_sections``)."""

    sections: list[SectionAddition]


def usable_quotes(value: Any) -> list[Any]:
    """Quotes are optional: a reply without them, or with a garbled one, still parses."""
    if not isinstance(value, list):
        return []
    out: list[Any] = []
    for item in value:
        try:
            out.append(SentenceQuote.model_validate(item))
        except ValidationError:
            continue
    return out


class SentenceEdit(BaseModel):
    old: str  # a sentence of the section exactly as it stands, [n] markers included
    new: str  # what replaces it, cited; "" removes it


class SectionEdits(BaseModel):
    """A revision as edits: the sentences that change, a paragraph to add, and the quotes
    for what was written (``core.writers.edits.apply_edits`` makes the section). A model
    that answers the way revisions used to be asked for, with the whole section as
    ``body`` and no edits, is understood too: ``whole`` holds that section."""

    edits: list[SentenceEdit] = Field(default_factory=list)
    add: str = Field(default_factory=str)
    quotes: list[SentenceQuote] = Field(default_factory=list)
    _whole: str | None = PrivateAttr(default=None)

    @property
    def whole(self) -> str | None:
        return self._whole

    @model_validator(mode="wrap")
    @classmethod
    def _whole_section(cls, data: Any, handler: Any) -> SectionEdits:
        model = handler(data)
        if isinstance(data, dict) and isinstance(data.get("body"), str) and not data.get("edits"):
            model._whole = data["body"]
        return model

    @field_validator("quotes", mode="before")
    @classmethod
    def _usable_quotes(cls, value: Any) -> list[Any]:
        return usable_quotes(value)


class ChangeSummary(BaseModel):
    summary: str


class InvalidReply(Exception):
    """A reply that parsed but cannot be used; its message goes into the repair prompt."""


class FlawedReply(InvalidReply):
    """A reply that can be used but has a flaw worth one repair round; ``result`` is
    returned when the repair does no better."""

    def __init__(self, problem: str, result: Any) -> None:
        super().__init__(problem)
        self.result = result

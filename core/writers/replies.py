"""What the LLM writer asks its model for, and how a parsed reply fails its check.

The structured outputs are pydantic models (``chat.completions.parse`` asks for their
JSON schema). A reply that parsed but cannot be used raises InvalidReply; one that can be
used but has a flaw worth one repair round raises FlawedReply carrying the result to keep
when the repair does no better (``core.writers.llm.LlmWriter.ask``).
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field, ValidationError, field_validator


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

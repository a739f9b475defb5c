"""A revision that only brings new sources (``LlmWriter.revise_section`` with no changed
source and no claim to rewrite) asks the model for the paragraph they add
(``prompts/extend_section.md``): the section stands above it byte for byte, whatever
the model does, and is not re-typed at the cost of its output tokens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.domain.claim_diff import ClaimChange
from core.writers.base import Evidence, EvidenceChange
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.helpers.corpus import QUESTION
from tests.helpers.llm import EV, make_writer

# spacing and markup a cleaned reply would not keep: the old text must stay as it is
OLD = "Prices fell to 142 dollars per kWh [3] .\n\nThe *average* installed price  is tracked [3]."
NEW = Evidence(
    7,
    "https://ex.org/sodium",
    "Sodium-ion storage",
    "Sodium-ion cells entered grid storage pilots in 2024. They avoid lithium supply risks.",
    2,
)


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def test_the_section_stands_as_it_was_and_the_new_paragraph_follows(fake: FakeOpenAI) -> None:
    draft = make_writer(fake).revise_section(QUESTION, "Costs", OLD, [], [NEW])
    assert draft.body == OLD + "\n\nSodium-ion cells entered grid storage pilots in 2024 [7]."
    assert draft.markers == [3, 7]
    assert [(q["marker"], q["quote"]) for q in draft.quotes] == [
        (7, "Sodium-ion cells entered grid storage pilots in 2024.")
    ]
    request = fake.requests[0]["messages"]
    assert "kept as it is" in request[-1]["content"] and "<claim" not in request[0]["content"]
    assert "Allowed citation ids: 7." in request[-1]["content"]


def test_a_model_that_rewrites_the_section_cannot_change_it(fake: FakeOpenAI) -> None:
    """The reply re-types the section with a changed figure: only what cites a new
    source is added, the old sentences stay as they were."""
    reply = "Prices fell to 99 dollars per kWh [3]. Sodium-ion cells entered grid storage [7]."
    fake.script(Step("ok", content={"body": reply}))
    draft = make_writer(fake).revise_section(QUESTION, "Costs", OLD, [], [NEW])
    assert draft.body.startswith(OLD + "\n\n") and "99 dollars" not in draft.body
    assert draft.body.endswith("Sodium-ion cells entered grid storage [7].")


def test_nothing_worth_adding_keeps_the_section(fake: FakeOpenAI) -> None:
    fake.script(Step("ok", content={"body": ""}))
    draft = make_writer(fake).revise_section(QUESTION, "Costs", OLD, [], [NEW])
    assert draft.body == OLD and draft.markers == [3]


def test_a_changed_source_still_goes_through_the_revision(fake: FakeOpenAI) -> None:
    change = EvidenceChange(3, "material", (ClaimChange("142", "128"),), ("number",), EV[0])
    make_writer(fake).revise_section(QUESTION, "Costs", OLD, [change], [NEW])
    assert "<current_section>" in fake.requests[0]["messages"][-1]["content"]
    assert "kept as it is" not in fake.requests[0]["messages"][-1]["content"]


def test_nothing_new_and_nothing_changed_asks_no_model(fake: FakeOpenAI) -> None:
    draft = make_writer(fake).revise_section(QUESTION, "Costs", OLD, [], [])
    assert draft.body == OLD and not fake.requests

"""A revision with no sentence to rewrite (``LlmWriter.revise_section`` with no claim
update and no source gone) — only new sources, or a cited page that now declares a status
no sentence states — asks the model for the paragraph they add
(``prompts/extend_section.md``): the section stands above it byte for byte, whatever
the model does, and is not re-typed at the cost of its output tokens."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from core.domain.claim_diff import ClaimChange
from core.writers.base import ClaimUpdate, Evidence, EvidenceChange
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


def test_a_sentence_to_rewrite_still_goes_through_the_revision(fake: FakeOpenAI) -> None:
    change = EvidenceChange(3, "material", (ClaimChange("142", "128"),), ("number",), EV[0])
    claim = ClaimUpdate(
        "Prices fell to 142 dollars per kWh [3] .",
        3,
        "edited",
        (("142 dollars per kWh", "128 dollars per kWh"),),
    )
    make_writer(fake).revise_section(QUESTION, "Costs", OLD, [change], [NEW], [claim])
    assert "<current_section>" in fake.requests[0]["messages"][-1]["content"]
    assert "kept as it is" not in fake.requests[0]["messages"][-1]["content"]


def test_a_source_gone_still_goes_through_the_revision(fake: FakeOpenAI) -> None:
    gone = EvidenceChange(3, "gone", (), (), None)
    make_writer(fake).revise_section(QUESTION, "Costs", OLD, [gone], [])
    assert "kept as it is" not in fake.requests[0]["messages"][-1]["content"]


# a cited page whose header now declares a new status; no sentence of OLD states one
FINAL = Evidence(
    3,
    "https://ex.org/lfp",
    "Storage price index",
    "Status: Final\nType: Standards Track\n\n" + EV[0].content,
    0,
)


def test_news_of_a_cited_source_is_added_below_the_section(fake: FakeOpenAI) -> None:
    """Nothing OLD says is wrong: the new status gets a sentence of its own after it."""
    change = EvidenceChange(3, "material", (), ("header Status: Draft → Final",), FINAL)
    draft = make_writer(fake).revise_section(QUESTION, "Costs", OLD, [change], [NEW])
    prompt = fake.requests[0]["messages"][-1]["content"]
    assert "kept as it is" in prompt and "Status: Draft → Final" in prompt
    assert "Allowed citation ids: 3, 7." in prompt
    assert draft.body.startswith(OLD + "\n\n")
    added = draft.body[len(OLD) :]
    assert "Storage price index — Status: Final [3]." in added and "[7]" in added
    assert ("Status: Final", 3) in {(q["quote"], q["marker"]) for q in draft.quotes}


def test_nothing_new_and_nothing_changed_asks_no_model(fake: FakeOpenAI) -> None:
    draft = make_writer(fake).revise_section(QUESTION, "Costs", OLD, [], [])
    assert draft.body == OLD and not fake.requests


# A cited page that changed in words only: reworded, restyled, its bibliography moved, a
# discussion link added to its header, a passage dropped. The section's claims still hold.
HOUSEKEEPING = EvidenceChange(
    3,
    "changed",
    (
        ClaimChange(
            "Generic types can be parametrized by their element type.",
            "Generic types can be parameterized by their element type.",
        ),
        ClaimChange(
            "The index [mypy]_ is what we propose.",
            "The `index`__ is what we propose.",
        ),
        ClaimChange(None, "__ https://mypy-lang.org"),
        ClaimChange(None, "Discussions-To: https://discuss.example.org/t/123"),
        ClaimChange("Grid operators prefer it for four hour duties.", None),
    ),
    (),
    Evidence(
        3,
        "https://ex.org/lfp",
        "Storage price index",
        "Status: Final\nDiscussions-To: https://discuss.example.org/t/123\n\n" + EV[0].content,
        0,
    ),
)


def test_an_extension_is_shown_what_a_changed_page_adds_not_its_housekeeping(
    fake: FakeOpenAI,
) -> None:
    """Rewordings, restyled references, link targets, header fields and removed passages
    are nothing an extension can add: the page is left out of its prompt."""
    make_writer(fake).revise_section(QUESTION, "Costs", OLD, [HOUSEKEEPING], [NEW])
    prompt = fake.requests[0]["messages"][-1]["content"]
    assert "Allowed citation ids: 7." in prompt
    assert '<source id="3">' not in prompt and "parameterized" not in prompt
    assert "(none: only new sources)" in prompt


def test_what_a_changed_page_adds_is_shown_to_the_extension(fake: FakeOpenAI) -> None:
    added = ClaimChange(None, "Sodium cells now cost a third less than they did in 2023.")
    expanded = ClaimChange(
        "Prices are tracked quarterly.",
        "Prices are tracked quarterly by region, chemistry and duration of the system.",
    )
    change = EvidenceChange(
        3, "changed", (*HOUSEKEEPING.claims, added, expanded), (), HOUSEKEEPING.new
    )
    make_writer(fake).revise_section(QUESTION, "Costs", OLD, [change], [NEW])
    prompt = fake.requests[0]["messages"][-1]["content"]
    assert "Allowed citation ids: 3, 7." in prompt
    assert 'added: "Sodium cells now cost a third less' in prompt
    assert "by region, chemistry and duration" in prompt
    for housekeeping in ("parameterized", "mypy-lang", "Discussions-To", "four hour duties"):
        assert housekeeping not in prompt


def test_housekeeping_alone_asks_no_model(fake: FakeOpenAI) -> None:
    draft = make_writer(fake).revise_section(QUESTION, "Costs", OLD, [HOUSEKEEPING], [])
    assert draft.body == OLD and not fake.requests

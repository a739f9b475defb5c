"""A revision's reply as edits (``revise_section@5``): the sentences that change and a
paragraph to add, never the whole section typed out again."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from core.writers.edits import apply_edits
from core.writers.replies import InvalidReply, SectionEdits, SentenceEdit
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.helpers.corpus import QUESTION
from tests.helpers.llm import make_writer
from tests.test_llm_quotes import CAPACITY, CHANGES, EDITED, FLOW, OLD_BODY, OPENED, OPERATOR

NEW_CAPACITY = "Capacity: 160 MW / 650 MWh [7]."


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def edit(old: str, new: str) -> SentenceEdit:
    return SentenceEdit(old=old, new=new)


# -- applying edits ---------------------------------------------------------------------------
def test_an_edit_replaces_its_sentence_and_nothing_else() -> None:
    body = f"{OPENED} {CAPACITY}\n{OPERATOR}\n\n{FLOW}"  # wrapped lines stay as they were
    out = apply_edits(body, [edit(CAPACITY, NEW_CAPACITY)])
    assert out == f"{OPENED} {NEW_CAPACITY}\n{OPERATOR}\n\n{FLOW}"


def test_a_sentence_is_found_wherever_its_lines_wrap_and_every_copy_changes() -> None:
    wrapped = CAPACITY.replace(" 400", "\n400")
    body = f"{OPENED} {wrapped}\n\n{CAPACITY} {FLOW}"
    out = apply_edits(body, [edit(CAPACITY, NEW_CAPACITY)])
    assert out == f"{OPENED} {NEW_CAPACITY}\n\n{NEW_CAPACITY} {FLOW}"


def test_a_fragment_is_not_an_edit_it_would_change_every_sentence_holding_it() -> None:
    with pytest.raises(InvalidReply, match="copy each whole sentence"):
        apply_edits(OLD_BODY, [edit("100 MW / 400 MWh", "160 MW / 650 MWh")])
    with pytest.raises(InvalidReply):
        apply_edits(f"Again: {CAPACITY}", [edit(CAPACITY, NEW_CAPACITY)])
    # two whole sentences in a row are one edit
    out = apply_edits(OLD_BODY, [edit(f"{OPENED} {CAPACITY}", NEW_CAPACITY)])
    assert out == f"{NEW_CAPACITY} {OPERATOR}\n\n{FLOW}"


def test_an_empty_new_removes_the_sentence_and_a_paragraph_left_empty() -> None:
    out = apply_edits(OLD_BODY, [edit(OPERATOR, "")])
    assert out == f"{OPENED} {CAPACITY}\n\n{FLOW}"
    out = apply_edits(OLD_BODY, [edit(FLOW, "")])
    assert out == f"{OPENED} {CAPACITY} {OPERATOR}"
    assert apply_edits(FLOW, [edit(FLOW, "")]) == ""


def test_an_addition_is_a_paragraph_of_its_own() -> None:
    added = "Flow batteries now last twelve hours [5]."
    assert apply_edits(OLD_BODY, [], add=f" {added} ") == f"{OLD_BODY}\n\n{added}"
    assert apply_edits("", [], add=added) == added


def test_an_edit_of_a_sentence_the_section_does_not_hold_is_refused() -> None:
    with pytest.raises(InvalidReply, match='edit 2: "old" is not a sentence') as err:
        apply_edits(OLD_BODY, [edit(CAPACITY, NEW_CAPACITY), edit("Its capacity is 9 MW [7].", "")])
    assert "copy each whole sentence you change exactly" in str(err.value)


def test_repeated_and_unchanged_edits_are_harmless() -> None:
    edits = [edit(CAPACITY, NEW_CAPACITY), edit(CAPACITY, NEW_CAPACITY), edit(FLOW, FLOW)]
    assert apply_edits(OLD_BODY, edits) == OLD_BODY.replace(CAPACITY, NEW_CAPACITY)


# -- the writer -------------------------------------------------------------------------------
def test_a_revision_asks_for_edits_and_keeps_every_other_sentence(fake: FakeOpenAI) -> None:
    draft = make_writer(fake).revise_section(QUESTION, "Tessaly", OLD_BODY, CHANGES, [], [EDITED])
    assert draft.body == OLD_BODY.replace(CAPACITY, NEW_CAPACITY)
    assert len(fake.requests) == 1
    schema = fake.requests[0]["response_format"]["json_schema"]
    assert schema["name"] == "SectionEdits"
    assert set(schema["schema"]["required"]) == {"edits", "add", "quotes"}
    reply = json.loads(fake.replies[0]["choices"][0]["message"]["content"])
    assert reply["edits"] == [{"old": CAPACITY, "new": NEW_CAPACITY}]
    # only what changed came back: the untouched sentences were not typed out again
    assert OPENED not in json.dumps(reply) and FLOW not in json.dumps(reply)


def test_an_edit_naming_a_sentence_not_in_the_section_gets_one_repair(fake: FakeOpenAI) -> None:
    wrong = {"edits": [{"old": "Its capacity was 100 MW [7].", "new": NEW_CAPACITY}]}
    fake.script(Step("ok", content={**wrong, "add": "", "quotes": []}))
    draft = make_writer(fake).revise_section(QUESTION, "Tessaly", OLD_BODY, CHANGES, [], [EDITED])
    assert len(fake.requests) == 2
    problem = fake.requests[1]["messages"][-1]["content"]
    assert 'edit 1: "old" is not a sentence of the section' in problem
    assert "Its capacity was 100 MW [7]." in problem
    assert draft.body == OLD_BODY.replace(CAPACITY, NEW_CAPACITY)  # the repaired reply


def test_a_whole_section_in_body_is_still_understood() -> None:
    reply = SectionEdits.model_validate_json(json.dumps({"body": OLD_BODY, "quotes": []}))
    assert reply.whole == OLD_BODY and reply.edits == []
    as_asked = SectionEdits.model_validate({"edits": [], "add": "", "quotes": []})
    assert as_asked.whole is None

"""A revision with no sentence to rewrite (``LlmWriter.revise_section`` with no claim
update and no source gone) — only new sources, or a cited page that now declares a status
no sentence states — asks the model for the paragraph they add
(``prompts/extend_section.md``): the section stands above it byte for byte, whatever
the model does, and is not re-typed at the cost of its output tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from core.dates import parse_as_of
from core.domain.claim_diff import ClaimChange
from core.engine.creation import create_report
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.writers.base import ClaimUpdate, Evidence, EvidenceChange, Extension, WriterFailed
from tests.conftest import write_jsonl
from tests.fakes.openai_server import FakeOpenAI, Step
from tests.helpers.corpus import FLOW, LFP, POLICY, QUESTION, SODIUM, page
from tests.helpers.llm import EV, KEY, make_writer

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


# -- several sections at once ------------------------------------------------------------
FLOW_NEW = Evidence(
    8,
    "https://ex.org/flow-record",
    "Vanadium flow battery projects grow",
    "The largest vanadium flow battery project now stores 800 MWh in electrolyte tanks.",
    1,
)
FLOW_OLD = "Vanadium flow batteries store energy in liquid electrolyte tanks [5]."
SEVERAL = "You add to several sections"


def _asked(fake: FakeOpenAI, start: int = 0) -> list[str]:
    return [r["messages"][0]["content"] for r in fake.requests[start:]]


def test_sections_that_only_gain_are_extended_in_one_request(fake: FakeOpenAI) -> None:
    parts = [Extension("Costs", OLD, (), [NEW]), Extension("Flow", FLOW_OLD, (), [FLOW_NEW])]
    costs, flow = make_writer(fake).extend_sections(QUESTION, parts)
    assert len(fake.requests) == 1 and _asked(fake)[0].startswith(SEVERAL)
    assert costs.body == OLD + "\n\nSodium-ion cells entered grid storage pilots in 2024 [7]."
    assert flow.body == (
        FLOW_OLD + "\n\nThe largest vanadium flow battery project now stores 800 MWh in "
        "electrolyte tanks [8]."
    )
    assert costs.markers == [3, 7] and flow.markers == [5, 8]
    assert [q["marker"] for q in costs.quotes] == [7] and [q["marker"] for q in flow.quotes] == [8]
    user = fake.requests[0]["messages"][-1]["content"]
    assert "Allowed citation ids: 7." in user and "Allowed citation ids: 8." in user


def test_each_section_cites_only_its_own_sources(fake: FakeOpenAI) -> None:
    """A sentence citing the other section's source is not that section's to add."""
    reply = {
        "sections": [
            {"section": 1, "body": "Flow projects store 800 MWh [8]. Sodium pilots began [7]."},
            {"section": 2, "body": ""},
        ]
    }
    fake.script(Step("ok", content=reply))
    parts = [Extension("Costs", OLD, (), [NEW]), Extension("Flow", FLOW_OLD, (), [FLOW_NEW])]
    costs, flow = make_writer(fake).extend_sections(QUESTION, parts)
    assert costs.body == OLD + "\n\nSodium pilots began [7]."
    assert flow.body == FLOW_OLD and flow.markers == [5]


def test_a_reply_that_leaves_a_section_out_is_repaired_or_fails(fake: FakeOpenAI) -> None:
    short = {"sections": [{"section": 1, "body": ""}]}
    parts = [Extension("Costs", OLD, (), [NEW]), Extension("Flow", FLOW_OLD, (), [FLOW_NEW])]
    fake.script(Step("ok", content=short))
    costs, flow = make_writer(fake).extend_sections(QUESTION, parts)
    assert "no entry for section(s) 2" in fake.requests[1]["messages"][-1]["content"]
    assert "[7]" in costs.body and "[8]" in flow.body
    fake.script(Step("ok", content=short), Step("ok", content=short))
    with pytest.raises(WriterFailed, match="extend sections"):
        make_writer(fake).extend_sections(QUESTION, parts)


def test_one_section_with_something_to_add_is_asked_on_its_own(fake: FakeOpenAI) -> None:
    parts = [Extension("Costs", OLD, (), [NEW]), Extension("Flow", FLOW_OLD, (HOUSEKEEPING,))]
    costs, flow = make_writer(fake).extend_sections(QUESTION, parts)
    assert len(fake.requests) == 1 and not _asked(fake)[0].startswith(SEVERAL)
    assert "[7]" in costs.body and flow.body == FLOW_OLD


GAINING = [
    page("lfp", "Lithium iron phosphate storage costs", "2024-01-01", LFP),
    page("flow", "Vanadium flow batteries", "2024-01-01", FLOW),
    page("credit", "Storage tax credit for battery storage", "2024-01-01", POLICY),
    page("sodium", "Sodium ion grid batteries", "2024-01-01", SODIUM),
    # 2024-06-01: nothing cited changes; three new pages, for two sections
    page(
        "flow-record",
        "Vanadium flow battery projects grow",
        "2024-06-01",
        "Vanadium flow batteries for grid battery storage now reach 800 MWh in one project. "
        "Vanadium flow battery technologies store energy in liquid electrolyte tanks, and flow "
        "battery costs for long duration grid battery storage fell in the spring.",
    ),
    page(
        "lfp-tender",
        "Lithium iron phosphate storage tender prices",
        "2024-06-01",
        "Lithium iron phosphate batteries for grid battery storage cost 131 dollars per kWh in "
        "the spring tender. Lithium iron phosphate storage costs fell for grid battery storage "
        "projects in the region, and lithium iron phosphate cells remain the main grid storage "
        "technology.",
    ),
    page(
        "credit-cap",
        "Storage tax credit cap for battery storage raised",
        "2024-06-01",
        "The storage tax credit cap for battery storage rose to 900 million dollars a year. "
        "Battery storage owners can claim the storage tax credit for projects finished by 2027.",
    ),
]


def _update_with_new_pages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI, *failures: str
) -> tuple[list[str], list]:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    add_corpus("gaining", write_jsonl(tmp_path / "gaining.jsonl", GAINING))
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2024-01-31"),
        source="corpus:gaining",
        settings={"writer": "openai"},
    )
    before = len(fake.requests)
    fake.script(*failures)
    result = update_report(made["report_id"], as_of=parse_as_of("2024-06-30"))
    with session_scope() as s:
        extended = [p for p in proposals_of(s, result["run_id"]) if p.action == "extend"]
        for p in extended:
            s.expunge(p)
    return _asked(fake, before), extended


def test_an_update_extends_its_gaining_sections_in_one_request(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI
) -> None:
    asked, extended = _update_with_new_pages(tmp_path, monkeypatch, fake)
    assert len(asked) == 1 and asked[0].startswith(SEVERAL)
    assert len(extended) >= 2
    for p in extended:  # each section stands as it was, its new page's sentence after it
        assert p.new_text.startswith(p.old_text.rstrip() + "\n\n")
        new = [e["marker"] for e in p.evidence if e["kind"] == "new"]
        assert new and all(f"[{m}]" in p.new_text[len(p.old_text) :] for m in new)


def test_when_the_joint_request_fails_each_section_is_asked_on_its_own(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI
) -> None:
    asked, extended = _update_with_new_pages(tmp_path, monkeypatch, fake, "empty", "empty")
    assert asked[0].startswith(SEVERAL) and asked[1].startswith(SEVERAL)
    assert len(extended) >= 2
    assert [a.startswith("You add to one section") for a in asked[2:]] == [True] * len(extended)

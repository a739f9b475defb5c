"""The LLM writer's quotes and claim-level revisions, against the fake server on loopback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlmodel import select

from core.dates import parse_as_of
from core.domain.anchors import anchor_claim
from core.domain.citations import strip_citations
from core.domain.claim_diff import ClaimChange
from core.engine.creation import create_report
from core.engine.overview import DERIVED_KEYS
from core.engine.review import proposals_of
from core.engine.update import update_report
from core.sources.corpus import add_corpus
from core.store.db import session_scope
from core.store.models import Claim, Section
from core.writers.base import ClaimUpdate, Draft, Evidence, EvidenceChange
from core.writers.replies import SectionText
from tests.conftest import write_jsonl
from tests.fakes.openai_server import BAD_QUOTE, FakeOpenAI, Step
from tests.helpers.corpus import FLOW as FLOW_PAGE
from tests.helpers.corpus import POLICY, QUESTION, corpus_records, page
from tests.helpers.llm import EV, KEY, make_writer

# -- a page whose declared capacity changes -------------------------------------------------
OLD_PAGE = (
    "Tessaly Storage Plant\n\n"
    "The Tessaly storage plant was connected to the regional grid in March 2021.\n\n"
    "Capacity: 100 MW / 400 MWh\n\n"
    "Operator: Tessaly Grid Services\n"
)
NEW_PAGE = OLD_PAGE.replace("100 MW / 400 MWh", "160 MW / 650 MWh").replace(
    "Operator: Tessaly Grid Services\n", ""
)
TESSALY = Evidence(7, "https://ex.org/tessaly", "Tessaly Storage Plant", NEW_PAGE, 0)
FLOW = "Vanadium flow batteries store energy in liquid electrolyte tanks for long durations [5]."
OPENED = "The Tessaly plant was connected to the regional grid in March 2021 [7]."
CAPACITY = "Its capacity is 100 MW / 400 MWh [7]."
OPERATOR = "It is run by Tessaly Grid Services [7]."
OLD_BODY = f"{OPENED} {CAPACITY} {OPERATOR}\n\n{FLOW}"
EDITED = ClaimUpdate(
    sentence=CAPACITY,
    marker=7,
    outcome="edited",
    passages=(("Capacity: 100 MW / 400 MWh", "Capacity: 160 MW / 650 MWh"),),
    differences=("100 MW / 400 MWh → 160 MW / 650 MWh",),
    title="Tessaly Storage Plant",
)
GONE = ClaimUpdate(
    sentence=OPERATOR,
    marker=7,
    outcome="gone",
    passages=(("Operator: Tessaly Grid Services", None),),
    title="Tessaly Storage Plant",
)
CHANGES = [
    EvidenceChange(
        7,
        "material",
        (ClaimChange("Capacity: 100 MW / 400 MWh", "Capacity: 160 MW / 650 MWh"),),
        ("number",),
        TESSALY,
    )
]
STALE_NOTE = "needs attention: 1 sentence(s) still state what the source no longer says"


@pytest.fixture
def fake() -> Iterator[FakeOpenAI]:
    with FakeOpenAI() as server:
        yield server


def revise(fake: FakeOpenAI, *claims: ClaimUpdate, body: str = OLD_BODY, **kw: object) -> Draft:
    return make_writer(fake, **kw).revise_section(QUESTION, "Tessaly", body, CHANGES, [], claims)


def user_prompt(fake: FakeOpenAI, n: int = 0) -> str:
    return next(m["content"] for m in fake.requests[n]["messages"] if m["role"] == "user")


# -- quotes of a new section ----------------------------------------------------------------
def test_verified_quotes_land_in_the_draft(fake: FakeOpenAI) -> None:
    draft = make_writer(fake).write_section(QUESTION, "Costs", EV)
    lfp = (
        "The average installed price of lithium iron phosphate storage was 142 dollars per kWh "
        "in the first quarter"
    )
    flow = "Vanadium flow batteries store energy in liquid electrolyte tanks for long durations"
    assert draft.quotes == [
        {"sentence": f"{lfp} [3].", "marker": 3, "quote": f"{lfp}."},
        {"sentence": f"{flow} [5].", "marker": 5, "quote": f"{flow}."},
    ]
    assert draft.notes == []
    # every quoted sentence is in the body as written, and anchors on its quote
    contents = {e.marker: e.content for e in EV}
    for q in draft.quotes:
        assert str(q["sentence"]) in draft.body
        found = anchor_claim(
            strip_citations(str(q["sentence"])), contents[int(q["marker"])], str(q["quote"])
        )
        assert found.supported and [s.exact for s in found.selectors] == [q["quote"]]
    # the schema asks for quotes, without a "default" that strict servers reject
    fmt = fake.requests[0]["response_format"]
    schema = fmt["json_schema"]["schema"]
    assert "quotes" in schema["properties"] and '"default"' not in json.dumps(fmt)
    assert "quote" in user_prompt(fake)


def test_unverified_quotes_are_dropped_with_a_note(fake: FakeOpenAI) -> None:
    fake.script("bad_quotes")
    draft = make_writer(fake).write_section(QUESTION, "Costs", EV)
    assert draft.markers == [3, 5] and draft.quotes == []
    assert draft.notes == ["2 quotes not found in their sources (sentences citing [3], [5])"]
    assert len(fake.requests) == 1  # bad quotes never cost a repair round
    assert BAD_QUOTE in fake.replies[0]["choices"][0]["message"]["content"]


def test_quotes_are_matched_loosely_but_must_be_in_the_source(fake: FakeOpenAI) -> None:
    body = (
        "LFP storage cost 142 dollars per kWh in the first quarter [3]. "
        "Grid operators prefer it for four hour duties [3]. "
        "Flow batteries are the cheapest option for long storage [5]. "
        "Prices later fell to 128 dollars per kWh [3]."
    )
    quotes = [
        {  # case, spacing and markup differ; the sentence is echoed without its marker
            "sentence": "LFP storage cost 142 dollars per kWh in the first quarter",
            "source_id": 3,
            "quote": "the average installed price of **lithium iron phosphate** storage  was "
            "142 dollars per kWh",
        },
        {  # a near match (a typo), and the sentence echoed slightly differently
            "sentence": "Grid operators prefers it for four-hour duties [3].",
            "source_id": 3,
            "quote": "Grid operators prefer it for four hour dutties.",
        },
        {  # words the source does not have
            "sentence": "Flow batteries are the cheapest option for long storage [5].",
            "source_id": 5,
            "quote": "Flow batteries are the cheapest option for long storage.",
        },
        {  # nearly the source's words, but a figure it does not have
            "sentence": "Prices later fell to 128 dollars per kWh [3].",
            "source_id": 3,
            "quote": "The average installed price of lithium iron phosphate storage was "
            "128 dollars per kWh in the first quarter.",
        },
        {"sentence": "A sentence the body does not have [3].", "source_id": 3, "quote": "x"},
        {"sentence": "Grid operators prefer it [9].", "source_id": 9, "quote": "not given"},
        {"sentence": "Garbled", "quote": "no source id"},  # dropped, the reply still parses
    ]
    fake.script(Step("ok", content={"body": body, "quotes": quotes}))
    draft = make_writer(fake).write_section(QUESTION, "Costs", EV)
    assert draft.body == body and len(fake.requests) == 1
    assert [(q["sentence"], q["marker"]) for q in draft.quotes] == [
        ("LFP storage cost 142 dollars per kWh in the first quarter [3].", 3),
        ("Grid operators prefer it for four hour duties [3].", 3),
    ]
    assert draft.quotes[0]["quote"] == (
        "the average installed price of **lithium iron phosphate** storage was 142 dollars per kWh"
    )
    assert draft.notes == ["2 quotes not found in their sources (sentences citing [3], [5])"]


def test_one_unverified_quote_is_named_in_the_singular(fake: FakeOpenAI) -> None:
    body = "Flow batteries are the cheapest option for long storage [5]."
    quote = {"sentence": body, "source_id": 5, "quote": body}
    fake.script(Step("ok", content={"body": body, "quotes": [quote]}))
    draft = make_writer(fake).write_section(QUESTION, "Costs", EV)
    assert draft.quotes == []
    assert draft.notes == ["1 quote not found in its source (sentence citing [5])"]


@pytest.mark.parametrize("quotes", [None, "none", [], 3], ids=["absent", "text", "empty", "int"])
def test_replies_without_quotes_still_parse(fake: FakeOpenAI, quotes: object) -> None:
    reply: dict[str, object] = {"body": "Prices were 142 dollars per kWh [3]."}
    if quotes is not None:
        reply["quotes"] = quotes
    fake.script(Step("ok", content=reply))
    draft = make_writer(fake).write_section(QUESTION, "Costs", EV)
    assert draft.body == reply["body"] and draft.quotes == [] and draft.notes == []
    assert len(fake.requests) == 1
    assert SectionText.model_validate({"body": "x", "quotes": [{"sentence": 1}]}).quotes == []


# -- claim-level revision -------------------------------------------------------------------
def test_revise_states_the_new_figure_and_keeps_the_rest(fake: FakeOpenAI) -> None:
    draft = revise(fake, EDITED)
    assert draft.body == (
        f"{OPENED} Capacity: 160 MW / 650 MWh [7]. {OPERATOR}\n\n{FLOW}"
    )  # the claim sentence rewritten; every other sentence byte-identical
    assert "100 MW" not in draft.body and "400 MWh" not in draft.body
    assert draft.notes == [] and len(fake.requests) == 1
    assert draft.quotes == [
        {
            "sentence": "Capacity: 160 MW / 650 MWh [7].",
            "marker": 7,
            "quote": "Capacity: 160 MW / 650 MWh",
        }
    ]


def test_the_prompt_carries_each_claim_with_its_old_and_new_passages(fake: FakeOpenAI) -> None:
    revise(fake, EDITED, GONE)
    user = user_prompt(fake)
    assert fake.requests[0]["messages"][0]["role"] == "system"
    assert (
        '<claim source="7">\n'
        f"sentence: {CAPACITY}\n"
        "title: Tessaly Storage Plant\n"
        "was: Capacity: 100 MW / 400 MWh\n"
        "now: Capacity: 160 MW / 650 MWh\n"
        "differences: 100 MW / 400 MWh → 160 MW / 650 MWh\n"
        "</claim>"
    ) in user
    assert (
        f'<claim source="7">\nsentence: {OPERATOR}\ntitle: Tessaly Storage Plant\n'
        "was: Operator: Tessaly Grid Services\nnow: (gone)\n</claim>"
    ) in user
    assert "<current_section>\n" + OLD_BODY + "\n</current_section>" in user
    system = fake.requests[0]["messages"][0]["content"]
    assert "Never keep the old figure" in system and "stays exactly as it is" in system


def test_revise_drops_a_sentence_whose_passages_are_gone(fake: FakeOpenAI) -> None:
    draft = revise(fake, EDITED, GONE)
    assert draft.body == f"{OPENED} Capacity: 160 MW / 650 MWh [7].\n\n{FLOW}"
    assert "Tessaly Grid Services" not in draft.body and draft.notes == []


def test_a_section_whose_every_claim_is_gone_may_come_back_empty(fake: FakeOpenAI) -> None:
    draft = revise(fake, GONE, body=OPERATOR)
    assert draft.body == "" and draft.notes == [] and len(fake.requests) == 1


def test_a_sentence_rewritten_in_its_own_words_is_accepted(fake: FakeOpenAI) -> None:
    body = OLD_BODY.replace(CAPACITY, "Its capacity is 160 MW / 650 MWh [7].")
    quote = {"sentence": "Its capacity is 160 MW / 650 MWh [7].", "source_id": 7}
    fake.script(Step("ok", content={"body": body, "quotes": [{**quote, "quote": "160 MW / 650"}]}))
    draft = revise(fake, EDITED)
    assert draft.body == body and draft.notes == [] and len(fake.requests) == 1
    assert draft.quotes == [{"sentence": quote["sentence"], "marker": 7, "quote": "160 MW / 650"}]


def test_ignored_claims_are_repaired_once(fake: FakeOpenAI) -> None:
    fake.script("ignore_claims")
    draft = revise(fake, EDITED)
    assert len(fake.requests) == 2
    repair = fake.requests[1]["messages"]
    assert repair[-2]["role"] == "assistant"
    assert json.loads(repair[-2]["content"])["edits"] == []  # the ignored reply: no edits
    problem = repair[-1]["content"]
    assert "could not be used" in problem and f'"{CAPACITY}"' in problem
    assert '<claim source="7">' in problem
    assert "Capacity: 160 MW / 650 MWh [7]." in draft.body and "100 MW" not in draft.body
    assert draft.notes == []


def test_claims_ignored_after_the_repair_are_flagged_not_failed(fake: FakeOpenAI) -> None:
    fake.script("ignore_claims", "ignore_claims")
    draft = revise(fake, EDITED, GONE)
    assert len(fake.requests) == 2  # one repair, then the draft as it is
    assert draft.body == OLD_BODY and draft.markers == [7, 5]
    assert draft.notes == [
        "needs attention: 2 sentence(s) still state what the source no longer says"
    ]


@pytest.mark.parametrize(
    "repair", [Step("status", status=503), Step("malformed")], ids=["http-503", "malformed"]
)
def test_a_flawed_reply_is_kept_when_the_repair_fails(fake: FakeOpenAI, repair: Step) -> None:
    fake.script("ignore_claims", repair)
    draft = revise(fake, EDITED, attempts=1)
    assert len(fake.requests) == 2
    assert draft.body == OLD_BODY and draft.notes == [STALE_NOTE]


def test_a_claim_that_keeps_its_sentence_but_drops_the_citation_is_revised(
    fake: FakeOpenAI,
) -> None:
    # the sentence stays (another source backs it) but no longer cites the changed page
    body = OLD_BODY.replace(CAPACITY, "Its capacity is 100 MW / 400 MWh [5].")
    fake.script(Step("ok", content={"body": body}))
    draft = revise(fake, EDITED)
    assert draft.body == body and draft.notes == [] and len(fake.requests) == 1


# -- through the engine ---------------------------------------------------------------------
def test_claims_of_a_new_report_are_anchored_on_the_writers_quotes(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    add_corpus("fx", write_jsonl(tmp_path / "fx.jsonl", corpus_records()))
    made = create_report(
        QUESTION, as_of=parse_as_of("2024-01-31"), source="corpus:fx", settings={"writer": "openai"}
    )
    quoted = {
        (q["sentence"], q["source_id"]): q["quote"]
        for reply in fake.replies
        for q in json.loads(reply["choices"][0]["message"]["content"]).get("quotes", [])
    }
    assert quoted
    with session_scope() as s:
        claims = s.exec(select(Claim)).all()
    assert made["version"] == 1 and claims
    for claim in claims:
        assert claim.state == "supported", claim
        quote = quoted.get((claim.sentence, claim.marker))
        assert quote and [sel["exact"] for sel in claim.selectors] == [quote]


PRICE_V1 = (
    "The average installed price of lithium iron phosphate storage was 142 dollars per kWh "
    "in the first quarter. Grid operators prefer lithium iron phosphate storage for four hour "
    "duties. "
)


def price_corpus(tmp_path: Path) -> str:
    records = [
        page("lfp", "Lithium iron phosphate storage costs", "2024-01-01", PRICE_V1),
        page("flow", "Vanadium flow batteries", "2024-01-01", FLOW_PAGE),
        page("credit", "Storage tax credit for battery storage", "2024-01-01", POLICY),
        page(
            "lfp",
            "Lithium iron phosphate storage costs",
            "2024-06-01",
            PRICE_V1.replace("was 142 dollars", "fell to 128 dollars"),
        ),
    ]
    add_corpus("px", write_jsonl(tmp_path / "px.jsonl", records))
    return "corpus:px"


@pytest.mark.parametrize("steps", [(), ("ignore_claims", "ignore_claims")], ids=["ok", "ignored"])
def test_an_update_revises_the_claim_whose_passage_changed(
    workspace: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    fake: FakeOpenAI,
    steps: tuple[str, ...],
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    made = create_report(
        QUESTION,
        as_of=parse_as_of("2024-01-31"),
        source=price_corpus(tmp_path),
        settings={"writer": "openai"},
    )
    calls = len(fake.requests)
    fake.script(*steps)
    result = update_report(made["report_id"], as_of=parse_as_of("2024-06-30"))
    with session_scope() as s:
        props = proposals_of(s, result["run_id"])
    # the report's own section (the overview, rebuilt from it, may quote the sentence)
    [p] = [p for p in props if "142 dollars" in (p.old_text or "") and p.key not in DERIVED_KEYS]
    asked = [user_prompt(fake, n) for n in range(calls, len(fake.requests))]
    assert asked and all('<claim source="' in a for a in asked)
    assert any("now: The average installed price" in a and "fell to 128" in a for a in asked)
    if not steps:
        assert p.action == "revise" and "fell to 128 dollars" in (p.new_text or "")
        assert "142 dollars" not in (p.new_text or "")
        assert not any("needs attention" in f for f in p.flags)
        assert p.quotes and all("128 dollars" in str(q["quote"]) for q in p.quotes)
    else:
        assert len(asked) == 2 and p.new_text == p.old_text
        assert STALE_NOTE in p.flags


RULE = (
    "Rule: Grid Storage Safety Rule\nStatus: {status}\nType: Standard\n\n"
    "The grid storage safety rule sets {limits} metre spacing limits for lithium iron "
    "phosphate battery storage on the grid.\n"
)
CODE = (
    "Rule: Battery Storage Interconnection Code\nStatus: Draft\nType: Standard\n\n"
    "The interconnection code sets how grid battery storage plants connect and what "
    "their storage costs to connect.\n"
)


def _rule_report(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI, limits_after: str
) -> dict[str, Any]:
    """A report (LLM writer) on the rule and the code, both drafts in January; by June the
    rule is Final and its spacing limit ``limits_after`` metres (it was 3)."""
    monkeypatch.setenv("OPENAI_BASE_URL", fake.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    rule = "Grid Storage Safety Rule"
    records = [
        page("rule", rule, "2024-01-01", RULE.format(status="Draft", limits="3")),
        page("code", "Battery Storage Interconnection Code", "2024-01-01", CODE),
        page("rule", rule, "2024-06-01", RULE.format(status="Final", limits=limits_after)),
    ]
    add_corpus("st", write_jsonl(tmp_path / "st.jsonl", records))
    # a question with no facets: both pages make one section
    return create_report(
        "Which rules apply to grid battery storage, and how are they changing?",
        as_of=parse_as_of("2024-01-31"),
        source="corpus:st",
        settings={"writer": "openai"},
    )


def test_a_status_the_model_copies_onto_another_source_is_corrected(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI
) -> None:
    """The rule went Draft → Final and its limits changed; the engine sets the rule's
    status line itself (a declared field), and a model that rewrites every "Status:
    Draft" also rewrites the code's, which is still a draft: the proposal says the page's
    value."""
    made = _rule_report(tmp_path, monkeypatch, fake, limits_after="5")
    with session_scope() as s:
        bodies = [x.body for x in s.exec(select(Section)).all()]
    [old] = [b for b in bodies if "Status: Draft" in b]
    assert old.count("Status: Draft") == 2, bodies
    reply = old.replace("Status: Draft", "Status: Final").replace("sets 3 metre", "sets 5 metre")
    fake.script(Step("ok", content={"body": reply}))
    result = update_report(made["report_id"], as_of=parse_as_of("2024-06-30"))
    # the status line needed no model: it was sent already Final
    assert "Grid Storage Safety Rule — Status: Final" in user_prompt(fake, len(fake.requests) - 1)
    with session_scope() as s:
        [p] = [p for p in proposals_of(s, result["run_id"]) if p.old_text == old]
    assert p.action == "revise"
    assert "Grid Storage Safety Rule — Status: Final" in (p.new_text or "")
    assert "Battery Storage Interconnection Code — Status: Draft" in (p.new_text or "")
    assert "corrected to the page's value: 'Status: Final' → 'Status: Draft'" in p.rationale


def test_a_stray_space_before_punctuation_goes_but_file_names_and_roles_stay(
    fake: FakeOpenAI,
) -> None:
    body = (
        "Vanadium flow batteries store energy in liquid electrolyte tanks [5] . Installers "
        "compile any installed .py to .pyc first [5]. The plan follows [3]. :pep:`570` ships [3]."
    )
    fake.script(Step("ok", content={"body": body, "quotes": []}))
    text = make_writer(fake).write_section(QUESTION, "Costs", EV).body
    assert "tanks [5]. Installers" in text
    assert "installed .py to .pyc" in text and "[3]. :pep:`570`" in text


def test_a_status_that_changed_alone_costs_no_model_call(
    workspace: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fake: FakeOpenAI
) -> None:
    """The rule went Draft → Final and nothing else changed: its status line is set to the
    page's value by the engine; no model is asked to re-type the section for it."""
    made = _rule_report(tmp_path, monkeypatch, fake, limits_after="3")
    calls = len(fake.requests)
    result = update_report(made["report_id"], as_of=parse_as_of("2024-06-30"))
    assert len(fake.requests) == calls
    with session_scope() as s:
        [p] = [
            p for p in proposals_of(s, result["run_id"]) if "Status: Draft" in (p.old_text or "")
        ]
    assert p.action == "revise" and "Status: Draft → Final" in p.rationale
    assert "Grid Storage Safety Rule — Status: Final" in (p.new_text or "")
    assert "Battery Storage Interconnection Code — Status: Draft" in (p.new_text or "")

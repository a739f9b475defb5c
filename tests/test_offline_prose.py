"""The offline writer's prose reads on its own: no sentence leans on one it left out."""

from __future__ import annotations

import pytest

from core.domain.citations import cited_markers
from core.domain.sentences import name_page, points_in_page, refers_back, self_reference
from core.states import ClaimOutcome
from core.writers.base import ClaimUpdate, Evidence
from core.writers.offline import OfflineWriter, _cite, fact_sentence

QUESTION = "Which companies operate grid battery storage, and how large are they?"
PAGE = (
    "Saltmarsh Storage was founded in 2019 by three engineers in the coastal town of Tessaly. "
    "It is currently the largest grid battery storage operator in the region, running "
    "several battery storage plants. "
    "The company also sells consulting services to municipal utilities across the coast."
)
OPENS_WITH_IT = (
    "It is the biggest grid battery storage operator in the country by installed capacity. "
    "Staff members walk their dogs along the harbour wall every single morning."
)


def _operators(page: str, sentences: int | None = None) -> str:
    """The section the offline writer makes of ``page`` alone, on grid storage operators,
    quoting at most ``sentences`` (the writer's default when None)."""
    evidence = [Evidence(1, "https://ex.org/page", "Page", page)]
    writer = OfflineWriter() if sentences is None else OfflineWriter(sentences)
    return writer.write_section(QUESTION, "Grid battery storage operators", evidence).body


def test_a_pronoun_led_sentence_comes_with_the_sentence_it_leans_on() -> None:
    ev = Evidence(1, "https://ex.org/saltmarsh", "Saltmarsh Storage", PAGE)
    body = OfflineWriter().write_section(QUESTION, "Grid battery storage operators", [ev]).body
    assert "It is currently the largest grid battery storage operator" in body
    assert body.index("Saltmarsh Storage was founded") < body.index("It is currently")


def test_a_pronoun_led_sentence_with_nothing_before_it_is_left_out() -> None:
    ev = Evidence(2, "https://ex.org/other", "Another operator", OPENS_WITH_IT)
    body = OfflineWriter().write_section(QUESTION, "Grid battery storage operators", [ev]).body
    assert "It is the biggest" not in body


def test_a_sentence_about_the_company_comes_with_the_sentence_naming_it() -> None:
    page = (
        "Harbourline Energy builds grid battery storage plants along the northern coast. "
        "The company was founded in 2020 and runs four grid battery storage plants today. "
    )
    alone = "The company was founded in 2021 and runs two grid battery storage plants."
    body = (
        OfflineWriter()
        .write_section(
            QUESTION,
            "Grid battery storage operators",
            [Evidence(1, "u1", "Harbourline", page), Evidence(2, "u2", "Other", alone)],
        )
        .body
    )
    assert body.index("Harbourline Energy builds") < body.index("The company was founded in 2020")
    assert "founded in 2021" not in body  # nothing names the company it speaks of


def test_a_sentence_naming_the_project_further_in_comes_with_the_one_naming_it() -> None:
    """ "… said that it had cancelled the project": quoted after a sentence about another
    project it reads as that one's cancellation."""
    page = (
        "The grid battery storage market grew again this quarter across the region. "
        "One casualty of the new rules was the Ashgrove grid battery storage project. "
        "Quillfield Renewables said that it had cancelled the project, citing higher "
        "grid battery storage connection costs."
    )
    body = _operators(page)
    assert "cancelled the project" in body
    assert body.index("Ashgrove") < body.index("cancelled the project")
    named = "Kestrel Flats Storage Project is in construction, and the project opens in 2027."
    assert not refers_back(named)  # it names the project itself
    assert not refers_back("Quillfield said the company that owns it is for sale.")
    assert refers_back("Quillfield said the company's plant is for sale.")


def test_a_connective_led_sentence_is_not_quoted_alone() -> None:
    """ "Finally, …" or "In this case, …" continue a paragraph the report does not carry."""
    for lead in ("Finally, ", "In this case, ", "Instead, ", "As a result, "):
        assert refers_back(lead + "the grid battery storage plant closes in winter.")
    assert not refers_back("In addition to batteries, the grid storage plant runs pumps.")
    assert not refers_back("As a result of the tender, the grid storage plant opened.")
    page = (
        "Staff members walk their dogs along the harbour wall every single morning here.\n\n"
        "Finally, the grid battery storage operator runs four plants in the region."
    )
    body = (
        OfflineWriter(sentences_per_section=2)
        .write_section(QUESTION, "Grid battery storage operators", [Evidence(1, "u", "Op", page)])
        .body
    )
    assert "Finally" not in body


def test_questions_and_first_person_asides_are_not_quoted_before_statements() -> None:
    page = (
        "Which grid battery storage operators will grow the most next year? "
        "I used my own spreadsheet of grid battery storage operators for the figures. "
        "Harbourline operates three grid battery storage plants with 300 MWh of capacity."
    )
    body = (
        OfflineWriter(sentences_per_section=1)
        .write_section(QUESTION, "Grid battery storage operators", [Evidence(1, "u", "Op", page)])
        .body
    )
    assert "300 MWh" in body and "?" not in body and "spreadsheet" not in body
    body = (
        OfflineWriter(sentences_per_section=3)
        .write_section(QUESTION, "Grid battery storage operators", [Evidence(1, "u", "Op", page)])
        .body
    )
    assert "?" not in body  # never, however many sentences the section takes


def test_brochure_copy_is_quoted_after_plain_statements() -> None:
    page = (
        "Our award-winning, world-class grid battery storage operators run innovative grid "
        "battery storage! "
        "Harbourline operates three grid battery storage plants with 300 MWh of capacity. "
    )
    writer = OfflineWriter(sentences_per_section=1)
    body = writer.write_section(
        QUESTION, "Grid battery storage operators", [Evidence(1, "u", "Op", page)]
    ).body
    assert "300 MWh" in body and "award-winning" not in body


def test_a_name_in_short_form_comes_with_the_sentence_that_introduces_it() -> None:
    page = (
        "Marrow Cells launched a sodium module in February. "
        "The launch drew interest from several municipal utilities along the coast. "
        "Marrow was founded in 2021 and runs three grid battery storage plants for grid "
        "battery storage operators."
    )
    body = (
        OfflineWriter(sentences_per_section=1)
        .write_section(
            QUESTION,
            "Grid battery storage operators",
            [Evidence(1, "u", "Marrow Cells module", page)],
        )
        .body
    )
    assert "Marrow was founded" in body
    assert body.index("Marrow Cells launched") < body.index("Marrow was founded")
    assert "The launch drew" not in body


def test_a_sentence_that_leans_on_another_section_is_left_out() -> None:
    # the sentence before it in the page sits under another heading: it names something
    # else, so "The technology" would point at the wrong thing
    page = (
        "## Role in the grid\n\n"
        "Under the final accreditation rules, grid battery storage plants with eight hours "
        "of duration are accredited at 94% of nameplate power.\n\n"
        "## Risks\n\n"
        "The technology has not yet operated at utility scale at any grid battery storage "
        "plant anywhere.\n"
    )
    together = page.replace("\n\n## Risks\n\n", " ")
    write = OfflineWriter().write_section
    apart = write(QUESTION, "Grid battery storage operators", [Evidence(1, "u", "Iron", page)])
    joined = write(QUESTION, "Grid battery storage operators", [Evidence(1, "u", "Iron", together)])
    assert "The technology has not yet operated" not in apart.body
    assert "The technology has not yet operated" in joined.body  # same paragraph: it may lean


def test_sentences_in_one_paragraph_are_told_apart_from_sentences_across_a_break() -> None:
    from core.domain.text import same_paragraph

    text = "Alpha one is here now. Beta two follows it.\n\n## Next\n\nGamma three starts over."
    assert same_paragraph(text, "Alpha one is here now.", "Beta two follows it.")
    assert not same_paragraph(text, "Beta two follows it.", "Gamma three starts over.")
    assert same_paragraph(text, "Not in the text at all.", "Gamma three starts over.")


def test_two_field_summaries_of_one_thing_read_as_one_sentence() -> None:
    from core.domain.declared_fields import stated_fields
    from core.writers.revision import merge_summaries

    status = "Tarnwick Thermal Storage — Status: Financial investment decision reached [5]."
    size = "Tarnwick Thermal Storage — Thermal storage: 1,400 MWh in molten salt [5]."
    (merged,) = merge_summaries([status, size])
    assert merged == (
        "Tarnwick Thermal Storage — Status: Financial investment decision reached; "
        "Thermal storage: 1,400 MWh in molten salt [5]."
    )
    assert len(stated_fields(merged)) == 2  # each field is still a claim checked on its own
    other_page = size.replace("[5]", "[6]")
    other_thing = size.replace("Tarnwick", "Kestrel")
    same_label = status.replace("reached", "taken")
    for second in (other_page, other_thing, same_label):
        assert merge_summaries([status, second]) == [status, second]


CODE_PAGE = """Type parameters may refer to earlier type parameters of the same class definition.

::

    # No compiler error here, but a type checker reports one. Future extensions to
    # the type system may remove this limitation of type parameters and type checkers.
    class ClassA[S, T: Sequence[S]]: ...

.. code-block:: python

    x = 1  # a value. Type checkers report an error for type parameters written so.
    class ClassB[T: Sequence[T]]: ...

```python
x = 2  # a value. Type parameters of a generic function are checked by type checkers.
def first[T](items: list[T]) -> T: ...
```

    An indented quotation from the type system discussion stays quotable prose here.

A type checker reports an error when a bound refers to a later type parameter.
"""


def test_comments_in_code_blocks_are_not_quoted_as_sentences() -> None:
    ev = Evidence(3, "https://ex.org/695", "Type Parameter Syntax", CODE_PAGE)
    body = (
        OfflineWriter(sentences_per_section=20, per_source=10)
        .write_section("How do type parameters work?", "Type parameters and type checkers", [ev])
        .body
    )
    assert "Type parameters may refer to earlier type parameters" in body
    assert "A type checker reports an error when a bound" in body
    for code in ("Future extensions", "ClassA", "Type checkers report", "generic function"):
        assert code not in body, body
    assert "An indented quotation" in body  # an indented block of another kind is prose


def test_a_claim_dropped_on_revision_takes_its_lead_in() -> None:
    """A sentence whose passage is gone is dropped with the uncited sentence it was quoted
    with (the pair is one claim); it left "Alternatively, a package author can …" standing
    uncited in the PEP packaging report."""
    old_body = (
        "License files are found by name patterns [2]. "
        "Setuptools adds license files by name. "
        "This is contingent on this PEP being accepted [2]. "
        "Wheels keep them in the metadata directory [3]."
    )
    gone = ClaimUpdate(
        "This is contingent on this PEP being accepted [2].",
        2,
        ClaimOutcome.GONE,
        (("This is contingent on this PEP being accepted.", None),),
    )
    draft = OfflineWriter().revise_section("Q?", "Metadata", old_body, [], [], [gone])
    assert draft.body == (
        "License files are found by name patterns [2]. "
        "Wheels keep them in the metadata directory [3]."
    )


def test_a_page_speaking_of_itself_is_named_when_nothing_else_names_it() -> None:
    """ "This proposal enables …" is often a page's best summary; quoted with no fact line
    naming the page, it says which proposal."""
    page = (
        "Staff members walk their dogs along the harbour wall every single morning here. "
        "This proposal enables grid battery storage operators to bid into reserve markets."
    )
    ev = Evidence(1, "u", "Reserve market access", page)
    body = (
        OfflineWriter(sentences_per_section=1)
        .write_section(QUESTION, "Grid battery storage operators", [ev])
        .body
    )
    assert body == (
        "The proposal “Reserve market access” enables grid battery storage operators to bid "
        "into reserve markets [1]."
    )
    assert self_reference("This PEP defines a new type of package.") == "PEP"
    assert self_reference("This method defines a new type of package.") is None
    assert name_page("This proposal's goal is X.", "T") == "This proposal's goal is X."
    # the name is the page's title, which its text need not carry: checked as it says it
    from core.domain.anchors import anchor_claim

    named = name_page("This proposal enables mixed targets.", "Mixed Language Targets")
    held = anchor_claim(named[:-1] + " [1].", "This proposal enables mixed targets.")
    assert held.supported and held.score == 1.0


def test_a_new_page_whose_fact_line_replaces_a_sentence_keeps_its_sentences_by_it() -> None:
    """The fact line takes the place of the sentence it supersedes; the page's other
    sentences follow it there. Standing apart in a paragraph of their own, they said
    "In April 2026 the developers signed …" of a page nothing around them named."""
    page = (
        "Title: Reserve Market Access\nStatus: Approved\nType: Rule\n\n"
        "This proposal enables grid battery storage operators to bid into reserve markets."
    )
    old = (
        "Reserve Market Access is proposed by the grid battery storage board [3]. "
        "Operators welcome it [4].\n\nAnother paragraph [5]."
    )
    ev = Evidence(7, "u", "Reserve Market Access", page)
    body = (
        OfflineWriter()
        .revise_section(QUESTION, "Grid battery storage operators", old, [], [ev])
        .body
    )
    first, second = body.split("\n\n")
    assert first.startswith("Reserve Market Access — Status: Approved")
    assert "[7]. This proposal enables grid battery storage operators" in first
    assert first.endswith("Operators welcome it [4].") and second == "Another paragraph [5]."
    # with nothing to replace, the page's paragraph stands on its own, named
    alone = OfflineWriter().revise_section(
        QUESTION, "Grid battery storage operators", "Another paragraph [5].", [], [ev]
    )
    assert alone.body.split("\n\n")[1].startswith("Reserve Market Access — Status: Approved")


def test_a_licence_notice_is_not_quoted() -> None:
    """A page speaking of itself may stand alone, but not to say under which licence."""
    page = (
        "This document is licensed under the Open Publication License for grid battery "
        "storage operators. "
        "This proposal lets grid battery storage operators bid into reserve markets."
    )
    body = (
        OfflineWriter(sentences_per_section=3)
        .write_section(
            QUESTION, "Grid battery storage operators", [Evidence(1, "u", "Reserve rule", page)]
        )
        .body
    )
    assert "licensed" not in body and "reserve markets" in body


def test_a_summary_of_declared_fields_is_settled_without_a_writer() -> None:
    """A status line takes the value its page declares now; a prose claim, or a summary
    resting on a passage that is no field, is left to the writer."""
    from core.writers.revision import settle_summaries

    line = "Reserve Market Access — Status: Draft; Type: Rule [7]."
    prose = "Reserve Market Access caps bids at 40 MW [7]."
    body = f"{line} {prose}\n\nOther text [2]."
    status = ClaimUpdate(line, 7, ClaimOutcome.EDITED, (("Status: Draft", "Status: Final"),))
    figure = ClaimUpdate(prose, 7, ClaimOutcome.EDITED, (("caps bids at 40 MW", "at 60 MW"),))
    settled_body, left, settled = settle_summaries(body, [status, figure])
    assert settled_body == (
        "Reserve Market Access — Status: Final; Type: Rule [7]. " + prose + "\n\nOther text [2]."
    )
    assert left == [figure] and settled == [status]
    heading = ClaimUpdate(line, 7, ClaimOutcome.EDITED, (("# Reserve Market Access", "# RMA"),))
    assert settle_summaries(body, [heading])[1] == [heading]
    gone = ClaimUpdate(line, 7, ClaimOutcome.GONE, (("Status: Draft", None), ("Type: Rule", None)))
    assert settle_summaries(body, [gone])[0] == f"{prose}\n\nOther text [2]."
    twice = settle_summaries(f"{line}\n\n{line} {prose}", [status])[0]
    assert "Draft" not in twice and twice.count("Status: Final") == 2
    other = ClaimUpdate(line, 7, ClaimOutcome.EDITED, (("Stage: 2", "Stage: 3"),))
    assert settle_summaries(body, [other])[1] == [other]  # a field it does not state


LEANING = [
    "The Arden Storage Association welcomed this provision.",
    "Under these rules, study deposits rise to $5,000 per MW.",
    "One casualty was the 80 MW / 320 MWh Ashgrove Storage Project.",
    "Another 40 projects were approved in the quarter.",
    "The regulation applies to producers of industrial batteries.",
    "The original plan was a 50 MW, ten-hour power-to-power plant.",
    "The revised project costs $118 million.",
    "The second is an assignment-based syntax kept for older versions.",
    "The largest is the 1,000 MWh Harrow Bay Battery, which uses 200 containers.",
    "The most recent was signed in May 2026.",
    "The latter keeps the index in memory.",
    "The remaining cost will be covered by the developer's equity.",
    "Both modules have evolved greatly since their introduction.",
    "While such users have a way around it, they still upgrade.",
    "The `typing.TypeVar` mechanism in Python requires this [15].",
    "So, the proposal does not change the syntax of types.",
    "First, the initializer is unsafe in that the user must manage the memory.",
    "The other two initialize raw memory by moving data from another range.",
    "Both involved NMC systems built before 2020.",
    "Neither was connected to the grid.",
    "The board rejected a request to exempt existing projects.",
    "Ashgrove would be its first storage project.",
    "With that done, `String` and all other collections behave the same in key paths.",
    "With that optimization, the complexity of the algorithm is `O(n)` [23].",
    "Beyond those, Harrow Bay runs two pilot plants.",
    "With that syntax, a type alias needs no import.",
]
STANDING = [
    "Prices fell this year across the interconnection.",
    "One in five projects is late.",
    "Features such as protocols and literals came later.",
    "So far, no checker supports the new syntax.",
    "First released in 2019, the format is now the default.",
    "Both Harrow Bay and Kestrel Flats are in construction.",
    "Neither lithium nor sodium cells are made in Arden yet.",
    "Kestrel Flats is in its second year of construction.",
    "The first cluster window opens on 1 February 2027.",
    "The largest vanadium flow battery project now stores 800 MWh.",
    "The interest rate on the loan is fixed.",
    "The largest storage project in Arden opened in May.",
    "The planning board of Arden County meets monthly.",
    "The type system supports unions, generic types and a special type named Any.",
    "Python's grammar says this proposal is backward compatible.",
    "Given that the index is sorted, a binary search finds the key.",
    "Now that the grid code is final, Harrow Bay can connect.",
]


@pytest.mark.parametrize("sentence", LEANING)
def test_a_sentence_that_leans_on_the_one_before(sentence: str) -> None:
    """ "… welcomed this provision", "One casualty was …", "The second is …": quoted after
    another page's sentence, the provision, the set or the list is that page's."""
    assert refers_back(sentence)


@pytest.mark.parametrize("sentence", STANDING)
def test_a_sentence_that_stands_alone(sentence: str) -> None:
    assert not refers_back(sentence)


def test_a_demonstrative_further_in_comes_with_its_sentence_and_one_of_a_set_alone_not() -> None:
    page = (
        "Arden's stewardship rules let grid battery storage modules be repurposed for second life. "
        "The Arden Storage Association welcomed this provision for grid battery storage "
        "operators.\n\n"
        "One casualty was the Ashgrove grid battery storage project of the operators."
    )
    body = _operators(page)
    assert "welcomed this provision" in body
    assert body.index("repurposed for second life") < body.index("welcomed this provision")
    assert "One casualty" not in body  # it opens a paragraph: nothing before it to bring


def test_a_sentence_that_begins_inside_a_code_span_keeps_its_citation() -> None:
    """Quoted from the middle of a code span, a sentence carries one backtick: left in, it
    would turn its own citation and the sentences after it into code."""
    text = " ".join(
        [
            _cite("MaxInt`), which is an artificial limitation of the old model.", 8),
            _cite("A collection's `Index` can be any `Comparable` type.", 10),
        ]
    )
    assert cited_markers(text) == [8, 10]
    assert "`Index`" in text and "MaxInt)" in text


ACTOR_PAGES = {
    "Global actors": "Global actors extend actor isolation to declarations spread across "
    "modules. A global actor isolates the main thread's state for user interface code.",
    "Sending parameters": "The sending annotation marks a parameter whose value moves to "
    "another isolation domain. Sending values across actors no longer needs Sendable types.",
    "Isolated any": "Function types marked isolated any carry their actor isolation with "
    "them. Schedulers read the actor isolation of such functions before running them.",
    "Actor initializers": "Actor initializers run with the actor's isolation once every "
    "stored property is set. Delegating actor initializers keep the isolation rules.",
}


def test_every_new_page_an_update_adds_to_a_section_is_written_up() -> None:
    """Every new page sent to a section has passed the report's source budget. At three
    sentences for however many came, a Swift concurrency update wrote one of four actor
    proposals while the review said all four fit the section."""
    old = "Actors isolate their mutable state from concurrent access [1]."
    pages = [
        Evidence(10 + i, f"https://ex.org/{i}", title, text)
        for i, (title, text) in enumerate(ACTOR_PAGES.items())
    ]
    draft = OfflineWriter().revise_section(
        "How is Swift concurrency evolving: actors and isolation?",
        "Actors and isolation",
        old,
        [],
        pages,
    )
    assert set(draft.markers) == {1, 10, 11, 12, 13}, draft.body


POINTING = [
    "In the code above, the optimizer will usually optimize the array into a pointer.",
    "The table below lists the tasks performed by the package manager.",
    "The schedule below represents the actual release dates of the storage plant.",
    "Type concept is described above, types appear in variable and function declarations.",
    "Swift string literals may include the following special character sequences [7].",
    "The above code is data-race safe, since a global actor isolates it.",
    "The fields are defined as follows.",
]
NOT_POINTING = [
    "Prices stayed above 100 dollars per MWh all winter.",
    "The plant sits below the dam on the river Arden.",
    "The following year, the grid battery storage plant opened.",
    "In the following release, the deprecated API was removed.",
]


@pytest.mark.parametrize(
    ("sentence", "points"), [(s, True) for s in POINTING] + [(s, False) for s in NOT_POINTING]
)
def test_a_sentence_pointing_at_its_pages_code_or_tables(sentence: str, points: bool) -> None:
    """ "above", "below" and "the following" point into the page only when they name a
    part of it; "above 100 dollars" and "the following year" do not."""
    assert points_in_page(sentence) is points


def test_a_sentence_pointing_at_code_is_not_quoted_nor_brought_as_an_antecedent() -> None:
    """ "In the code above, …" points at code the report does not carry; "With that
    optimization, …" leans on it, and bringing it along would not help."""
    page = (
        "Grid battery storage operators reduce costs by sharing one inverter per site.\n\n"
        "```\nfor site in sites: share(site)\n```\n\n"
        "In the code above, the grid battery storage operator shares one inverter per site. "
        "With that optimization, grid battery storage operators save a fifth of their costs."
    )
    body = _operators(page, sentences=4)
    assert "sharing one inverter" in body
    assert "code above" not in body and "With that optimization" not in body


def test_the_status_line_states_every_lifecycle_field_under_the_pages_own_labels() -> None:
    """No field name is written in: a YAML front matter's status, stage and milestones
    reach the line as the page labels them; a page declaring no status or stage has
    none."""
    page = (
        "---\ntitle: Graceful Node Shutdown\nowning-sig: sig-node\nstatus: implementable\n"
        'creation-date: 2020-05-13\nstage: beta\nlatest-milestone: "v1.21"\n---\n\n'
        "# Graceful Node Shutdown\n\nThe kubelet delays node shutdown.\n"
    )
    line = fact_sentence(Evidence(1, "https://ex.org/kep", "Graceful Node Shutdown", page))
    assert line == (
        "Graceful Node Shutdown — status: implementable; creation-date: 2020-05-13; "
        "stage: beta; latest-milestone: v1.21."
    )
    bare = "---\ntitle: Notes\nauthor: someone\n---\n\nText.\n"
    assert fact_sentence(Evidence(2, "https://ex.org/n", "Notes", bare)) is None


def test_a_revision_adds_no_sentence_naming_its_pages_former_status() -> None:
    """A page whose rules went from Draft to Final: a sentence quoted anew that speaks of
    the draft is left out; one the section had, and the status line, stay."""
    from core.writers.base import EvidenceChange
    from core.writers.offline import _drop_former_status, _former_statuses

    change = EvidenceChange(3, "material", reasons=("header Status: Draft → Final",))
    assert _former_statuses([change])[3].pattern
    kept_as_is = EvidenceChange(
        4, "material", reasons=("header Status: Accepted → Accepted with revisions",)
    )
    review = EvidenceChange(
        5, "material", reasons=("header Status: Active review (March 1 – 14) → Accepted",)
    )
    former = _former_statuses([kept_as_is, review])
    assert 4 not in former and former[5].search("It was in active review in March [5].")
    old = "The board will decide on the draft in June [3]."
    paragraphs = [
        "Rules — Status: Final [3]. The HGA published draft rules on 4 December 2025 [3]. "
        "The board approved the final rules on 26 March [3].",
        old,
    ]
    _drop_former_status(paragraphs, old, [change])
    assert paragraphs == [
        "Rules — Status: Final [3]. The board approved the final rules on 26 March [3].",
        old,
    ]

"""The offline outline of a question that names no parts: sections are themes its pages
share, never one page's title (``core.writers.outline_clusters.themed``). A typing report
created as of 2016 had, beside "Type Hints", sections named "Syntax for Delegating to a
Subgenerator" and "Python 3.3 Release Schedule", which it kept for years."""

from __future__ import annotations

from core.domain.citations import cited_markers
from core.engine.report_proposals import part_heading
from core.writers.base import Evidence
from core.writers.offline import OfflineWriter
from core.writers.outline_clusters import heading_for, shared_phrase, theme_name

QUESTION = "How is static typing in Python evolving, and what is still open?"

HINTS = (
    "Type hints add annotations for static type checkers. Type checkers read the "
    "annotations of functions and variables; a type checker reports errors before runtime."
)


def ev(marker: int, title: str, content: str) -> Evidence:
    return Evidence(marker, f"https://example.org/{marker}", title, content, rank=marker)


PAGES = [
    ev(1, "Type Hints", HINTS),
    ev(2, "The Theory of Type Hints", HINTS + " Gradual typing relates static and dynamic."),
    ev(3, "Literature Overview for Type Hints", HINTS + " Other languages have type hints."),
    ev(4, "Syntax for Variable Annotations", HINTS + " Variables get annotations too."),
    ev(5, "Syntax for Delegating to a Subgenerator", "A generator may delegate to another."),
    ev(6, "Python 3.3 Release Schedule", "The release schedule for Python 3.3 is as follows."),
    ev(7, "Extension Module Initialization", "Extension modules initialise their state."),
]


def test_pages_that_share_no_theme_join_the_nearest_one_and_no_heading_is_a_title() -> None:
    outline = OfflineWriter().propose_outline(QUESTION, PAGES, max_sections=6)
    assert [item.heading for item in outline] == ["Type Hints"]  # what four titles share
    assert sorted(m for item in outline for m in item.markers) == [p.marker for p in PAGES]


def test_pages_that_share_no_theme_at_all_keep_their_clusters() -> None:
    """With no theme to join, a page's title is still the best name there is."""
    loose = [PAGES[4], PAGES[5], PAGES[6]]
    outline = OfflineWriter().propose_outline(QUESTION, loose, max_sections=6)
    assert sorted(m for item in outline for m in item.markers) == [5, 6, 7]
    assert len(outline) >= 2


def test_titles_share_a_phrase_whatever_its_words_plural() -> None:
    assert shared_phrase(["Type Parameter Syntax", "Type Defaults for Type Parameters"]) == (
        "Type Parameter"
    )
    assert shared_phrase(["Type Parameter Syntax", "Callable Type Syntax"]) is None


def test_a_series_shares_its_subject_not_its_period() -> None:
    """Quarterly recaps were headed "2026 storage market recap": the title of two of them.
    A version stays ("Swift 6")."""
    recaps = ["Q1 2026 storage market recap", "Q3 2026 storage market recap"]
    assert shared_phrase([*recaps, "Q4 2025 storage market recap"]) == "Storage market recap"
    assert shared_phrase(["March 2026 outlook", "May 2026 outlook"]) is None
    assert shared_phrase(["Swift 6 language mode", "Migrating to Swift 6"]) == "Swift 6"


def test_a_part_is_named_by_a_phrase_its_pages_share() -> None:
    """A part of "Type Hints" holding the type-parameter pages was named after the buffer
    protocol's page, the most relevant of them."""
    pages = [
        ev(1, "Making the buffer protocol accessible in Python", ""),
        ev(2, "Type Parameter Syntax", ""),
        ev(3, "Type Defaults for Type Parameters", ""),
    ]
    assert part_heading("Type Hints", "Buffer", pages, QUESTION) == "Type Hints: Type Parameter"
    # a phrase that says nothing the parent does not: the best page's title
    hints = [pages[0], ev(4, "Type Hints for Python", ""), ev(5, "Type Hints in Stubs", "")]
    assert part_heading("Type Hints", "Buffer", hints, QUESTION) == (
        "Type Hints: Making the buffer protocol accessible in Python"
    )


def test_a_section_drawing_on_many_pages_quotes_more_of_them() -> None:
    """A theme that took in pages sharing no theme of their own holds what several
    sections did: at seven sentences it quoted four of its six projects."""
    writer = OfflineWriter()
    assert writer.sentence_limit(2) == writer.sentences_per_section
    assert writer.sentence_limit(6) == 12 and writer.sentence_limit(40) == 14
    facts = [
        ("Alder", "stores 400 MWh beside a wind farm", "opened after a two year permit fight"),
        ("Birch", "uses sodium ion cells in a pilot", "reports cycling losses every quarter"),
        ("Cedar", "was built on a retired coal site", "sells capacity to the grid operator"),
        ("Dunmore", "caught fire in a container in November", "waits for a safety review"),
        ("Elm", "pairs batteries with a solar park", "shifts midday solar into the evening"),
        ("Fir", "is the largest flow battery planned", "needs a new substation to connect"),
    ]
    pages = [
        ev(i, f"{name} grid battery", f"The {name} grid battery {a}. The {name} battery {b}.")
        for i, (name, a, b) in enumerate(facts, 1)
    ]
    draft = writer.write_section(QUESTION, "Grid battery projects", pages)
    assert len(set(cited_markers(draft.body))) == 6  # every project is quoted


def test_a_dotted_version_number_is_one_word_of_a_title() -> None:
    titles = ["Python 3.4 Release Schedule", "Python 2.4 Release Schedule"]
    assert shared_phrase(titles) == "Release Schedule"  # not "4 Release Schedule"


STORAGE_Q = "Which battery storage projects are being built and when do they come online?"


def test_a_theme_named_by_a_word_of_the_question_is_named_by_what_its_pages_share() -> None:
    grant = "The Long-Duration Storage Grant supports projects that discharge for ten hours."
    pages = [
        ev(1, "Long-Duration Storage Grant Programme", grant),
        ev(2, "Millbrook Flow Battery Storage", "The long-duration storage pilot runs 8 hours."),
        ev(3, "Greyhaven Iron-Air Storage", "A long-duration storage demonstration of iron-air."),
        ev(4, "Kestrel Flats battery", "Kestrel Flats is a four-hour lithium battery project."),
        ev(5, "Copperline battery park", "Copperline is a four-hour lithium battery project."),
    ]
    assert theme_name(pages[:3], {}) == "Storage"  # the one word their titles share
    assert heading_for(pages[:3], {}, STORAGE_Q, pages[3:]) == "Long-Duration Storage"
    # a word the question does not say is a name; so is a phrase no title holds
    iron = [ev(6, "Iron-air pilot", "It stores energy."), ev(7, "Iron-air plant", "Rusting.")]
    assert heading_for(iron, {}, STORAGE_Q, pages) == "Iron-air"
    plain = [ev(8, "Storage at Ashgrove", "A big site."), ev(9, "Storage at Sable", "Small.")]
    assert heading_for(plain, {}, STORAGE_Q, pages) == "Storage"


PROJECTS = [
    ev(10, "Kestrel Flats battery", "Kestrel Flats is a four-hour lithium battery project."),
    ev(11, "Copperline battery park", "Copperline is a four-hour lithium battery project."),
]


def test_a_theme_is_named_by_a_phrase_not_a_list_of_its_title_words() -> None:
    """Titles that share only single words made "Thermal and storage"; what the pages
    say they are about names the theme."""
    thermal = [
        ev(1, "Tarnwick Thermal Storage Project", "Tarnwick stores heat: thermal storage."),
        ev(2, "Cinderwell HeatVault storage system", "HeatVault is molten-salt thermal storage."),
        ev(3, "Thermal plant grant", "A grant for thermal storage at old power stations."),
    ]
    assert " and " in str(theme_name(thermal, {}))  # "Storage and thermal"
    assert heading_for(thermal, {}, STORAGE_Q, PROJECTS).casefold() == "thermal storage"


def test_a_phrase_of_the_questions_own_words_names_no_part_of_it() -> None:
    """Asked about storage projects, "Storage Project" (two titles share it) says nothing:
    the phrase the pages' openings share names the section."""
    sodium = [
        ev(1, "Pellow Marsh Sodium-ion Storage Project", "Pellow uses sodium-ion storage."),
        ev(2, "Orton Storage Project", "Orton will be sodium-ion storage from Saltmarsh."),
    ]
    assert shared_phrase([p.title for p in sodium]) == "Storage Project"
    assert heading_for(sodium, {}, STORAGE_Q, PROJECTS) == "Sodium-ion Storage"


def test_a_piece_of_a_name_or_one_pages_title_is_no_heading() -> None:
    """Pages that all mention one project share its name, not a theme: neither the
    project page's title nor a piece of it ("Ridge Solar-plus-Storage") heads them."""
    ridge = [
        ev(1, "Sable Ridge Solar-plus-Storage", "Sable Ridge Solar-plus-Storage opened in 2024."),
        ev(2, "Storage market recap", "The largest battery is Sable Ridge Solar-plus-Storage."),
        ev(3, "Storage duration debate", "Four hours, as at Sable Ridge Solar-plus-Storage."),
    ]
    heading = heading_for(ridge, {}, STORAGE_Q, PROJECTS)
    assert "Solar-plus-Storage" not in heading and "Sable Ridge" not in heading

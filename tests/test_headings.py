"""A heading that was a page's title follows the section when the page leaves it
(``core.engine.headings.retitle_stale``): a typing report carried "User Defined
("with") Statements" over its type-guard proposals for years."""

from __future__ import annotations

from core.engine.headings import retitle_stale
from core.states import Action
from core.store.models import SectionProposal

TITLES = {
    1: "User Defined (with) Statements",
    2: "User-Defined Type Guards",
    3: "Stricter Type Guards",
    4: "Narrowing types with TypeIs",
}
NAMED = {t.casefold() for t in TITLES.values()}


def proposal(
    heading: str, text: str, action: Action = Action.REVISE, key: str = "s1"
) -> SectionProposal:
    return SectionProposal(
        run_id=1, key=key, action=action, heading=heading, level=2, order=1, new_text=text
    )


GUARDS = "Type guards narrow types [2]. Stricter guards were withdrawn [3]. TypeIs is final [4]."


def test_a_heading_whose_page_left_the_section_is_made_again_from_what_it_cites() -> None:
    p = proposal("User Defined (with) Statements", GUARDS)
    retitle_stale([p], NAMED, TITLES, {})
    assert p.heading == "Type Guards"
    assert "Renamed from “User Defined (with) Statements”" in p.rationale


def test_a_heading_whose_page_is_still_cited_stays() -> None:
    p = proposal("User Defined (with) Statements", "With statements [1]. " + GUARDS)
    retitle_stale([p], NAMED, TITLES, {})
    assert p.heading == "User Defined (with) Statements" and not p.rationale


def test_a_facet_heading_or_an_unchanged_section_stays() -> None:
    facet = proposal("Type narrowing", GUARDS)
    kept = proposal("User Defined (with) Statements", GUARDS, Action.KEEP, key="s2")
    retitle_stale([facet, kept], NAMED, TITLES, {})
    assert facet.heading == "Type narrowing" and kept.heading == "User Defined (with) Statements"


def test_pages_that_share_no_phrase_give_the_most_relevant_ones_title() -> None:
    """Updates cut the least relevant pages first, so the most relevant one's title lasts
    (a heading from the first-cited page was made again three years running) and never
    names the section after a page off the question; equal scores: the oldest page."""
    p = proposal("User Defined (with) Statements", "TypeIs [4]. Guards [2].")
    retitle_stale([p], NAMED, TITLES, {2: 0.2, 4: 0.5})
    assert p.heading == "Narrowing types with TypeIs"
    q = proposal("User Defined (with) Statements", "TypeIs [4]. Guards [2].", key="s2")
    retitle_stale([q], NAMED, TITLES, {})
    assert q.heading == "User-Defined Type Guards"


def test_a_heading_another_section_has_is_not_taken() -> None:
    other = proposal("Type Guards", "Guards [2].", Action.KEEP, key="s2")
    p = proposal("User Defined (with) Statements", GUARDS)
    retitle_stale([other, p], NAMED, TITLES, {})
    assert p.heading == "User Defined (with) Statements"


def test_a_part_heading_after_two_pages_it_no_longer_cites_is_made_again() -> None:
    """A part split off a section named after a page is "Root: part"; when neither page
    is left in it, the heading says nothing about what it holds (the offline typing
    report's "Syntax for Delegating to a Subgenerator: Minor API improvements for binary
    sequences" over its TypedDict pages)."""
    titles = {**TITLES, 5: "Syntax for Delegating to a Subgenerator", 6: "Type Hints"}
    named = {t.casefold() for t in titles.values()}
    stale = proposal("Syntax for Delegating to a Subgenerator: User Defined Statements", GUARDS)
    still = proposal("Type Hints: User-Defined Type Guards", GUARDS, key="s2")
    retitle_stale([stale, still], named, titles, {})
    assert stale.heading == "Type Guards" and "Renamed from" in stale.rationale
    assert still.heading == "Type Hints: User-Defined Type Guards"  # its part is cited


def test_a_facet_root_is_never_renamed_but_its_part_is() -> None:
    """The Swift macro report kept "Macro system: Package Manager Resources" over its
    expression-macro pages once that page had left: the facet stays, the part follows."""
    titles = {**TITLES, 7: "Wheels"}
    named = {t.casefold() for t in titles.values()}
    part = proposal("Wheels: User Defined (with) Statements", GUARDS)
    whole = proposal("Wheels", GUARDS, key="s2")
    retitle_stale([part, whole], named, titles, {}, keep={"wheels"})
    assert part.heading == "Wheels: Type Guards" and whole.heading == "Wheels"
    assert "Renamed from “Wheels: User Defined (with) Statements”" in part.rationale
    lone = proposal("Wheels: User Defined (with) Statements", "TypeIs [4].", key="s3")
    retitle_stale([lone], named, titles, {}, keep={"wheels"})
    assert lone.heading == "Wheels: Narrowing types with TypeIs"
    kept = proposal("Wheels: Stricter Type Guards", GUARDS, key="s4")  # its page is cited
    retitle_stale([kept], named, titles, {}, keep={"wheels"})
    assert kept.heading == "Wheels: Stricter Type Guards" and not kept.rationale
    retitle_stale([whole], named, titles, {})  # a page's title, not a facet: renamed
    assert whole.heading == "Type Guards"


def test_a_phrase_of_titles_the_section_no_longer_cites_is_made_again() -> None:
    """ "Extension Modules", the phrase two pages' titles shared, stayed over the typing
    council's pages once those had left."""
    titles = {**TITLES, 5: "Extension Modules in C", 6: "Building Extension Modules"}
    named = {t.casefold() for t in titles.values()}
    stale = proposal("Extension Modules", GUARDS)
    still = proposal("Extension Modules", "Modules in C [5]. " + GUARDS, key="s2")
    retitle_stale([stale, still], named, titles, {})
    assert stale.heading == "Type Guards" and "Renamed from “Extension Modules”" in stale.rationale
    assert still.heading == "Extension Modules" and not still.rationale
    word = proposal("Modules", GUARDS, key="s3")  # one word: no phrase of anything
    retitle_stale([word], named, titles, {})
    assert word.heading == "Modules"


def test_a_part_of_a_section_the_report_still_has_keeps_its_parent() -> None:
    """The offline typing report's "Type Hints: Python Compatibility Version" became
    "Making the buffer protocol accessible in Python" once that page had left: a part
    heading without its parent."""
    titles = {**TITLES, 5: "Python Compatibility Version", 6: "Type Hints"}
    named = {t.casefold() for t in titles.values()}
    parent = proposal("Type Hints", "Hints [6].", Action.KEEP, key="s0")
    part = proposal("Type Hints: Python Compatibility Version", GUARDS)
    retitle_stale([parent, part], named, titles, {})
    assert part.heading == "Type Hints: Type Guards" and parent.heading == "Type Hints"
    orphan = proposal("Type Hints: Python Compatibility Version", GUARDS, key="s2")
    retitle_stale([orphan], named, titles, {})  # no such section any more: a whole heading
    assert orphan.heading == "Type Guards"

"""Where a new page goes: the section it is most about, by words and by meaning."""

from __future__ import annotations

from core.domain.placement import place
from core.domain.relevance import Relevance

QUESTION = (
    "Which Swift features for metaprogramming shipped: result builders, property wrappers, "
    "the macro system?"
)
# a report created before macros existed: its "Macro system" section holds package pages,
# while "Result builders" says "macro" twice
SECTIONS = [
    (
        "builders",
        "Result builders",
        "Result builders are essentially a kind of macro system: a result builder transforms "
        "statements, much like macro expansion, into calls on a builder type [1].",
    ),
    ("wrappers", "Property wrappers", "Property wrappers abstract accessor patterns [2]."),
    (
        "macros",
        "Macro system",
        "The package manager tools version mechanism lets packages get updated dependencies "
        "[3]. Package build settings support conditionalization [4].",
    ),
]
KNOWN = [
    ("Result builders", "A result builder transforms statements into calls on a builder type."),
    ("Property wrappers", "Property wrappers abstract accessor patterns."),
    ("Package Manager Tools Version", "The tools version lets packages get new dependencies."),
    ("Target Specific Build Settings", "Build settings support conditionalization."),
]
MACROS = (
    "u1",
    "Expression Macros",
    "Expression macros expand to code at compile time. A macro expansion expression is "
    "type-checked like a function call before the macro is expanded.",
)


def test_a_page_goes_to_the_section_its_heading_means_not_the_one_sharing_its_words() -> None:
    # words alone follow what the sections happen to say
    assert place([MACROS], SECTIONS, known=KNOWN)["u1"][0] == "builders"
    # the heading's meaning puts it where an analyst would
    placed = place([MACROS], SECTIONS, known=KNOWN, relevance=Relevance(QUESTION))
    assert placed["u1"][0] == "macros"


def test_a_page_sharing_no_words_with_any_section_fits_none() -> None:
    stray = ("u2", "Harbour walks", "Staff walk their dogs along the harbour wall at dawn.")
    placed = place([stray, MACROS], SECTIONS, known=KNOWN, relevance=Relevance(QUESTION))
    assert placed["u2"] == (None, 0.0)
    assert place([stray], []) == {"u2": (None, 0.0)}  # a report with no sections yet
    assert place([], SECTIONS) == {}

"""Where a new page goes: the section it is most about, by words and by meaning."""

from __future__ import annotations

from core.domain.placement import place, word_scores
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
    # the words of its text alone follow what the sections happen to say
    text = word_scores([MACROS[1:]], [(h, b) for _k, h, b in SECTIONS])
    assert SECTIONS[int(text[0].argmax())][0] == "builders"
    # its title and the headings, and the heading's meaning, put it where an analyst would
    assert place([MACROS], SECTIONS, known=KNOWN)["u1"][0] == "macros"
    placed = place([MACROS], SECTIONS, known=KNOWN, relevance=Relevance(QUESTION))
    assert placed["u1"][0] == "macros"


def test_a_page_whose_title_names_a_section_goes_there_over_one_its_text_shares() -> None:
    """By its text and its meaning (lifetimes, ~Escapable), "Span: Safe Access to
    Contiguous Storage" went under "Noncopyable and nonescapable types"; "Span and
    InlineArray" held only pointer pages a first report found before Span existed."""
    question = (
        "How is Swift moving toward safe, efficient low-level memory: ownership, noncopyable "
        "and nonescapable types, Span and InlineArray, and the unsafe pointer APIs?"
    )
    sections = [
        (
            "noncopyable",
            "Noncopyable and nonescapable types",
            "Noncopyable types cannot be copied; nonescapable values cannot escape their "
            "scope, and their lifetime depends on another value [1].",
        ),
        (
            "span",
            "Span and InlineArray",
            "Unsafe buffer pointers give raw access to contiguous memory [2].",
        ),
    ]
    known = [
        ("Noncopyable structs and enums", "Noncopyable types cannot be copied."),
        ("Nonescapable Types", "Nonescapable values cannot escape their scope."),
        ("UnsafeRawBufferPointer", "Unsafe buffer pointers give raw access to memory."),
        ("Unsafe pointer nullability", "Unsafe pointers may be nil."),
    ]
    span = (
        "u9",
        "Span: Safe Access to Contiguous Storage",
        "It is nonescapable: its lifetime depends on the value it borrows, so it cannot "
        "escape its scope. Noncopyable elements are viewed without copying them. "
        "Nonescapable and noncopyable types make the view safe.",
    )
    placed = place([span], sections, known=known, relevance=Relevance(question))
    assert placed["u9"][0] == "span"


def test_a_page_sharing_no_words_with_any_section_fits_none() -> None:
    stray = ("u2", "Harbour walks", "Staff walk their dogs along the harbour wall at dawn.")
    placed = place([stray, MACROS], SECTIONS, known=KNOWN, relevance=Relevance(QUESTION))
    assert placed["u2"] == (None, 0.0)
    assert place([stray], []) == {"u2": (None, 0.0)}  # a report with no sections yet
    assert place([], SECTIONS) == {}

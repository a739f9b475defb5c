"""What a writer is shown of a long page (``core.domain.excerpts.excerpt``): its opening,
then the paragraphs closest in meaning to the section — wherever they sit — whole
passages only, in page order, with ``[…]`` where text is left out."""

from __future__ import annotations

from core.domain.excerpts import GAP, excerpt
from core.domain.relevance import Relevance

OPENING = "Widget 7 Release Schedule\n\nThis document describes the release schedule of Widget 7."
TIMETABLE = "\n".join(
    f"- 7.0.0 alpha {n}: Monday, 2024-0{n % 9 + 1}-0{n % 7 + 1}" for n in range(40)
)
LIFESPAN = (
    "Widget 7 will receive bugfix updates every two months for eighteen months. After "
    "that, security fixes are released until five years after the first release."
)
FOOTER = "Local Variables:\n  mode: indented-text\n  sentence-end-double-space: t\n  End:"
PAGE = f"{OPENING}\n\nTimetable\n\n{TIMETABLE}\n\nLifespan\n\n{LIFESPAN}\n\n{FOOTER}\n"
TOPIC = (
    "End-of-life dates. How long is each widget version supported before it reaches end of life?"
)


def test_the_paragraph_about_the_topic_is_shown_from_deep_in_the_page() -> None:
    shown = excerpt(PAGE, Relevance(TOPIC), 600, 100)
    assert shown.startswith(OPENING) and LIFESPAN.replace("  ", " ") in " ".join(shown.split())
    assert len(shown) <= 600 + len(GAP)
    assert "sentence-end-double-space" not in shown  # shares "end", means nothing
    assert shown.index("This document") < shown.index("bugfix updates")  # page order
    assert GAP.strip() in shown


def test_every_passage_shown_is_the_pages_own_text() -> None:
    shown = excerpt(PAGE, Relevance(TOPIC), 600, 100)
    for part in shown.split(GAP.strip()):
        assert part.strip() in PAGE


def test_a_page_that_fits_is_shown_whole() -> None:
    assert excerpt(LIFESPAN, Relevance(TOPIC), 600, 100) == LIFESPAN

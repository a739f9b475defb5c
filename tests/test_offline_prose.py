"""The offline writer's prose reads on its own: no sentence leans on one it left out."""

from __future__ import annotations

from core.writers.base import Evidence
from core.writers.offline import OfflineWriter

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

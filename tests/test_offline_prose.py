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

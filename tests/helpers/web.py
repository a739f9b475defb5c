"""The web report's fixtures: the question, the fake providers' keys and the loopback
site's pages (a page's versions, in order), shared by the web tests."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from core.sources.chromium import find_chromium
from core.sources.urlpolicy import UrlPolicy
from tests.fakes.env import use_loopback_providers
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.tavily_server import FakeTavily
from tests.fakes.website import html_page

#: the fetch policy of the loopback tests: the site is on 127.0.0.1
LOOPBACK = UrlPolicy.from_allowlist(["127.0.0.1"])
HAVE_CHROMIUM = find_chromium() is not None
NEEDS_CHROMIUM = pytest.mark.skipif(
    not HAVE_CHROMIUM and os.environ.get("CI") != "true",
    reason="no Chromium installed (CI installs it and runs these)",
)
#: the web fetcher's two modes; Chromium's runs wherever it is installed, and always in CI
FETCH_MODES = ["http", pytest.param("chromium", marks=NEEDS_CHROMIUM)]

QUESTION = "What do grid batteries cost, and which chemistries are used for grid storage?"
TAVILY_KEY = "tvly-e2e-0123456789"
OPENAI_KEY = "sk-e2e-0123456789abcdef"
# The report quotes the page's first sentence, so the price change reaches it there.
LFP_V1 = (
    "Lithium iron phosphate batteries dominate new grid storage projects in the region.",
    "The average installed price of lithium iron phosphate storage was 142 dollars per kWh "
    "in the first quarter.",
)
LFP_V2 = (
    "Lithium iron phosphate batteries dominate new grid storage projects in the region, "
    "where their price fell to 118 dollars per kWh after a price war among cell makers.",
    "The average installed price of lithium iron phosphate storage fell to 118 dollars per "
    "kWh in the second quarter, after a price war among cell makers.",
)
PAGES = {
    "/lfp": [html_page("Lithium iron phosphate storage costs", *LFP_V1),
             html_page("Lithium iron phosphate storage costs", *LFP_V2)],
    "/nmc": [html_page("Nickel manganese cobalt grid batteries",
                       "Nickel manganese cobalt cells are used less often for grid storage now.",
                       "Their higher energy density matters less in stationary batteries.")],
    "/flow": [html_page("Vanadium flow batteries",
                        "Vanadium flow batteries store energy in liquid electrolyte tanks.",
                        "Flow battery projects remain small, the largest holding 40 MWh.")],
    "/credit": [html_page("Storage tax credit",
                          "The storage tax credit pays thirty percent of battery capital costs.",
                          "Applications for the storage tax credit open every spring.")],
    # a rival of the lithium iron phosphate storage above: it goes to that section, and
    # the flow batteries' section stays untouched
    "/sodium": [html_page("Sodium ion grid batteries",
                          "Sodium ion batteries are an emerging rival to lithium iron "
                          "phosphate storage, at a lower price per kWh.",
                          "The first sodium ion storage pilot connected to the grid in autumn.")],
}  # fmt: skip


@contextmanager
def loopback_web(
    monkeypatch: pytest.MonkeyPatch,
    results: Callable[[dict[str, Any]], list[dict[str, Any]]],
    *,
    home: Path,
    browser: str = "http",
) -> Iterator[tuple[FakeTavily, FakeOpenAI]]:
    """The fake search (answering with ``results``) and model on loopback, and the
    settings that point a web report at them (the site is the caller's)."""
    with FakeTavily(results, key=TAVILY_KEY) as tavily, FakeOpenAI() as llm:
        use_loopback_providers(
            monkeypatch,
            tavily=tavily,
            tavily_key=TAVILY_KEY,
            llm=llm,
            openai_key=OPENAI_KEY,
            home=home,
            browser=browser,
        )
        yield tavily, llm

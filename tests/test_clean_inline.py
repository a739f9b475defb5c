"""Source markup never reaches a report's quotes: ``core.domain.text.clean_inline`` reduces
rst, Markdown and wiki markup to the words a reader sees, and a passage anchored through
it still finds its page."""

from __future__ import annotations

import pytest

from core.domain.anchors import anchor_claim
from core.domain.text import clean_inline, quotable_sentences


@pytest.mark.parametrize(
    ("source", "clean"),
    [
        ("This BIP is '''very''' important and ''italic'' here.",
         "This BIP is very important and italic here."),
        ("See [[BIP 0034|BIP34]] and [[Script]] now.", "See BIP34 and Script now."),
        ("Per [bip-0034][BIP34] the coinbase holds the height.",
         "Per bip-0034 the coinbase holds the height."),
        ("A [plain link](https://example.org/x) stays its words.", "A plain link stays its words."),
        ("Two citations [1][2] go.", "Two citations go."),
        ("It's an ''' odd ' case; don't touch it.", "It's an ''' odd ' case; don't touch it."),
        ("An empty string '' and another '' stay.", "An empty string '' and another '' stay."),
    ],
)  # fmt: skip
def test_wiki_and_reference_markup_become_their_words(source: str, clean: str) -> None:
    assert clean_inline(source) == clean


def test_a_wiki_page_is_quoted_without_its_markup_and_anchors_back() -> None:
    page = (
        "== Motivation ==\n\n"
        "Blocks must contain the '''block height''' in the coinbase, as [[BIP 0034|BIP34]] "
        "specifies for every version 2 block.\n"
    )
    [quote] = quotable_sentences(page)
    assert quote == (
        "Blocks must contain the block height in the coinbase, as BIP34 specifies for "
        "every version 2 block."
    )
    assert "'''" not in quote and "[[" not in quote
    found = anchor_claim(quote + " [1]", page)  # the report's sentence, checked on the page
    assert found.supported and not found.missing


def test_an_html_comment_is_not_quoted_as_what_the_page_says() -> None:
    """A template's instructions to its editors, in an HTML comment, are not page text."""
    from core.domain.text import quotable_sentences

    page = (
        "# Graceful shutdown\n\nThe kubelet now delays node shutdown by a grace period.\n\n"
        "<!--\n**Note:** Provide a simplified and layman-accessible explanation of the "
        "change, and fill in every section of the template below.\n-->\n\n"
        "Pods get their termination grace period before the node stops them.\n"
    )
    assert quotable_sentences(page) == [
        "The kubelet now delays node shutdown by a grace period.",
        "Pods get their termination grace period before the node stops them.",
    ]

"""A report's source setting has one reading: ``core.source_spec.SourceSpec``."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.app.report_views import as_of_choices, providers_of, temporal_source
from core.errors import EvergreenError
from core.source_spec import SourceSpec
from core.sources.registry import check_source
from tests.conftest import run_cli


@pytest.mark.parametrize("stored", ["sample", "web", "corpus:peps", "corpus:my-notes_2.v1"])
def test_a_stored_source_reads_back_as_the_same_string(stored: str) -> None:
    spec = SourceSpec.parse(stored)
    assert str(spec) == stored
    assert SourceSpec.parse(str(spec)) == spec


def test_what_a_source_reads() -> None:
    assert SourceSpec.parse("sample") == SourceSpec("sample")
    assert SourceSpec.parse("sample").corpus_name == "sample"
    assert SourceSpec.parse("corpus:peps") == SourceSpec.of_corpus("peps")
    assert SourceSpec.parse("corpus:peps").corpus == "peps"
    assert SourceSpec.parse("corpus:peps").fetcher_name == "peps"
    web = SourceSpec.parse("web")
    assert (web.kind, web.corpus, web.corpus_name, web.fetcher_name) == ("web", None, None, "web")
    assert not web.temporal and SourceSpec.parse("corpus:peps").temporal


@pytest.mark.parametrize(
    "bad", ["", "Web", "corpus:", "corpus", "tavily", "corpus:two words", "corpus:../etc", "none"]
)
def test_a_bad_source_is_refused_in_one_line_naming_the_choices(bad: str) -> None:
    with pytest.raises(EvergreenError) as err:
        SourceSpec.parse(bad)
    message = str(err.value)
    assert "use sample, corpus:NAME or web" in message and repr(bad) in message
    assert "\n" not in message
    with pytest.raises(EvergreenError, match="use sample, corpus:NAME or web"):
        check_source(bad)  # the check every door runs before anything is written


def test_a_spec_cannot_be_built_inconsistent() -> None:
    with pytest.raises(EvergreenError, match="needs corpus name"):
        SourceSpec("corpus")
    with pytest.raises(EvergreenError, match="takes no corpus name"):
        SourceSpec("web", "peps")


def test_the_screens_read_the_source_the_same_way() -> None:
    assert temporal_source("sample") and temporal_source("corpus:peps")
    assert not temporal_source("web") and not temporal_source("bogus")
    assert providers_of("corpus:peps")["search"].startswith("local corpus 'peps'")
    assert providers_of("bogus") == {"search": "none", "fetch": "none"}
    assert as_of_choices("web") == [] and as_of_choices("bogus") == []


def test_the_cli_refuses_a_bad_source_with_the_same_line(workspace: Path) -> None:
    r = run_cli(workspace, "create", "What changed?", "--source", "corpus:")
    assert r.returncode == 1
    with pytest.raises(EvergreenError) as err:
        SourceSpec.parse("corpus:")
    assert r.stderr.strip() == f"Error: {err.value}"

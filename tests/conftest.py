"""Shared fixtures: every test gets its own workspace (database + corpora)."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

PEPS = Path(__file__).resolve().parents[2] / "shared" / "corpora" / "peps"
PEPS_CORPUS = PEPS / "peps_corpus.jsonl.gz"


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "ws"
    home.mkdir()
    monkeypatch.setenv("EVERGREEN_HOME", str(home))
    monkeypatch.delenv("EVERGREEN_DB", raising=False)
    monkeypatch.delenv("EVERGREEN_CORPORA", raising=False)
    return home


def write_jsonl(path: Path, records: list[dict], *, gz: bool = False) -> Path:
    text = "".join(json.dumps(r) + "\n" for r in records)
    if gz:
        with gzip.open(path, "wt", encoding="utf-8") as fh:
            fh.write(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def peps_slice(tmp_path: Path, peps: set[int]) -> Path:
    """A JSONL.gz holding every version of the given PEPs from the shared corpus."""
    if not PEPS_CORPUS.exists():
        pytest.skip("the shared PEP corpus is not beside this checkout")
    out = tmp_path / "peps_slice.jsonl.gz"
    with (
        gzip.open(PEPS_CORPUS, "rt", encoding="utf-8") as src,
        gzip.open(out, "wt", encoding="utf-8") as dst,
    ):
        for line in src:
            if json.loads(line)["pep"] in peps:
                dst.write(line)
    return out

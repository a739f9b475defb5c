"""The CLI as a person uses it: one clear line and exit 1 on bad input, round trips."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import run_cli as run

SAMPLE_REPORT = Path(__file__).resolve().parents[1] / "data" / "sample" / "report.md"


def test_import_export_round_trip(workspace: Path, tmp_path: Path) -> None:
    r = run(
        workspace,
        "import-report",
        str(SAMPLE_REPORT),
        "--query",
        "Storage?",
        "--as-of",
        "2026-01-15",
        "--json",
    )
    assert r.returncode == 0, r.stderr
    summary = json.loads(r.stdout)
    assert summary["sections"] >= 5 and summary["references"] == 14
    out = tmp_path / "out.md"
    assert run(workspace, "export", "1", "--format", "md", "-o", str(out)).returncode == 0
    exported = out.read_text(encoding="utf-8")
    r2 = run(workspace, "import-report", str(out), "--query", "Storage?", "--as-of", "2026-01-15")
    assert r2.returncode == 0, r2.stderr
    out2 = tmp_path / "out2.md"
    assert run(workspace, "export", "2", "-o", str(out2)).returncode == 0
    assert out2.read_text(encoding="utf-8") == exported  # import → export is stable
    shown = run(workspace, "show", "1")
    assert shown.stdout == exported
    listed = json.loads(run(workspace, "list", "--json").stdout)
    assert [row["id"] for row in listed] == [1, 2] and listed[0]["sources"] == 14


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("show", "42"), "No report '42'"),
        (("show", "1", "--version", "9"), "No report '1'"),
        (("corpus", "add", "x", "/nonexistent/file.jsonl"), "No such file or folder"),
        (("corpus", "search", "nope", "q"), "No corpus named 'nope'"),
        (
            ("import-report", "README.md", "--query", "q", "--as-of", "2024-13-45"),
            "Invalid date '2024-13-45'",
        ),
        (("import-report", "/nonexistent.md", "--query", "q"), "No such file"),
        (("update", "7"), "No report '7'"),
    ],
)
def test_bad_input_one_line(workspace: Path, args: tuple[str, ...], message: str) -> None:
    r = run(workspace, *args)
    assert r.returncode == 1
    assert message in r.stderr and "Traceback" not in r.stderr + r.stdout
    assert len(r.stderr.strip().splitlines()) == 1


def test_bad_markdown_files(workspace: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.md"
    empty.write_text("  \n\n")
    latin = tmp_path / "latin.md"
    latin.write_bytes(b"# Caf\xe9\n\nText.\n")
    plain = tmp_path / "plain.md"
    plain.write_text("Just some notes without any heading [1].\n")
    r = run(workspace, "import-report", str(empty), "--query", "q")
    assert r.returncode == 1 and "empty" in r.stderr
    r = run(workspace, "import-report", str(latin), "--query", "q")
    assert r.returncode == 1 and "not UTF-8" in r.stderr
    assert json.loads(run(workspace, "list", "--json").stdout) == []  # nothing half-written
    r = run(workspace, "import-report", str(plain), "--query", "q", "--json")
    assert r.returncode == 0 and json.loads(r.stdout)["sections"] == 1


def test_demo_is_idempotent(workspace: Path) -> None:
    first = json.loads(run(workspace, "demo", "--json").stdout)
    again = json.loads(run(workspace, "demo", "--json").stdout)
    assert first["created"] and not again["created"]
    assert first["report_id"] == again["report_id"]
    corpora = json.loads(run(workspace, "corpus", "list", "--json").stdout)
    assert corpora[0]["name"] == "sample" and corpora[0]["pages"] >= 30


def test_a_report_held_by_a_run_names_the_command_that_frees_it(workspace: Path) -> None:
    assert run(workspace, "demo").returncode == 0
    first = run(workspace, "update", "1", "--as-of", "2026-04-15", "--json")
    assert first.returncode == 0, first.stderr
    run_id = json.loads(first.stdout)["run_id"]
    again = run(workspace, "update", "1", "--as-of", "2026-07-15")
    assert again.returncode == 1
    assert " ".join(again.stderr.split()) == (
        f"Error: Run {run_id} of report 1 is awaiting review. "
        f"Review it: evergreen review {run_id} (or evergreen cancel {run_id})."
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("export", "1"), "Missing option '--output'"),
        (("update", "1", "--nope"), "No such option: --nope"),
    ],
)
def test_a_usage_error_is_the_usage_and_one_line_never_a_traceback(
    workspace: Path, args: tuple[str, ...], message: str
) -> None:
    result = run(workspace, *args)
    assert result.returncode == 2
    assert message in result.stderr and "Usage: " in result.stderr
    assert "Traceback" not in result.stderr and "╭" not in result.stderr

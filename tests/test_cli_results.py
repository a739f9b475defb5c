"""The CLI's ``--json`` contract (``core.app.cli_results``): every command that makes or
changes a version prints a result its model accepts and the documented JSON Schema
(``core/app/cli_results.schema.json``) validates, the schema file is the models' own, and a
result missing a field is refused rather than printed."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
from pydantic import ValidationError

from core.app.cli_results import RESULTS, SCHEMA_FILE, Created, schema
from tests.conftest import run_cli

SAMPLE_REPORT = Path(__file__).resolve().parents[1] / "data" / "sample" / "report.md"


def test_the_schema_file_is_the_models_own() -> None:
    assert json.loads(SCHEMA_FILE.read_text(encoding="utf-8")) == schema(), (
        "core/app/cli_results.schema.json is out of date: run python -m core.app.cli_results"
    )


def cli(workspace: Path, *args: str) -> str:
    done = run_cli(workspace, *args)
    assert done.returncode == 0, done.stderr + done.stdout
    return done.stdout


def validate(command: str, output: str) -> dict:
    data = json.loads(output)
    document = schema()
    ref = document["commands"][command].split("/")[-1]
    jsonschema.validate(data, {**document, "$ref": f"#/$defs/{ref}"})
    RESULTS[command].model_validate(data)
    return data


def test_every_command_that_makes_a_version_prints_its_documented_result(
    workspace: Path,
) -> None:
    cli(workspace, "demo")
    imported = validate(
        "import-report",
        cli(
            workspace,
            "import-report", str(SAMPLE_REPORT), "--query", "Where does storage stand?",
            "--as-of", "2026-01-15", "--allow-duplicate", "--json",
        ),
    )  # fmt: skip
    assert imported["version"] == 1 and imported["claims"]["claims"] > 0
    update = validate("update", cli(workspace, "update", "1", "--as-of", "2026-04-15", "--json"))
    assert update["status"] == "awaiting_review" and update["version"] is None
    review = validate("review", cli(workspace, "review", str(update["run_id"]), "--approve-all",
                                        "--commit", "--json"))  # fmt: skip
    assert review["version"] == 2 and review["proposals"]
    created = validate(
        "create", cli(workspace, "create", "Where does grid-scale storage stand?", "--json")
    )
    assert created["version"] == 1 and created["cost"]["searches"] > 0
    rebuilt = validate("rebuild", cli(workspace, "rebuild", "1", "--as-of", "2026-07-15", "--json"))
    assert rebuilt["version"] == 1 and rebuilt["report_id"] != 1


def test_a_result_missing_a_field_is_refused_not_printed() -> None:
    result = {
        "report_id": 1, "version": 1, "sections": 3, "sources": 2, "run_id": 1,
        "claims": {"claims": 1, "supported": 1, "unsupported": 0, "unresolved": 0, "stale": 0},
    }  # fmt: skip
    with pytest.raises(ValidationError, match="cost"):
        Created.model_validate(result)


def _failure(done: object) -> dict:
    document = schema()
    data = json.loads(done.stdout)  # type: ignore[attr-defined]
    jsonschema.validate(data, {**document, "$ref": document["failure"]})
    return data


def test_a_failed_command_with_json_prints_its_failure_as_one_json_object(
    tmp_path: Path,
) -> None:
    """A script that asks for ``--json`` reads one JSON object on stdout either way: the
    result, or the failure (message, kind, exit code); the same message stays on stderr
    as one line for a person."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    missing = run_cli(workspace, "update", "99", "--as-of", "2026-04-15", "--json")
    assert missing.returncode == 1
    failure = _failure(missing)
    assert failure["kind"] == "error" and failure["exit_code"] == 1
    assert "99" in failure["error"] and failure["error"] in missing.stderr.replace("\n", " ")
    assert len(missing.stderr.strip().splitlines()) <= 2  # one line, wrapped at most once
    wrong_date = run_cli(workspace, "update", "1", "--as-of", "2030-01-01", "--json")
    assert wrong_date.returncode == 1 and "future" in _failure(wrong_date)["error"]
    usage = run_cli(workspace, "update", "--json", "--no-such-option")
    assert usage.returncode == 2
    assert _failure(usage) == {
        "error": "No such option: --no-such-option",
        "kind": "usage",
        "exit_code": 2,
    }
    plain = run_cli(workspace, "update", "99", "--as-of", "2026-04-15")
    assert plain.returncode == 1 and plain.stdout == ""  # without --json: stderr only

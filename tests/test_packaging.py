"""The wheel works outside a checkout: it carries the prompts and the sample workspace, so
`evergreen demo` and the LLM writer's prompts work from an installed package."""

from __future__ import annotations

import json
import os
import site
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _wheel(out: Path) -> Path:
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        capture_output=True,
        text=True,
    )
    if built.returncode != 0:
        if os.environ.get("CI") == "true":
            raise AssertionError(built.stderr)
        pytest.skip(f"cannot build the wheel here (no package index?): {built.stderr[-300:]}")
    [wheel] = out.glob("evergreen-*.whl")
    return wheel


def _check_env(env_dir: Path) -> Path:
    """A virtualenv whose own site-packages comes first (the wheel goes there) and that
    sees the packages of the interpreter running the tests after it: the dependencies and
    pip, wherever they were installed: the base interpreter, a virtualenv, the user's site.
    (``system_site_packages`` sees the base interpreter only, not the virtualenv that
    ``pip install -e '.[test]'`` filled.)"""
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    own = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    theirs = [sysconfig.get_path("purelib"), sysconfig.get_path("platlib"), *site.getsitepackages()]
    if site.ENABLE_USER_SITE:
        theirs.append(site.getusersitepackages())
    dirs = [d for d in dict.fromkeys(theirs) if Path(d).is_dir()]
    # addsitedir also reads those folders' .pth files (namespace packages and the like);
    # the checkout's editable finder among them only ever comes after the wheel's code
    lines = "".join(f"import site; site.addsitedir({d!r})\n" for d in dirs)
    (Path(own) / "zz_running_interpreter.pth").write_text(lines, encoding="utf-8")
    return python


def test_an_installed_wheel_runs_the_demo_and_loads_the_prompts(tmp_path: Path) -> None:
    wheel = _wheel(tmp_path / "dist")
    env_dir = tmp_path / "venv"
    python = _check_env(env_dir)
    install = subprocess.run(
        [str(python), "-m", "pip", "install", "-q", "--no-deps", "--ignore-installed", str(wheel)],
        capture_output=True,
        text=True,
    )
    assert install.returncode == 0, install.stderr
    away = tmp_path / "elsewhere"  # no checkout here: nothing can be found beside the code
    away.mkdir()
    env = {**os.environ, "EVERGREEN_HOME": str(tmp_path / "ws"), "PYTHONSAFEPATH": "1"}
    for name in ("EVERGREEN_DB", "EVERGREEN_CORPORA", "PYTHONPATH"):
        env.pop(name, None)

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(python), *args], cwd=away, env=env, capture_output=True, text=True, timeout=300
        )

    where = run("-c", "import core, core.config as c; print(core.__file__); print(c.sample_dir())")
    assert where.returncode == 0, where.stderr
    code_file, sample = where.stdout.split()
    assert Path(code_file).is_relative_to(env_dir)  # the wheel's code, not the checkout's
    assert Path(sample).is_relative_to(env_dir) and (Path(sample) / "report.md").is_file()
    demo = run("-m", "core.cli", "demo")
    assert demo.returncode == 0, demo.stderr
    listed = run("-m", "core.cli", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    [report] = json.loads(listed.stdout)
    assert report["title"].startswith("Grid-Scale Battery Energy Storage") and report["version"]
    prompt = run(
        "-c",
        "from core.writers.prompts import PROMPTS_DIR, load_prompt; "
        "print(PROMPTS_DIR); print(load_prompt('write_section').name)",
    )
    assert prompt.returncode == 0, prompt.stderr
    folder, name = prompt.stdout.split()
    assert Path(folder).is_relative_to(env_dir) and name == "write_section"

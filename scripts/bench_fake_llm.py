"""`evergreen bench --writer llm` against the loopback fake OpenAI-compatible model.

The fake (tests/fakes/openai_server.py) quotes its sources and returns a supporting quote
per sentence, and it revises each changed claim with the passage the source now has, so
the figures measure the engine's LLM path (prompts, quote checks, claim revision, costs),
not a model's prose. Usage (from the project root, in a workspace that has the corpus):

    EVERGREEN_HOME=WS python scripts/bench_fake_llm.py --corpus peps \
        --queries ../shared/corpora/peps/queries.json --out bench-llm-peps [--from 2016 --to 2025]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.fakes.openai_server import FakeOpenAI  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--queries", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--from", dest="year_from", default="2016")
    parser.add_argument("--to", dest="year_to", default="2025")
    parser.add_argument("--task", default="lct")
    args = parser.parse_args()
    with FakeOpenAI() as llm:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": llm.base_url,
            "OPENAI_API_KEY": "sk-fake-loopback",
            "EVERGREEN_LLM": "offline",
        }
        cmd = [
            sys.executable, "-m", "core.cli", "bench",
            "--corpus", args.corpus, "--queries", args.queries, "--out", args.out,
            "--from", args.year_from, "--to", args.year_to, "--task", args.task,
            "--writer", "llm",
        ]  # fmt: skip
        done = subprocess.run(cmd, env=env)
        print(f"model requests served: {len(llm.requests)}")
        return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())

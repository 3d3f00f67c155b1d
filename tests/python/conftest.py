"""Shared fixtures: the CLI (ALIBI_BLIND_CLI, set by CTest) and its --format json document."""
import json
import os
import subprocess

import pytest


def cli_path():
    path = os.environ.get("ALIBI_BLIND_CLI")
    if not path:
        here = os.path.dirname(os.path.abspath(__file__))
        path = os.path.join(here, "..", "..", "build", "alibi-blind")
    return path


@pytest.fixture(scope="session")
def cli():
    """cli(*args) -> (exit status, json.loads of stdout or None, stderr)."""
    path = cli_path()
    if not os.path.exists(path):
        pytest.skip("no alibi-blind binary at %s (set ALIBI_BLIND_CLI)" % path)

    def run(*args):
        p = subprocess.run([path] + list(args) + ["--format", "json"], capture_output=True, text=True,
                           env=dict(os.environ, ABL_BUDGET_SECONDS=""))
        doc = json.loads(p.stdout) if p.stdout else None
        return p.returncode, doc, p.stderr
    return run

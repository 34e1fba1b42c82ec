"""The quick-start steps of a docs page, so tests can follow a page as a new user would.

A page marks a step with an HTML comment on the line before a fenced code block (the
comment is invisible on the site):

    <!-- quickstart: file mysite/settings.py -->   the block is that file's content
    <!-- quickstart: append mysite/urls.py -->     the block is added to the end of that file
    <!-- quickstart: run -->                       the block is a command to run (bash or python)

:func:`steps` reads them in page order; :func:`follow` writes the files into a folder and
runs each command there, in order, failing loudly on the first command that fails.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parent.parent / "docs"
_MARK = re.compile(r"^<!-- quickstart: (?P<kind>file|append|run)(?: (?P<path>\S+))? -->$")
_FENCE = re.compile(r"^(?P<fence>```+)\s*(?P<language>[\w+-]*)")


@dataclass(frozen=True)
class Step:
    kind: str  # "file", "append" or "run"
    path: str | None
    language: str
    text: str


def steps(page: str | Path) -> list[Step]:
    """The marked blocks of ``page`` (a path, or a name under ``docs/``), in order."""
    path = page if isinstance(page, Path) else DOCS / page
    lines = path.read_text(encoding="utf-8").splitlines()
    found: list[Step] = []
    index = 0
    while index < len(lines):
        mark = _MARK.match(lines[index].strip())
        index += 1
        if mark is None:
            continue
        fence = _FENCE.match(lines[index].strip()) if index < len(lines) else None
        if fence is None:
            raise ValueError(f"{path}:{index}: a quickstart mark must precede a fenced block")
        end = index + 1
        while not lines[end].strip().startswith(fence["fence"]):
            end += 1
        indent = len(lines[index]) - len(lines[index].lstrip())
        body = "\n".join(line[indent:] for line in lines[index + 1 : end]) + "\n"
        found.append(Step(mark["kind"], mark["path"], fence["language"], body))
        index = end + 1
    return found


def follow(
    page: str | Path, folder: Path, env: dict[str, str], until_run: int | None = None
) -> list[subprocess.CompletedProcess[str]]:
    """Write ``page``'s files into ``folder`` and run its commands there, in order (all of
    them, or the first ``until_run``); the completed commands."""
    done: list[subprocess.CompletedProcess[str]] = []
    environment = {**env, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"}
    for step in steps(page):
        if step.kind in ("file", "append"):
            assert step.path is not None
            target = folder / step.path
            target.parent.mkdir(parents=True, exist_ok=True)
            with target.open("a" if step.kind == "append" else "w", encoding="utf-8") as out:
                out.write(step.text)
            continue
        if until_run is not None and len(done) == until_run:
            break
        command = [sys.executable, "-c", step.text] if step.language == "python" else [
            "bash", "-euo", "pipefail", "-c", step.text
        ]  # fmt: skip
        ran = subprocess.run(
            command, cwd=folder, env=environment, capture_output=True, text=True, timeout=300
        )
        assert ran.returncode == 0, (
            f"{page}: {step.text}\n{ran.stdout[-2000:]}\n{ran.stderr[-3000:]}"
        )
        done.append(ran)
    return done

"""Pictures work after any install from a fresh copy of the repository, without npm.

``setup.py`` downloads the pinned tarballs of Cytoscape.js and cytoscape-dagre from the
npm registry with Python's own ``urllib`` and checks their digests. Each test copies the
repository's tracked files (what a clone holds: no ``memora_ogm/graph_assets``) to a
temporary folder and installs it into a new virtual environment, with every folder that
holds npm left off the PATH; the installed package then writes a picture, whose page
must inline both scripts and their licences. Offline is simulated by pointing
``MEMORA_OGM_NPM_REGISTRY`` at a port that refuses connections: the install fails and
says what to do, and doing it (the tarballs in a folder named by
``MEMORA_OGM_GRAPH_ASSETS``) builds a wheel that draws. As in ``tests/test_wheel.py``,
the new environment gets the dependencies installed here through a ``.pth`` line.
"""

from __future__ import annotations

import os
import re
import shutil
import site
import socket
import subprocess
import sys
import sysconfig
import urllib.request
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

import pytest

from memora_ogm.picture import SCRIPTS

ROOT = Path(__file__).resolve().parent.parent

#: Writes a small picture with the installed package; prints where memora_ogm came from.
DRAW = """
import pathlib, sys
import memora_ogm
from memora_ogm.picture import GraphEdge, GraphNode, MemoryGraph
nodes = (GraphNode("memory:1", "Memory", "Ann likes tea"), GraphNode("date:1", "Date", "today"))
graph = MemoryGraph("fresh copy", nodes, (GraphEdge("memory:1", "date:1", "DATE_OBTAINED"),))
graph.write_html(sys.argv[1])
print(pathlib.Path(memora_ogm.__file__).parent)
"""


def _run(
    *args: str | Path, cwd: Path, env: dict[str, str], ok: bool = True
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert (done.returncode == 0) == ok, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


def _fresh_copy(target: Path) -> Path:
    """The repository's tracked files, as in the working tree, without graph_assets."""
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():  # a file deleted in the working tree is left out
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    assert not (target / "memora_ogm" / "graph_assets").exists()
    return target


@pytest.fixture
def without_npm(tmp_path: Path) -> Iterator[tuple[Path, dict[str, str]]]:
    """A new virtual environment's python and an environment whose PATH has no npm."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    python = venv / "bin" / "python"
    purelib = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    here = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    (Path(purelib) / "dependencies.pth").write_text("\n".join(dict.fromkeys(here)) + "\n")

    folders = os.environ.get("PATH", "").split(os.pathsep)
    path = os.pathsep.join(
        [str(venv / "bin"), *(f for f in folders if f and not (Path(f) / "npm").exists())]
    )
    assert shutil.which("npm", path=path) is None
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("NEO4J_", "PYTHON", "VIRTUAL_ENV", "MEMORA_OGM_"))
    }
    env |= {"PATH": path, "PIP_ROOT_USER_ACTION": "ignore"}
    yield python, env


@pytest.fixture
def refused() -> Iterator[str]:
    """A URL whose port refuses connections: bound here, never listening."""
    with socket.socket() as bound:
        bound.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{bound.getsockname()[1]}"


def _draws(python: Path, env: dict[str, str], work: Path) -> Path:
    """Writes a picture with the installed package; checks the page; returns where
    memora_ogm was imported from."""
    page = work / "picture.html"
    where = Path(_run(python, "-c", DRAW, page, cwd=work, env=env).stdout.strip())
    text = page.read_text(encoding="utf-8")
    # The scripts this checkout draws with, fetched by the same pins.
    assets = resources.files("memora_ogm") / "graph_assets"
    for name in SCRIPTS:
        assert (assets / f"{name}.min.js").read_text(encoding="utf-8") in text
        assert (assets / f"{name}.COPYING").read_text(encoding="utf-8") in text
    assert "Ann likes tea" in text and "<script src" not in text
    return where


def test_an_editable_install_without_npm_draws(
    tmp_path: Path, without_npm: tuple[Path, dict[str, str]]
) -> None:
    python, env = without_npm
    copy = _fresh_copy(tmp_path / "copy")
    work = tmp_path / "elsewhere"
    work.mkdir()
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "-e", copy, cwd=work, env=env)
    assert sorted(p.name for p in (copy / "memora_ogm" / "graph_assets").iterdir()) == [
        "cytoscape-dagre.COPYING",
        "cytoscape-dagre.min.js",
        "cytoscape.COPYING",
        "cytoscape.min.js",
    ]
    assert _draws(python, env, work) == copy / "memora_ogm"


def test_offline_the_install_fails_and_says_what_to_do(
    tmp_path: Path, without_npm: tuple[Path, dict[str, str]], refused: str
) -> None:
    python, env = without_npm
    copy = _fresh_copy(tmp_path / "copy")
    work = tmp_path / "elsewhere"
    work.mkdir()
    env["MEMORA_OGM_NPM_REGISTRY"] = refused
    install = ("-m", "pip", "install", "--no-deps", "-e", copy)
    failed = _run(python, *install, cwd=work, env=env, ok=False)
    output = failed.stdout + failed.stderr
    assert (
        "memora-ogm: cannot get the scripts that draw graph pictures: cannot read "
        f"{refused}/cytoscape/-/cytoscape-3.35.0.tgz: <urlopen error" in output
    )
    assert "Connection refused" in output
    assert "set MEMORA_OGM_GRAPH_ASSETS to that folder." in output
    urls = re.findall(r"^\s*(https://\S+\.tgz)$", output, re.MULTILINE)
    assert [url.rsplit("/", 1)[1] for url in urls] == [
        "cytoscape-3.35.0.tgz",
        "cytoscape-dagre-4.0.1.tgz",
    ]

    # Done as it says, elsewhere: the tarballs downloaded into a folder.
    tarballs = tmp_path / "tarballs"
    tarballs.mkdir()
    for url in urls:
        with urllib.request.urlopen(url, timeout=60) as response:
            (tarballs / url.rsplit("/", 1)[1]).write_bytes(response.read())

    # A tarball that is not the pinned one is refused, and nothing installs.
    tampered = tmp_path / "tampered"
    shutil.copytree(tarballs, tampered)
    data = bytearray((tampered / "cytoscape-3.35.0.tgz").read_bytes())
    data[-1] ^= 1
    (tampered / "cytoscape-3.35.0.tgz").write_bytes(bytes(data))
    env["MEMORA_OGM_GRAPH_ASSETS"] = str(tampered)
    failed = _run(python, *install, cwd=work, env=env, ok=False)
    assert re.search(
        r"cytoscape-3\.35\.0\.tgz has the digest sha512-\S+, not the pinned sha512-sMvBIXiG",
        failed.stdout + failed.stderr,
    ), failed.stderr
    assert not (copy / "memora_ogm" / "graph_assets" / "cytoscape.min.js").exists()

    # From the right ones, still offline, a wheel that carries the scripts and draws.
    env["MEMORA_OGM_GRAPH_ASSETS"] = str(tarballs)
    dist = tmp_path / "dist"
    _run(python, "-m", "build", "--wheel", "--outdir", dist, copy, cwd=work, env=env)
    (wheel,) = dist.glob("memora_ogm-*.whl")
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel, cwd=work, env=env)
    assert _draws(python, env, work).is_relative_to(tmp_path / "venv")

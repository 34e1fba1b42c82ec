"""Build hook: the JavaScript that draws memory graphs (``memora_ogm.picture``).

The pictures are drawn in the browser by Cytoscape.js with its dagre layout (both MIT,
kept upstream on npm). They are not kept in this repository: building the package (a
wheel, or ``pip install -e .``) fetches the pinned releases with npm's own client, checks
each tarball against the digest pinned here, and puts the browser builds and their
licences in ``memora_ogm/graph_assets``, from where every picture inlines them (it loads
nothing from the network). Without npm the build goes on without them, and writing a
picture says how to get them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

from setuptools import setup

ASSETS = Path(__file__).resolve().parent / "memora_ogm" / "graph_assets"
#: npm package, version, its browser build, and the tarball's digest (npm's ``integrity``).
PACKAGES = (
    (
        "cytoscape",
        "3.35.0",
        "dist/cytoscape.min.js",
        "sha512-sMvBIXiGMnhkCaWz2R06FwF/27MNlS+Tqvi17foO9UhnUg3XGZccKjxsvEqQFAQYMSSZmN5SxYzUYlQ0DOJJ3g==",
    ),
    (
        "cytoscape-dagre",  # its build includes dagre (MIT) itself
        "4.0.1",
        "dist/cytoscape-dagre.min.js",
        "sha512-hyNdh8Vp1nwzBcjHnM4c71G81bFhPmQYLXD2HM9AZIvl+8TrMzWEOPW45hF/XOBQiEguPcDQzi6VrXR1XBcXOA==",
    ),
)


def _fetch(npm: str, name: str, version: str, build: str, digest: str, folder: Path) -> None:
    packed = subprocess.run(
        [npm, "pack", "--json", "--pack-destination", str(folder), f"{name}@{version}"],
        capture_output=True,
        text=True,
        check=True,
    )
    tarball = folder / json.loads(packed.stdout)[0]["filename"]
    found = "sha512-" + base64.b64encode(hashlib.sha512(tarball.read_bytes()).digest()).decode()
    if found != digest:
        raise RuntimeError(f"{name}@{version}: the tarball's digest is {found}, not {digest}")
    with tarfile.open(tarball) as tar:
        for member, target in ((build, Path(build).name), ("LICENSE", f"{name}.COPYING")):
            extracted = tar.extractfile(f"package/{member}")
            assert extracted is not None
            (ASSETS / target).write_bytes(extracted.read())


def fetch_graph_assets() -> None:
    """Put the pinned browser builds in ``memora_ogm/graph_assets`` unless they are there."""
    ASSETS.mkdir(exist_ok=True)  # the package memora_ogm.graph_assets, even when empty
    wanted = [entry for entry in PACKAGES if not (ASSETS / Path(entry[2]).name).is_file()]
    if not wanted:
        return
    npm = shutil.which("npm")
    if npm is None:
        print("memora-ogm: npm not found, graph pictures will be unavailable", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as folder:
        for entry in wanted:
            try:
                _fetch(npm, *entry, Path(folder))
            except subprocess.CalledProcessError as error:  # offline: install all the same
                print(f"memora-ogm: npm pack {entry[0]} failed, graph pictures will be "
                      f"unavailable: {error.stderr.strip()[-300:]}", file=sys.stderr)  # fmt: skip
                return


# Before setuptools lists the package's files (egg_info), for every kind of build.
fetch_graph_assets()
setup()

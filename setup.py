"""Build hook: the JavaScript that draws memory graphs (``memora_ogm.picture``).

The pictures are drawn in the browser by Cytoscape.js with its dagre layout (both MIT,
published on npm). They are not kept in this repository: building the package (a wheel,
or ``pip install -e .``) downloads the pinned releases' tarballs from the npm registry
over HTTPS (Python's own ``urllib``, no npm needed), checks each against the digest pinned
here, and puts the browser builds and their licences in ``memora_ogm/graph_assets``, from
where every picture inlines them (a picture loads nothing from the network).

When a tarball cannot be had, or its digest is wrong, the build fails and says what to do:
``MEMORA_OGM_GRAPH_ASSETS=<folder>`` takes the tarballs from a folder instead (offline
builds), and ``MEMORA_OGM_NPM_REGISTRY`` names another registry (a mirror).
"""

from __future__ import annotations

import base64
import hashlib
import io
import os
import tarfile
import urllib.request
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
NPM = "https://registry.npmjs.org"


def _url(registry: str, name: str, version: str) -> str:
    """Where a registry keeps a package's tarball (npm's own layout, unscoped names)."""
    return f"{registry.rstrip('/')}/{name}/-/{name}-{version}.tgz"


class GraphAssetsError(RuntimeError):
    """A pinned tarball could not be had or is not the pinned one."""


def _tarball(name: str, version: str, digest: str) -> bytes:
    """The package's tarball, from ``MEMORA_OGM_GRAPH_ASSETS`` or the registry, checked."""
    folder = os.environ.get("MEMORA_OGM_GRAPH_ASSETS")
    if folder:  # under the registry's own file name (npm pack's too)
        where = Path(folder, f"{name}-{version}.tgz").resolve().as_uri()
    else:
        where = _url(os.environ.get("MEMORA_OGM_NPM_REGISTRY") or NPM, name, version)
    try:
        with urllib.request.urlopen(where, timeout=60) as response:
            data = response.read()
    except OSError as error:  # urllib's URLError and HTTPError are OSErrors
        raise GraphAssetsError(f"cannot read {where}: {error}") from None
    found = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if found != digest:
        raise GraphAssetsError(f"{where} has the digest {found}, not the pinned {digest}")
    return data


def fetch_graph_assets() -> None:
    """Put the pinned browser builds in ``memora_ogm/graph_assets`` unless they are there."""
    ASSETS.mkdir(exist_ok=True)
    for name, version, build, digest in PACKAGES:
        if (ASSETS / Path(build).name).is_file():
            continue
        try:
            data = _tarball(name, version, digest)
        except GraphAssetsError as error:
            urls = "".join(f"\n  {_url(NPM, n, v)}" for n, v, *_ in PACKAGES)
            raise SystemExit(
                f"memora-ogm: cannot get the scripts that draw graph pictures: {error}\n"
                "Retry with access to the npm registry, or set MEMORA_OGM_NPM_REGISTRY to a "
                f"mirror of it, or download{urls}\n"
                "into a folder and set MEMORA_OGM_GRAPH_ASSETS to that folder."
            ) from None
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            # the build last: its presence is what says this package is done
            for member, target in (("LICENSE", f"{name}.COPYING"), (build, Path(build).name)):
                extracted = tar.extractfile(f"package/{member}")
                assert extracted is not None
                (ASSETS / target).write_bytes(extracted.read())


# Before setuptools lists the package's files (egg_info), for every kind of build.
fetch_graph_assets()
setup()

"""The wheel installs and runs outside the source tree.

It is built (``python -m build``, whose output must carry no deprecation warning about
the license), installed into a fresh virtual environment, and run from a temporary
folder: ``memora-ogm server start``, the demo, ``shell -c`` and ``server stop``, so
the Java launcher, the POM and the migrations really ship. The new environment gets
the dependencies already installed here through a ``.pth`` line, which adds those
folders to ``sys.path`` without running their ``.pth`` files, so an editable install
of this checkout stays invisible; the test checks ``memora_ogm`` comes from the venv.
"""

from __future__ import annotations

import os
import site
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from memora_ogm import __version__
from memora_ogm.server.local import pid_running, stop_process

ROOT = Path(__file__).resolve().parent.parent


def _run(
    *args: str | Path, cwd: Path, env: dict[str, str] | None = None, timeout: float = 600
) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert done.returncode == 0, f"{args}\n{done.stdout}\n{done.stderr}"
    return done


def _venv_site_packages(python: Path, cwd: Path) -> Path:
    done = _run(python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])", cwd=cwd)
    return Path(done.stdout.strip())


@pytest.mark.local_server
def test_the_wheel_installs_and_runs_outside_the_source_tree(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    built = _run(sys.executable, "-m", "build", "--wheel", "--outdir", dist, ROOT, cwd=tmp_path)
    output = built.stdout + built.stderr
    # setuptools warns "`project.license` as a TOML table is deprecated" for the old form
    assert "deprecat" not in output.lower() and "license" not in output.lower()
    assert "is absent from the `packages` configuration" not in output
    (wheel,) = dist.glob("memora_ogm-*.whl")

    work = tmp_path / "elsewhere"  # not the checkout: nothing importable from the cwd
    work.mkdir()
    venv = tmp_path / "venv"
    _run(sys.executable, "-m", "venv", venv, cwd=work)
    python = venv / "bin" / "python"
    here = [*site.getsitepackages(), sysconfig.get_paths()["purelib"]]
    (_venv_site_packages(python, work) / "dependencies.pth").write_text(
        "\n".join(dict.fromkeys(here)) + "\n"
    )
    _run(python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", wheel, cwd=work)

    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "PYTHON", "VIRTUAL_ENV"))
    }
    env["MEMORA_OGM_HOME"] = str(tmp_path / "home")
    env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env.get('PATH', '')}"

    where = _run(
        python,
        "-c",
        "import memora_ogm, pathlib; p = pathlib.Path(memora_ogm.__file__).parent; "
        "print(p); print((p / 'py.typed').is_file(), (p / 'server/java/pom.xml').is_file(), "
        "(p / 'server/java/LocalNeo4j.java').is_file(), "
        "(p / 'graph_assets/cytoscape-dagre.min.js').is_file(), "
        "sorted(x.name for x in (p / 'migrations').glob('m*.py')))",
        cwd=work,
        env=env,
    ).stdout.splitlines()
    assert Path(where[0]).is_relative_to(venv), where
    assert where[1] == "True True True True ['m0001_memora_v0_3_x.py']"

    command = venv / "bin" / "memora-ogm"
    version = _run(command, "--version", cwd=work, env=env)
    assert version.stdout.strip() == f"memora-ogm {__version__}"

    started = _run(command, "server", "start", cwd=work, env=env)
    pid = int((tmp_path / "home" / "server.pid").read_text().strip())
    try:
        assert "export NEO4J_URI=bolt://127.0.0.1:" in started.stdout
        demo = _run(command, "demo", cwd=work, env=env)
        assert "demo finished" in demo.stdout and "via state" in demo.stdout
        migrated = _run(command, "migrate", cwd=work, env=env)
        assert migrated.stdout.strip() in ("applied: 0001", "already up to date")
        shell = _run(
            command,
            "shell",
            "-c",
            "import memora_ogm; print(memora.create_organization('Wheel').org_name, "
            "memora_ogm.__file__.startswith(" + repr(str(venv)) + "))",
            cwd=work,
            env=env,
        )
        assert shell.stdout.strip() == "Wheel True"
        inspected = _run(command, "inspect", cwd=work, env=env)
        assert "  Wheel  org_id " in inspected.stdout
        _run(command, "server", "stop", cwd=work, env=env)
        assert not pid_running(pid)
    finally:
        if pid_running(pid):
            stop_process(pid)

"""An embedded Neo4j Community server built from Maven Central, for machines without Docker.

The build (Neo4j, its Bolt connector, APOC core and ``java/LocalNeo4j.java``) is cached,
so a later start only pays for the JVM. The server listens on 127.0.0.1, its password is
in force before Bolt accepts a connection, and all it writes is the owner's alone.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import hashlib
import json
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from memora_ogm.server.connection import DEFAULT_USERNAME, Neo4jConnection
from memora_ogm.server.private import make_private_dir, write_private_file

JAVA_SOURCE_DIR = Path(__file__).resolve().parent / "java"
LAUNCHER_CLASS = "LocalNeo4j"
READY_MARKER = "MEMORA-OGM NEO4J READY"
MIN_JAVA = 17
MIN_PASSWORD_LENGTH = 8  # Neo4j's dbms.security.auth_minimum_password_length
# Pinned so that resolving it never needs plugin metadata from the network.
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"
APOC_ARTIFACTS = ("apoc-core", "apoc-common")

# Defaults that suit a 2-core, 24 GiB machine running a test suite or a demo.
DEFAULT_HEAP_MB = 1024
DEFAULT_PAGECACHE_MB = 512
DEFAULT_START_TIMEOUT = 180.0
DEFAULT_STOP_TIMEOUT = 30.0

ENV_CACHE = "MEMORA_OGM_CACHE"
ENV_NEO4J_VERSION = "MEMORA_OGM_NEO4J_VERSION"
ENV_HEAP_MB = "MEMORA_OGM_NEO4J_HEAP_MB"
ENV_PAGECACHE_MB = "MEMORA_OGM_NEO4J_PAGECACHE_MB"
ENV_START_TIMEOUT = "MEMORA_OGM_NEO4J_START_TIMEOUT"
#: More JVM options, split as a shell would (scripts/test.sh sets them for its test servers).
ENV_JAVA_OPTS = "MEMORA_OGM_NEO4J_JAVA_OPTS"
#: neo4j.conf settings, ``name=value`` split as a shell would (scripts/test.sh sets some).
ENV_SETTINGS = "MEMORA_OGM_NEO4J_SETTINGS"
ENV_PID_DIR = "MEMORA_OGM_PID_DIR"


class LocalNeo4jError(RuntimeError):
    """Building or launching the embedded Neo4j failed."""


def maven_missing(java_major: int | None, javac: bool, mvn: bool) -> list[str]:
    """What the Maven path still lacks, in words for an error message."""
    out = []
    if java_major is None:
        out.append(f"Java {MIN_JAVA}+ (no java found, or of unknown version)")
    elif java_major < MIN_JAVA:
        out.append(f"Java {MIN_JAVA}+ (found Java {java_major})")
    if not javac:
        out.append("javac (a JDK, not just a JRE)")
    if not mvn:
        out.append("Maven ('mvn' on PATH)")
    return out


@dataclass(frozen=True)
class JavaTools:
    """The Java and Maven executables the Maven path needs (None where missing)."""

    java: str | None
    javac: str | None
    mvn: str | None
    java_major: int | None  # None without java too


def _which(name: str, environ: Mapping[str, str]) -> str | None:
    java_home = environ.get("JAVA_HOME")
    if java_home and name in ("java", "javac"):
        candidate = Path(java_home) / "bin" / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which(name, path=environ.get("PATH"))


def parse_java_major(version_output: str) -> int | None:
    """``17`` from ``openjdk version "17.0.15" ...``; ``8`` from ``"1.8.0_392"``."""
    match = re.search(r'version "(\d+)(?:\.(\d+))?', version_output)
    if match is None:
        return None
    major, minor = match.groups()
    return int(minor) if major == "1" and minor else int(major)


def find_java_tools(environ: Mapping[str, str] = os.environ) -> JavaTools:
    """Locate java, javac and mvn and read java's major version."""
    java = _which("java", environ)
    major = None
    if java is not None:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            out = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=30)
            major = parse_java_major(out.stderr + out.stdout)
    return JavaTools(java, _which("javac", environ), _which("mvn", environ), major)


def pom_neo4j_version() -> str:
    pom = (JAVA_SOURCE_DIR / "pom.xml").read_text(encoding="utf-8")
    match = re.search(r"<neo4j\.version>([^<]+)</neo4j\.version>", pom)
    if match is None:  # pragma: no cover - the pom ships with the package
        raise LocalNeo4jError("java/pom.xml does not define <neo4j.version>")
    return match.group(1).strip()


def cache_root(environ: Mapping[str, str] = os.environ) -> Path:
    """``$MEMORA_OGM_CACHE``, else ``$XDG_CACHE_HOME/memora-ogm``, else ``~/.cache/memora-ogm``."""
    if environ.get(ENV_CACHE):
        return Path(environ[ENV_CACHE]).expanduser()
    return Path(environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "memora-ogm"


@dataclass(frozen=True)
class BuildArtifacts:
    """A built launcher: compiled classes, APOC plugins and the server's classpath."""

    root: Path
    neo4j_version: str
    classpath: tuple[str, ...]

    @property
    def classes_dir(self) -> Path:
        return self.root / "classes"

    @property
    def plugins_dir(self) -> Path:
        return self.root / "plugins"

    @property
    def stamp(self) -> Path:
        return self.root / "stamp.json"


def _build_key(version: str, java_major: int | None) -> str:
    digest = hashlib.sha256()
    for name in ("pom.xml", f"{LAUNCHER_CLASS}.java"):
        digest.update((JAVA_SOURCE_DIR / name).read_bytes())
        digest.update(b"\0")
    digest.update(f"{version}\0{java_major}".encode())
    return digest.hexdigest()[:12]


def _tail(path: Path, lines: int = 40) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""
    return "\n".join(text.splitlines()[-lines:])


def _load_artifacts(root: Path) -> BuildArtifacts | None:
    """The build in ``root`` when it is complete: its stamp, launcher and APOC are there,
    and so is every jar of its classpath (in ``~/.m2``, which may have been cleaned)."""
    try:
        stamp = json.loads((root / "stamp.json").read_text(encoding="utf-8"))
        classpath = tuple(str(entry) for entry in stamp["classpath"])
        built = BuildArtifacts(root, str(stamp["neo4j_version"]), classpath)
    except (OSError, ValueError, KeyError, TypeError):
        return None
    launcher = (built.classes_dir / f"{LAUNCHER_CLASS}.class").is_file()
    apoc = any(built.plugins_dir.glob("apoc-core-*.jar"))
    return built if launcher and apoc and all(map(os.path.exists, built.classpath)) else None


def build(
    neo4j_version: str | None = None, *, environ: Mapping[str, str] = os.environ
) -> BuildArtifacts:
    """Resolve the server from Maven Central and compile the launcher, or reuse the cache.

    Concurrent callers wait on a file lock instead of building twice.
    """
    version = neo4j_version or environ.get(ENV_NEO4J_VERSION) or pom_neo4j_version()
    tools = find_java_tools(environ)
    missing = maven_missing(tools.java_major, tools.javac is not None, tools.mvn is not None)
    if missing:
        raise LocalNeo4jError("cannot build the local Neo4j: missing " + ", ".join(missing))
    assert tools.mvn is not None and tools.javac is not None
    root = cache_root(environ) / f"neo4j-{version}-{_build_key(version, tools.java_major)}"
    root.parent.mkdir(parents=True, exist_ok=True)
    with open(root.parent / f".{root.name}.lock", "a+b") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # held until the file closes
        if (cached := _load_artifacts(root)) is not None:  # perhaps built meanwhile
            return cached
        print(
            f"memora-ogm: building Neo4j {version} Community + APOC from Maven Central "
            f"into {root} (once; this takes a minute)...",
            # past pytest's output capture: a minute of silence looks like a hang
            file=sys.__stderr__ or sys.stderr,
            flush=True,
        )
        shutil.rmtree(root, ignore_errors=True)
        root.mkdir(parents=True)
        log = root / "build.log"
        shutil.copyfile(JAVA_SOURCE_DIR / "pom.xml", root / "pom.xml")
        all_path = root / "classpath-all.txt"
        resolve = [tools.mvn, "-B", "-q", "-f", str(root / "pom.xml"), f"-Dneo4j.version={version}"]
        resolve += [f"-Dmdep.outputFile={all_path}", f"{DEPENDENCY_PLUGIN}:build-classpath"]
        _run_logged(
            resolve,
            log,
            f"Maven could not resolve Neo4j {version} (org.neo4j:neo4j, org.neo4j:neo4j-bolt, "
            f"org.neo4j.procedure:apoc-core). Check network access to Maven Central, or set "
            f"{ENV_NEO4J_VERSION} to another 5.26.x release",
        )
        entries = [e for e in all_path.read_text(encoding="utf-8").strip().split(os.pathsep) if e]
        plugins = root / "plugins"
        plugins.mkdir()
        classpath = []
        for entry in entries:
            if Path(entry).name.startswith(tuple(f"{a}-" for a in APOC_ARTIFACTS)):
                shutil.copy2(entry, plugins / Path(entry).name)
            else:
                classpath.append(entry)
        if not any(plugins.glob("apoc-core-*.jar")):
            raise LocalNeo4jError(f"Maven resolved no apoc-core jar; see {all_path}")
        javac = [tools.javac, "--release", str(MIN_JAVA), "-d", str(root / "classes")]
        javac += ["-cp", os.pathsep.join(classpath), str(JAVA_SOURCE_DIR / "LocalNeo4j.java")]
        _run_logged(javac, log, "javac could not compile the launcher")
        stamp = {"neo4j_version": version, "classpath": classpath, "built_at": time.time()}
        write_private_file(root / "stamp.json", json.dumps(stamp, indent=1))
    return BuildArtifacts(root, version, tuple(classpath))


def _run_logged(cmd: list[str], log: Path, what: str) -> None:
    with open(log, "ab") as out:
        out.write(("$ " + " ".join(cmd) + "\n").encode())
        out.flush()
        result = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT, check=False)
    if result.returncode != 0:
        raise LocalNeo4jError(
            f"{what} (exit {result.returncode}). Last lines of {log}:\n{_tail(log)}"
        )


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nobody listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_in_use(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.5)
        return sock.connect_ex(("127.0.0.1", port)) == 0


def generate_password(length: int = 24) -> str:
    """A random password that needs no quoting anywhere (letters and digits)."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))


def pid_running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no procfs (macOS): trust kill(0)
    return stat.rsplit(")", 1)[-1].split()[0] not in ("Z", "X")


def is_local_neo4j(pid: int) -> bool:
    """True when ``pid`` runs memora-ogm's launcher (where procfs can tell; else True)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except FileNotFoundError:
        return not Path("/proc/self").exists()
    except OSError:
        return True
    return LAUNCHER_CLASS.encode() in cmdline.split(b"\0")


def _note_pid(pid: int, running: bool, environ: Mapping[str, str] = os.environ) -> None:
    """``$MEMORA_OGM_PID_DIR/<pid>`` exists while a JVM runs: CI checks none is left (.ci/run)."""
    pid_dir = environ.get(ENV_PID_DIR)
    with contextlib.suppress(OSError):
        if pid_dir and running:
            Path(pid_dir).mkdir(parents=True, exist_ok=True)
            (Path(pid_dir) / str(pid)).write_text(f"{pid}\n")
        elif pid_dir:
            (Path(pid_dir) / str(pid)).unlink()


def stop_process(pid: int, timeout: float = DEFAULT_STOP_TIMEOUT) -> bool:
    """SIGTERM a launcher JVM, SIGKILL it after ``timeout``; False when none was running.

    Never signals a pid that now belongs to another program."""
    if not pid_running(pid) or not is_local_neo4j(pid):
        _note_pid(pid, running=False)
        return False
    for sig, wait in ((signal.SIGTERM, timeout), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, sig)
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and pid_running(pid):
            with contextlib.suppress(ChildProcessError, OSError):
                os.waitpid(pid, os.WNOHANG)  # reap it if it is our child
            time.sleep(0.1)
        if not pid_running(pid):
            _note_pid(pid, running=False)
            return True
    raise LocalNeo4jError(f"Neo4j process {pid} survived SIGKILL")


def _int_env(environ: Mapping[str, str], name: str, default: int) -> int:
    raw = environ.get(name, "").strip()
    if not raw:
        return default
    try:
        return int(raw)
    except ValueError as exc:
        raise LocalNeo4jError(f"{name}={raw!r} is not an integer") from exc


class LocalNeo4jServer:
    """One embedded Neo4j Community server process; ``with`` it to get its connection.

    ``port=None`` picks a free port; ``data_dir=None`` is a temporary folder that ``stop()``
    deletes. An attached server always stops: by ``stop()``, the ``with`` block, interpreter
    exit, or, if this process is killed, by the JVM itself when its stdin closes.
    ``detached=True`` leaves it running in its own session (``memora-ogm server start``).
    """

    def __init__(
        self,
        port: int | None = None,
        data_dir: str | os.PathLike[str] | None = None,
        *,
        heap_mb: int | None = None,
        pagecache_mb: int | None = None,
        password: str | None = None,
        neo4j_version: str | None = None,
        start_timeout: float | None = None,
        log_path: str | os.PathLike[str] | None = None,
        detached: bool = False,
        environ: Mapping[str, str] = os.environ,
    ) -> None:
        self._environ = environ
        self.requested_port = port
        # set by start() when None: a temporary folder, a log in it or in the data folder
        self.data_dir = Path(data_dir).expanduser().resolve() if data_dir else None
        self.log_path = Path(log_path).expanduser().resolve() if log_path else None
        self.heap_mb = heap_mb or _int_env(environ, ENV_HEAP_MB, DEFAULT_HEAP_MB)
        self.pagecache_mb = pagecache_mb or _int_env(
            environ, ENV_PAGECACHE_MB, DEFAULT_PAGECACHE_MB
        )
        self.password = password or generate_password()
        if len(self.password) < MIN_PASSWORD_LENGTH or "\n" in self.password:
            raise LocalNeo4jError(
                f"the password must be one line of at least {MIN_PASSWORD_LENGTH} characters "
                "(Neo4j's minimum)"
            )
        self.neo4j_version = neo4j_version
        self.start_timeout = start_timeout or float(
            environ.get(ENV_START_TIMEOUT) or DEFAULT_START_TIMEOUT
        )
        self.detached = detached
        self.artifacts: BuildArtifacts | None = None
        self.port: int | None = None
        self._proc: subprocess.Popen[bytes] | None = None
        self._tmpdir: Path | None = None
        self._owner_pid = os.getpid()

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    @property
    def running(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def start(self) -> Neo4jConnection:
        """Build if needed, launch the JVM and wait for its ready line."""
        if self._proc is not None:
            raise LocalNeo4jError("this server was already started")
        self._owner_pid = os.getpid()
        artifacts = self.artifacts = build(self.neo4j_version, environ=self._environ)
        if self.requested_port is not None and port_in_use(self.requested_port):
            raise LocalNeo4jError(f"port {self.requested_port} on 127.0.0.1 is already in use")
        if self.data_dir is None:
            self._tmpdir = Path(tempfile.mkdtemp(prefix="memora-ogm-neo4j-"))
            self.data_dir = self._tmpdir / "home"
        make_private_dir(self.data_dir)
        if self.log_path is None:
            self.log_path = (self._tmpdir or self.data_dir) / "memora-ogm-launcher.log"
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        attempts = 1 if self.requested_port is not None else 3
        try:
            for attempt in range(attempts):
                self.port = self.requested_port or free_port()
                if self._launch(artifacts, self.port):
                    break
                clash = "already in use" in _tail(self.log_path, 200).lower()
                if attempt + 1 == attempts or not clash:
                    raise LocalNeo4jError(self._failure_message("exited before it was ready"))
        except BaseException:
            self.stop()
            raise
        return Neo4jConnection(
            f"bolt://127.0.0.1:{self.port}", DEFAULT_USERNAME, self.password, backend="maven"
        )

    def _launch(self, artifacts: BuildArtifacts, port: int) -> bool:
        """Start the JVM; True once ready, False if it exited early. Raises on timeout."""
        assert self.data_dir is not None and self.log_path is not None
        java = find_java_tools(self._environ).java or "java"
        # APOC in the plugins folder and on the classpath, or its ApocConfig cannot be injected
        classpath = [str(artifacts.classes_dir), str(artifacts.plugins_dir / "*")]
        cmd = [java, f"-Xmx{self.heap_mb}m", "-XX:+ExitOnOutOfMemoryError", "-Dfile.encoding=UTF-8"]
        cmd += shlex.split(self._environ.get(ENV_JAVA_OPTS, ""))
        cmd += ["-cp", os.pathsep.join([*classpath, *artifacts.classpath]), LAUNCHER_CLASS]
        # "-": the password comes on stdin, never on the command line
        cmd += [str(self.data_dir), str(port), "-", str(artifacts.plugins_dir)]
        cmd.append(str(self.pagecache_mb))
        for setting in shlex.split(self._environ.get(ENV_SETTINGS, "")):
            if "=" not in setting:
                raise LocalNeo4jError(f"{ENV_SETTINGS}: {setting!r} is not name=value")
            cmd += ["--setting", setting]
        if not self.detached:
            # stdin stays open while this process lives: its end stops the server
            cmd.append("--exit-on-stdin-eof")
            if self._tmpdir is not None:
                cmd += ["--remove-when-orphaned", str(self._tmpdir)]
        log_fd = os.open(self.log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        with open(log_fd, "ab") as log:
            log_start = log.seek(0, os.SEEK_END)
            self._proc = subprocess.Popen(  # noqa: S603 - fixed argv, no shell
                cmd,
                stdin=subprocess.PIPE,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=str(self.data_dir),
                start_new_session=self.detached,
                close_fds=True,
                umask=0o077,  # the store and its logs are the owner's alone
            )
        assert self._proc.stdin is not None
        with contextlib.suppress(BrokenPipeError):
            self._proc.stdin.write((self.password + "\n").encode())
            self._proc.stdin.flush()
            if self.detached:
                self._proc.stdin.close()
        _note_pid(self._proc.pid, True, self._environ)
        if not self.detached:
            atexit.register(self.stop)
        deadline = time.monotonic() + self.start_timeout
        while True:
            with open(self.log_path, "rb") as written:
                written.seek(log_start)
                if READY_MARKER.encode() in written.read():
                    return True
            if self._proc.poll() is not None:
                self._proc.stdin.close()
                _note_pid(self._proc.pid, False, self._environ)
                return False
            if time.monotonic() > deadline:
                message = self._failure_message(
                    f"was not ready after {self.start_timeout:.0f} s "
                    f"(raise {ENV_START_TIMEOUT} on a slow machine)"
                )
                raise LocalNeo4jError(message)
            time.sleep(0.1)

    def _failure_message(self, what: str) -> str:
        parts = [f"the local Neo4j (port {self.port}) {what}."]
        if self.log_path is not None:
            parts.append(f"Last lines of {self.log_path}:\n{_tail(self.log_path)}")
        if self.data_dir is not None:
            debug_log = self.data_dir / "logs" / "debug.log"
            if debug_log.is_file():
                parts.append(f"Last lines of {debug_log}:\n{_tail(debug_log, 20)}")
        return "\n".join(parts)

    def stop(self, timeout: float = DEFAULT_STOP_TIMEOUT) -> None:
        """Stop the JVM (see :func:`stop_process`) and remove a temporary data folder.

        Safe to call twice; a no-op in a forked child, whose exit runs the inherited hook.
        """
        atexit.unregister(self.stop)
        if self._owner_pid != os.getpid():
            return  # a forked child's exit: the server and its folder are the parent's
        proc = self._proc
        if proc is not None:
            if proc.poll() is None and not stop_process(proc.pid, timeout):
                proc.kill()  # not recognisably the launcher, yet still our child
            proc.wait()  # reaped by now: this only records its exit
            if proc.stdin is not None:
                with contextlib.suppress(OSError):
                    proc.stdin.close()
            _note_pid(proc.pid, False, self._environ)
        if self._tmpdir is not None:
            shutil.rmtree(self._tmpdir, ignore_errors=True)
            self._tmpdir = None

    def release(self) -> int:
        """Forget a detached server without stopping it; returns its pid."""
        if self._proc is None or not self.detached:
            raise LocalNeo4jError("only a started, detached server can be released")
        pid = self._proc.pid
        self._proc = None
        return pid

    def __enter__(self) -> Neo4jConnection:
        return self.start()

    def __exit__(self, *exc_info: object) -> None:
        self.stop()

"""nginx in front of N ``hermesos serve --transport http`` replicas on loopback ports: started, watched, stopped.

    python3 dev.py cluster [N]                  # N replicas (default 2) behind nginx, until Ctrl-C
    python3 deploy/cluster.py [N] [--port P] [-- SERVE OPTIONS]   # the same, with this Python
    python3 deploy/cluster.py --render [N]      # print the nginx configuration it would write

Each replica is ``python -m hermes_core serve --transport http --host
127.0.0.1 --port ... --token-env HERMESOS_MCP_TOKEN`` with the options after
``--`` (``--grant fs:read``, ``--timeout 60``), its standard error in
``replica-<i>.log`` of the run folder. nginx runs as an ordinary program
(``nginx -c <folder>/nginx.conf -p <folder> -g 'daemon off;'``) with its
configuration rendered from ``nginx.conf.template`` beside this file, the
replicas' bounds (``HERMESOS_SERVE_*``, read as serve reads them) carried
over to it. The token is made anew (``secrets.token_hex(32)``) unless given;
it is printed, with the URL, and written to ``token`` in the run folder
(mode 0600).

:class:`Cluster` is the same from Python, for the load test
(``bench/bench_serve_load.py``) and the suite's test of replicas
(``tests/test_serve_replicas.py``): it starts, kills, stops and restarts
single replicas, each on the port it had, as nginx knows it.

nginx: the Debian package (``apt-get install nginx``) or any nginx 1.19.5 or
later (for its ``-e`` option) on ``PATH`` or in ``/usr/sbin``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import resource
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final

__all__ = [
    "TEMPLATE",
    "TOKEN_VARIABLE",
    "Cluster",
    "NginxMissingError",
    "Replica",
    "find_nginx",
    "load_site",
    "main",
    "render",
]

DEPLOY: Final = Path(__file__).resolve().parent
#: The nginx configuration, with a name between at-signs for each value filled in.
TEMPLATE: Final = DEPLOY / "nginx.conf.template"
#: The variable the replicas read their bearer token from (``--token-env``).
TOKEN_VARIABLE: Final = "HERMESOS_MCP_TOKEN"  # noqa: S105 - a variable's name, not a token
#: Seconds nginx waits for a replica's next bytes while it answers a call, unless told otherwise.
READ_TIMEOUT: Final = 300.0
#: Seconds a replica that refused a connection is left out before nginx tries it again.
FAIL_TIMEOUT: Final = 2
#: How a replica says where it listens, on its first line of standard error.
_LISTENING = re.compile(r"serving .* at (http://127\.0\.0\.1:(\d+)/mcp)")
_SECONDS_TO_START: Final = 120.0


class NginxMissingError(RuntimeError):
    """No nginx program was found: the message says how to install one."""


def find_nginx() -> str:
    """The nginx program: on ``PATH``, else ``/usr/sbin/nginx`` (Debian's, off a normal user's ``PATH``).

    Raises:
        NginxMissingError: there is none.
    """
    found = shutil.which("nginx") or shutil.which("nginx", path="/usr/sbin:/usr/local/sbin")
    if found is None:
        raise NginxMissingError(
            "nginx is not installed: install it (Debian, Ubuntu: sudo apt-get install nginx; "
            "python3 dev.py test does so itself when run as root) and run again"
        )
    return found


def load_site(folder: Path) -> Path:
    """*folder*, made a place to import the load test's plugin from (``loadtools.py``), for ``PYTHONPATH``.

    It holds the module and its distribution's metadata, as an installer
    leaves them: the replicas find its tools as any installed plugin's.
    """
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(DEPLOY / "loadtools.py", folder / "hermesos_loadtest.py")
    info = folder / "hermesos_loadtest-1.0.0.dist-info"
    info.mkdir(exist_ok=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: hermesos-loadtest\nVersion: 1.0.0\nRequires-Dist: hermesos-core\n"
    )
    (info / "entry_points.txt").write_text("[hermesos.plugins]\nloadtest = hermesos_loadtest\n")
    return folder


def _seconds(value: float) -> str:
    """*value* seconds as nginx takes them: whole seconds, at least 1."""
    return str(max(1, round(value)))


def render(
    ports: Sequence[int],
    run: Path,
    *,
    listen: str,
    environ: Mapping[str, str] | None = None,
    read_timeout: float = READ_TIMEOUT,
    workers: int | None = None,
    user: str | None = None,
) -> str:
    """The nginx configuration for replicas on *ports* of 127.0.0.1, listening on *listen*, its files in *run*.

    The bounds nginx holds a client to are the replicas' own
    (:func:`hermes_core.serve.http_settings` of *environ*, else of this
    process's environment): a client that nginx lets through is one a replica
    would have taken. *user*: the user nginx's workers run as, when nginx
    starts as root (None: nginx's default, or the distribution's).
    """
    from hermes_core.adapters import ARGUMENTS_MAX  # noqa: PLC0415 - the launcher's one use of the core
    from hermes_core.serve import http_settings  # noqa: PLC0415

    bounds = http_settings(environ)
    count = max(1, workers or _cores())
    max_connections = int(bounds["max_connections"])
    # Idle connections nginx keeps to the replicas, per worker, and what each replica is given at once besides:
    # together never more than a replica serves, so that it never closes one nginx is about to use.
    keepalive = max(1, min(32, max_connections // (4 * count)))
    active = max(1, max_connections - keepalive * count)
    servers = "\n".join(
        f"        server 127.0.0.1:{port} max_fails=1 fail_timeout={FAIL_TIMEOUT}s max_conns={active};"
        for port in ports
    )
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    connections = 4096
    nofile = 2 * connections + 64
    if hard != resource.RLIM_INFINITY:
        nofile = min(nofile, hard)
        connections = min(connections, max(64, (nofile - 64) // 2))
    values = {
        "user": "" if user is None else f"user {user};\n",
        "workers": str(count),
        "run": str(run),
        "nofile": str(nofile),
        "worker_connections": str(connections),
        "header_timeout": _seconds(bounds["header_timeout"]),
        "body_timeout": _seconds(bounds["body_timeout"]),
        "idle_timeout": _seconds(bounds["idle_timeout"]),
        "write_timeout": _seconds(bounds["write_timeout"]),
        "upstream_idle": str(max(1, int(bounds["idle_timeout"]) - 1)),
        "max_body": f"{ARGUMENTS_MAX // (1024 * 1024)}m" if ARGUMENTS_MAX % (1024 * 1024) == 0 else str(ARGUMENTS_MAX),
        "max_body_bytes": str(ARGUMENTS_MAX),
        "servers": servers,
        "keepalive": str(keepalive),
        "listen": listen,
        "read_timeout": _seconds(read_timeout),
        "tries": str(max(1, len(ports))),
    }
    text = TEMPLATE.read_text(encoding="utf-8")
    missing = sorted(set(re.findall(r"@([a-z_]+)@", text)) - set(values))
    if missing:
        raise ValueError(f"{TEMPLATE.name} names values the launcher does not fill in: {', '.join(missing)}")
    return re.sub(r"@([a-z_]+)@", lambda found: values[found.group(1)], text)


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _ends(process: subprocess.Popen[bytes], seconds: float) -> int | None:
    """Wait at most *seconds* for *process* to end; its status, or None if it still runs."""
    with contextlib.suppress(subprocess.TimeoutExpired):
        return process.wait(seconds)
    return None


class Replica:
    """One ``hermesos serve --transport http`` process on a loopback port, in a process group of its own."""

    def __init__(self, index: int, command: Sequence[str], environ: Mapping[str, str], log: Path) -> None:
        self.index = index
        self.command = list(command)
        self.environ = dict(environ)
        self.log = log
        self.port = 0  # any free one the first time; then the one it had, which nginx knows
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        """Its MCP endpoint, reached directly (not through nginx)."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def pid(self) -> int:
        """Its process id (it must have been started)."""
        assert self.process is not None
        return self.process.pid

    def running(self) -> bool:
        """Whether its process is alive (a stopped one, SIGSTOP, is alive)."""
        return self.process is not None and self.process.poll() is None

    def start(self) -> None:
        """Start it; :meth:`wait` returns once it listens."""
        self.starts += 1
        with self.log.open("ab") as log:
            log.write(f"-- start {self.starts}\n".encode())
            self.process = subprocess.Popen(  # noqa: S603 - this Python, the hermesos command, our own options
                [*self.command, "--port", str(self.port)],
                env=self.environ,
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=log,
                start_new_session=True,
            )

    def wait(self, seconds: float = _SECONDS_TO_START) -> None:
        """Return once it listens (it printed its URL), learning its port.

        Raises:
            RuntimeError: it ended first, or did not listen within *seconds*; the message has its log.
        """
        deadline = time.monotonic() + seconds
        marker = f"-- start {self.starts}\n"
        while True:
            text = self.log.read_text(encoding="utf-8", errors="replace")
            found = _LISTENING.search(text.rpartition(marker)[2])
            if found:
                self.port = int(found.group(2))
                return
            if not self.running():
                raise RuntimeError(f"replica {self.index} ended before it listened:\n{text[-4000:]}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"replica {self.index} did not listen within {seconds:g} s:\n{text[-4000:]}")
            time.sleep(0.05)

    def signal(self, signum: int) -> None:
        """Send *signum* to its process group (its process and anything it started)."""
        if self.running():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.pid, signum)

    def kill(self) -> None:
        """SIGKILL, and wait for it to end: no goodbye, no call finished."""
        if self.process is None:
            return
        self.signal(signal.SIGKILL)
        self.process.wait()

    def stop(self, seconds: float = 30.0) -> int | None:
        """SIGTERM (it finishes the calls in flight, within its shutdown timeout), then SIGKILL after *seconds*.

        Returns:
            Its exit status after SIGTERM, or None if it had to be killed.
        """
        if not self.running():
            return None if self.process is None else self.process.returncode
        assert self.process is not None
        self.signal(signal.SIGCONT)  # a stopped one could not end
        self.process.send_signal(signal.SIGTERM)
        status = _ends(self.process, seconds)
        if status is None:
            self.kill()
        return status


class Cluster:
    """nginx on a loopback port in front of *replicas* replicas, all in *folder* (see the module docstring).

    Args:
        replicas: how many ``hermesos serve`` processes.
        folder: where the configuration, logs, pid and temporary files go.
        token: the bearer token (made anew if None).
        environ: the replicas' environment (this process's if None); the
            token variable is added to it, and nginx's bounds come from its
            ``HERMESOS_SERVE_*`` settings.
        serve_args: more options of ``hermesos serve`` (``--grant``, ``--timeout``).
        port: nginx's port on 127.0.0.1 (0: any free one).
        read_timeout: seconds nginx waits for a replica's next bytes.
        python: the Python that runs ``hermes_core`` for the replicas.
    """

    def __init__(
        self,
        replicas: int,
        folder: Path,
        *,
        token: str | None = None,
        environ: Mapping[str, str] | None = None,
        serve_args: Sequence[str] = (),
        port: int = 0,
        read_timeout: float = READ_TIMEOUT,
        python: str = sys.executable,
        workers: int | None = None,
    ) -> None:
        if replicas < 1:
            raise ValueError(f"a cluster has at least 1 replica, not {replicas}")
        self.folder = folder
        self.token = token or secrets.token_hex(32)
        self.environ = {**(os.environ if environ is None else environ), TOKEN_VARIABLE: self.token}
        self.port = port
        self.read_timeout = read_timeout
        self.workers = workers
        self.nginx_program = find_nginx()
        command = [python, "-m", "hermes_core", "serve", "--transport", "http", "--host", "127.0.0.1"]
        command += ["--token-env", TOKEN_VARIABLE, *serve_args]
        self.replicas = [
            Replica(index, command, self.environ, folder / f"replica-{index}.log") for index in range(1, replicas + 1)
        ]
        self.nginx: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        """The MCP endpoint, through nginx."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def headers(self) -> dict[str, str]:
        """The header every request carries: the bearer token."""
        return {"Authorization": f"Bearer {self.token}"}

    def start(self) -> None:
        """Start the replicas, then nginx in front of them; return once nginx answers for them.

        Raises:
            RuntimeError: a replica or nginx did not start; the message has its log.
        """
        self.folder.mkdir(parents=True, exist_ok=True)
        token = self.folder / "token"
        token.touch(mode=0o600)
        token.write_text(self.token + "\n")
        for replica in self.replicas:
            replica.start()
        for replica in self.replicas:
            replica.wait()
        self._start_nginx()

    def _start_nginx(self) -> None:
        chosen = self.port
        for _ in range(5):  # a free port chosen may be taken by another program before nginx binds it
            self.port = chosen or _free_port()
            configuration = self.folder / "nginx.conf"
            configuration.write_text(
                render(
                    [replica.port for replica in self.replicas],
                    self.folder,
                    listen=f"127.0.0.1:{self.port}",
                    environ=self.environ,
                    read_timeout=self.read_timeout,
                    workers=self.workers,
                    # Started by root, nginx's workers would be nobody, who may not enter the run folder.
                    user="root" if os.geteuid() == 0 else None,
                ),
                encoding="utf-8",
            )
            errors = self.folder / "error.log"
            command = [self.nginx_program, "-c", str(configuration), "-p", str(self.folder), "-e", str(errors)]
            with (self.folder / "nginx.out").open("ab") as out:
                self.nginx = subprocess.Popen(  # noqa: S603 - nginx, with our own configuration
                    [*command, "-g", "daemon off;"],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=out,
                    start_new_session=True,
                )
            deadline = time.monotonic() + _SECONDS_TO_START
            while self.nginx.poll() is None and time.monotonic() < deadline:
                with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=1):
                    return
                time.sleep(0.05)
            said = (self.folder / "nginx.out").read_text(errors="replace") + errors.read_text(errors="replace")
            self._stop_nginx()
            if chosen or "Address already in use" not in said:
                raise RuntimeError(f"nginx did not start:\n{said[-4000:]}")
        raise RuntimeError("nginx did not start: every free port chosen was taken before it bound it")

    def wait_healthy(self, seconds: float = _SECONDS_TO_START) -> None:
        """Return once every replica answers its health check (``GET /healthz``).

        Raises:
            RuntimeError: one did not within *seconds*.
        """
        deadline = time.monotonic() + seconds
        for replica in self.replicas:
            while not healthy(f"http://127.0.0.1:{replica.port}/healthz"):
                if time.monotonic() > deadline:
                    raise RuntimeError(f"replica {replica.index} is not healthy after {seconds:g} s")
                time.sleep(0.05)

    def _stop_nginx(self) -> None:
        if self.nginx is None or self.nginx.poll() is not None:
            return
        self.nginx.send_signal(signal.SIGQUIT)  # graceful: the requests in flight are finished
        if _ends(self.nginx, 15) is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.nginx.pid, signal.SIGKILL)
            self.nginx.wait()

    def stop(self) -> None:
        """Stop nginx (gracefully), then every replica (SIGTERM; SIGKILL for one that does not end)."""
        self._stop_nginx()
        for replica in self.replicas:
            replica.signal(signal.SIGCONT)
            if replica.running():
                assert replica.process is not None
                replica.process.send_signal(signal.SIGTERM)
        for replica in self.replicas:
            if replica.process is not None and _ends(replica.process, 30) is None:
                replica.kill()

    def __enter__(self) -> Cluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


def healthy(url: str) -> bool:
    """Whether ``GET`` *url* answers 200 within 5 s."""
    try:
        with urllib.request.urlopen(url, timeout=5) as response:  # noqa: S310 - an http:// URL of ours
            return bool(response.status == 200)
    except (OSError, urllib.error.URLError):
        return False


# -- the command -------------------------------------------------------------------------------------


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python3 deploy/cluster.py",
        description="Start nginx in front of N hermesos serve --transport http replicas on loopback ports, print "
        "the URL and the bearer token, and stop them all on Ctrl-C or SIGTERM. Options after -- go to every replica "
        "(--grant fs:read, --timeout 60).",
    )
    parser.add_argument("replicas", nargs="?", type=int, default=2, help="how many replicas (default 2)")
    parser.add_argument("--port", type=int, default=8080, help="nginx's port on 127.0.0.1 (default 8080; 0: any)")
    parser.add_argument("--folder", type=Path, help="where the configuration and logs go (default: a new temporary)")
    parser.add_argument(
        "--read-timeout",
        type=float,
        default=READ_TIMEOUT,
        help=f"seconds nginx waits for a replica's next bytes (default {READ_TIMEOUT:g})",
    )
    parser.add_argument("--render", action="store_true", help="print the nginx configuration for ports 8001... only")
    return parser


def main(argv: Sequence[str]) -> int:
    """Run the command (see the module docstring); its exit status."""
    argv = list(argv)
    serve_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, serve_args = argv[:at], argv[at + 1 :]
    args = _parser().parse_args(argv)
    if args.replicas < 1:
        print(f"cluster: error: at least 1 replica, not {args.replicas}", file=sys.stderr)
        return 2
    if args.render:
        run = Path("/run/hermesos-nginx")
        ports = [8001 + index for index in range(args.replicas)]
        print(render(ports, run, listen=f"127.0.0.1:{args.port}", read_timeout=args.read_timeout), end="")
        return 0
    with contextlib.ExitStack() as stack:
        folder = args.folder or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="hermesos-cluster-")))
        try:
            cluster = Cluster(
                args.replicas, folder.resolve(), serve_args=serve_args, port=args.port, read_timeout=args.read_timeout
            )
        except NginxMissingError as error:
            print(f"cluster: error: {error}", file=sys.stderr)
            return 2
        stack.callback(cluster.stop)
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))  # stopped as Ctrl-C stops it: everything goes
        try:
            cluster.start()
        except RuntimeError as error:
            print(f"cluster: error: {error}", file=sys.stderr)
            return 1
        for replica in cluster.replicas:
            print(f"replica {replica.index}: {replica.url} (pid {replica.pid}, log {replica.log})")
        print(f"serving at {cluster.url} through nginx (configuration {folder / 'nginx.conf'})")
        print(f"bearer token: {cluster.token} (also in {folder / 'token'}; clients send Authorization: Bearer <token>)")
        print("Ctrl-C stops nginx and every replica.", flush=True)
        try:
            return _watch(cluster)
        except KeyboardInterrupt:
            print("stopping ...", flush=True)
            return 0
    return 0


def _watch(cluster: Cluster) -> int:
    """Keep the replicas running (one that ends is started again on its port) until nginx ends; its status."""
    assert cluster.nginx is not None
    while cluster.nginx.poll() is None:
        for replica in cluster.replicas:
            if not replica.running():
                assert replica.process is not None
                print(
                    f"cluster: replica {replica.index} ended (status {replica.process.returncode}; log "
                    f"{replica.log}); nginx sends its calls to the others while it starts again",
                    file=sys.stderr,
                    flush=True,
                )
                replica.start()
                try:
                    replica.wait()
                except RuntimeError as error:
                    print(f"cluster: {error}; trying again in 5 s", file=sys.stderr, flush=True)
                    time.sleep(5)
        time.sleep(0.5)
    print("cluster: nginx ended; stopping the replicas", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

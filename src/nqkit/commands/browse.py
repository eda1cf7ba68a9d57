"""``nqkit browse``: a local web browser for NQ examples, annotations and predictions."""

from __future__ import annotations

import argparse
import errno
import socket
import sys

from nqkit.commands.base import Command
from nqkit.settings import Param, int_in


def run(args: argparse.Namespace) -> int:
    from nqkit.errors import InputError, install_hint
    from nqkit.io import check_output

    if args.cache_dir:
        check_output(args.cache_dir, kind="dir", option="--cache-dir")
    try:
        import fastapi  # noqa: F401
        import jinja2  # noqa: F401
        import uvicorn
    except ImportError as e:
        raise InputError(None, f"the browser needs FastAPI, Jinja2 and uvicorn ({e})",
                         install_hint("web")) from None
    from nqkit.browser.app import create_app
    from nqkit.browser.model import load_dataset

    if not 0 <= args.port < 65536:
        raise InputError(None, f"--port {args.port} is not a valid port", "use 0-65535")
    # Take the port before the (possibly long) load, so a port in use fails at once, with
    # one line and before any "open http://..." is printed.
    sock = None if args.index_only else _listen(args.host, args.port)
    try:
        ds = load_dataset(args.gold, args.predictions, cache_dir=args.cache_dir)
        n = len(ds.rows)
        print(f"nqkit browse: {n:,} examples from {len(ds.store.files)} file(s)"
              + (f", predictions {ds.predictions_name}" if ds.has_predictions else ""),
              file=sys.stderr)
        if sock is None:
            return 0
        port = sock.getsockname()[1]  # the one the system chose for --port 0
        app = create_app(ds, host=args.host, port=port, allow_hosts=args.allow_host)
        host = f"[{args.host}]" if ":" in args.host else args.host
        # Listening before the URL is printed: a browser (or script) that opens it at once
        # waits in the backlog until uvicorn accepts, instead of being refused while
        # uvicorn is still starting.
        sock.listen(2048)
        print(f"nqkit browse: open http://{host}:{port}/  (Ctrl-C to stop)",
              file=sys.stderr)
        server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        server.run(sockets=[sock])
    finally:
        if sock is not None:
            sock.close()
    return 0


def _listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port`` (uvicorn listens on it), or a one-line error."""
    from nqkit.errors import InputError

    where = f"{'[' + host + ']' if ':' in host else host}:{port}"
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as e:
        raise InputError(None, f"--host {host!r} cannot be resolved ({e.strerror or e})",
                         "give an address of this machine such as 127.0.0.1") from None
    family, kind, proto, _, addr = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(addr)
    except OSError as e:
        sock.close()
        if e.errno == errno.EADDRINUSE:
            raise InputError(None, f"cannot listen on {where}: the port is already in use",
                             "stop the program using it or choose another with --port"
                             ) from None
        raise InputError(None, f"cannot listen on {where}: {e.strerror or e}",
                         "choose another --host or --port") from None
    return sock


ORDER = 120  # where `nqkit --help` lists it
COMMANDS = (Command(
    "browse", "browse NQ examples, annotations and predictions in a web browser",
    "Start a local web app over NQ files (original or simplified format): an index with "
    "search, filters and the official metrics, one page per example with its five "
    "annotations, candidate tree and prediction, and the full page with gold and predicted "
    "spans highlighted. The first run over a file builds an on-disk index (once, with a "
    "progress bar); later runs start in seconds.",
    run, params=(
        Param("gold", "--gold", "NQ files (original or simplified; .jsonl or .jsonl.gz; "
              "globs)", required=True, nargs="+", metavar="GLOB"),
        Param("predictions", "--predictions", "predictions JSON in the official format "
              "(optional)", metavar="FILE"),
        Param("host", "--host", "address to listen on (default 127.0.0.1: this machine "
              "only)", default="127.0.0.1"),
        Param("port", "--port", "port (default 8080; 0: any free port, the URL printed "
              "shows which)", default=8080, type=int_in(0, 65535)),
        Param("allow_host", "--allow-host", "also answer requests addressed to NAME (a host "
              "name or address this machine is reached under, e.g. with --host 0.0.0.0); "
              "repeatable. Requests for any other host get 400 (DNS-rebinding protection)",
              default=[], action="append", metavar="NAME"),
        Param("cache_dir", "--cache-dir", "where the example index lives (default "
              "$NQKIT_HOME/cache/browse, else ~/.cache/nqkit/browse); never inside the data "
              "directories", metavar="DIR"),
        Param("index_only", "--index-only", "build the on-disk index and exit without "
              "serving", default=False, action="store_true"),
    )),)

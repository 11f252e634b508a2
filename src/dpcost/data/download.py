"""HTTP downloads: each fetch is one :func:`pooch.retrieve` (requests, streaming, the sha256 check, a temporary file
renamed into place only once it verifies, tqdm's progress bar). Ours around it: the retries (pooch.retrieve makes one
attempt; Pooch.fetch's ``retry_if_failed`` waits a fixed 1, 2, … 10 s and retries a 404 and a sha256 mismatch too,
so neither the config's back-off nor what fails at once could be kept), resuming a cut transfer (pooch starts over),
progress as lines in a job's log, and the mirror loop (:func:`first_verified`, :func:`download_first`: try the next
source), which pooch has not.

A file appears at its destination only once it is complete and verified; a failed download leaves nothing there
(an interrupted one keeps ``<dest>.part`` so the next attempt can resume it).
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import socket
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path

import pooch
import requests

from .. import __version__
from ..errors import DataError, DownloadError

log = logging.getLogger(__name__)

USER_AGENT = f"dpcost-workflow/{__version__} (research workflow; one connection, backs off on 429/5xx)"
RETRY_STATUS = {429, 500, 502, 503, 504}
CHUNK = 1 << 16
# The one place of the download defaults; the config schema's defaults are tested against these.
DEFAULTS = {"max_tries": 5, "backoff": 2.0, "timeout": 60.0}
CONNECT_TIMEOUT = 10.0  # seconds to establish a connection
PROGRESS_EVERY = 30.0  # seconds between two progress lines in a log (where stderr is not a terminal)


def options(config: dict | None = None) -> dict:
    """Keyword arguments of :func:`download` from the config's ``download`` block (defaults for what it omits):
    ``timeout`` there is the read timeout, seconds without data before an attempt is abandoned."""
    cfg = {**DEFAULTS, **(config or {})}
    return {
        "max_tries": int(cfg["max_tries"]),
        "backoff": float(cfg["backoff"]),
        "timeout": (CONNECT_TIMEOUT, float(cfg["timeout"])),
    }


class _Retryable(Exception):
    pass


def sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def name_not_resolved(exc: BaseException) -> bool:
    """Whether a requests error was caused by a failed DNS lookup: a socket.gaierror somewhere in the chain
    (urllib3 2 raises its NameResolutionError from it, urllib3 1.26 its NewConnectionError while handling it).

    Such a failure is not retried: on a machine without network every lookup fails at once, also with the
    "temporary failure" code, and seconds of back-off do not bring the network back. A refused or reset
    connection, a timeout, HTTP 429 and 5xx are retried: a server restarting or overloaded can answer later.
    """
    seen, todo = set(), [exc]
    while todo:
        e = todo.pop()
        if e is None or id(e) in seen:
            continue
        seen.add(id(e))
        if isinstance(e, socket.gaierror):
            return True
        todo += [e.__cause__, e.__context__, getattr(e, "reason", None)]
        todo += [a for a in e.args if isinstance(a, BaseException)]
    return False


def _size(n: float) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n:.0f} B"


class _LoggedProgress:
    """Pooch's progress-bar interface (``total``, ``update``, ``reset``, ``close``) as log lines, for where stderr is
    not a terminal: a job logs to a file, where tqdm's carriage returns are unreadable. One line every ``every``
    seconds ("name: 12.3 MB of 45.6 MB (27%), 1.2 MB/s"); :func:`download` logs the last one, with what was received.
    """

    def __init__(self, name: str, every: float):
        self.name, self.every = name, every
        self.total = 0  # bytes pooch announces (the response's Content-Length; 0 when unknown)
        self.offset = 0  # bytes an earlier attempt kept when this one resumes
        self.n, self.done = 0, False
        self.start = self.last = time.monotonic()

    def update(self, n: int) -> None:
        self.n += n
        now = time.monotonic()
        if not self.done and now - self.last >= self.every:
            self.last = now
            got = self.offset + (min(self.n, self.total) if self.total else self.n)  # pooch counts whole chunks
            rate = f", {_size(self.n / (now - self.start))}/s" if now > self.start else ""
            if self.total:
                whole = self.offset + self.total
                log.info("%s: %s of %s (%d%%)%s", self.name, _size(got), _size(whole), 100 * got // whole, rate)
            else:
                log.info("%s: %s so far%s", self.name, _size(got), rate)

    def reset(self) -> None:
        self.done = True  # pooch fills its bar once the transfer is over; that line is download()'s

    def close(self) -> None:
        pass


def _progressbar(name: str, every: float) -> bool | _LoggedProgress:
    """tqdm's bar (pooch's own) on a terminal where no log file is kept; log lines elsewhere. A workflow job logs to
    a file (scripting.run) and, run from a terminal, shares that terminal with Snakemake and the jobs beside it,
    whose bars would overwrite each other's line: its progress is log lines, readable in the file and the terminal."""
    try:
        tty = sys.stderr is not None and sys.stderr.isatty()
    except ValueError:  # a closed stream
        tty = False
    return True if tty and not _logged_to_file() else _LoggedProgress(name, every)


def _logged_to_file() -> bool:
    logger = log
    while logger is not None:
        if any(isinstance(h, logging.FileHandler) and h.baseFilename != os.devnull for h in logger.handlers):
            return True
        logger = logger.parent if logger.propagate else None
    return False


class _Resuming:
    """A pooch downloader that continues ``part``: :class:`pooch.HTTPDownloader` (requests, streaming, the progress
    bar) asks with a Range header for the rest of what an earlier attempt left there (it forwards its keyword
    arguments to requests.get) and writes into this object, which appends when the answer resumes ``part`` (206 from
    its end) and starts over otherwise. A requests response hook shows the answer (called for every response,
    redirects included: the last is the one streamed). Once complete, ``part`` becomes pooch's temporary file."""

    def __init__(self, part: Path, timeout: tuple[float, float], progressbar):
        self.part, self.timeout, self.progressbar = part, timeout, progressbar
        self.have, self.response, self.fh, self.expected = 0, None, None, None

    def __call__(self, url: str, output_file: str, pup) -> None:
        self.have = self.part.stat().st_size if self.part.exists() else 0
        headers = {"User-Agent": USER_AGENT} | ({"Range": f"bytes={self.have}-"} if self.have else {})
        http = pooch.HTTPDownloader(
            progressbar=self.progressbar,
            chunk_size=CHUNK,
            timeout=self.timeout,
            headers=headers,
            hooks={"response": self._answered},
        )
        try:
            http(url, self, pup)
            self.write(b"")  # an empty body is a file too
        except requests.HTTPError as exc:
            if self.have and exc.response is not None and exc.response.status_code == 416:
                self.part.unlink()  # our partial file is not a prefix the server recognises: start over
                raise _Retryable("HTTP 416 on resume; restarting from byte 0") from None
            raise
        finally:
            if self.fh is not None:
                self.fh.close()
        size = self.part.stat().st_size
        if self.expected is not None and size < self.expected:  # urllib3 2 raises instead; 1.26 does not notice
            raise _Retryable(f"transfer ended at {size} of {self.expected} bytes")
        os.replace(self.part, output_file)  # pooch checks the hash there, then renames it (or deletes it)

    def _answered(self, response, **_kw) -> None:
        self.response = response

    def write(self, chunk: bytes) -> None:
        if self.fh is None:
            h = self.response.headers
            span = h.get("Content-Range", "")
            resumed = self.have and self.response.status_code == 206 and span.startswith(f"bytes {self.have}-")
            start = self.have if resumed else 0
            length = h.get("Content-Length", "")
            if length.isdigit() and h.get("Content-Encoding", "identity").lower() == "identity":
                self.expected = start + int(length)  # (a compressed body's length is not the file's)
            if isinstance(self.progressbar, _LoggedProgress):
                self.progressbar.offset = start
            self.fh = open(self.part, "ab" if resumed else "wb")
        self.fh.write(chunk)

    def flush(self) -> None:
        self.fh.flush()


@contextlib.contextmanager
def _pooch_quiet() -> Iterator[None]:
    """Pooch logs to a stderr handler of its own, outside the logging tree: the temporary folder it fetches into and,
    without a known hash, advice about pooch.retrieve's arguments. Our own lines say what was fetched, and where."""
    logger = pooch.get_logger()
    level = logger.level
    logger.setLevel(logging.WARNING)
    try:
        yield
    finally:
        logger.setLevel(level)


def reason(exc: requests.RequestException) -> str:
    """A requests error in one line: its type and the OS's reason ("ConnectionError: Connection refused")."""
    # urllib3 nests the cause several levels deep; the OS reason ("Connection refused") is what a user needs
    found = re.search(r"\[Errno -?\d+\] ([^'\")]+)", str(exc))
    return f"{type(exc).__name__}: {found.group(1) if found else ' '.join(str(exc).split())[:200]}"


def _attempt(url: str, dest: Path, part: Path, sha256: str | None, timeout, progress_every: float) -> None:
    """One :func:`pooch.retrieve` of ``url`` to ``dest``, through a fresh temporary folder beside it (so pooch never
    takes an earlier file there for the answer). Raises _Retryable for what may pass, :class:`DownloadError` for
    what cannot, :class:`DataError` for a sha256 mismatch (the file is then deleted)."""
    known = f"sha256:{sha256.lower()}" if sha256 else None
    downloader = _Resuming(part, timeout, _progressbar(dest.name, progress_every))
    with tempfile.TemporaryDirectory(dir=dest.parent, prefix=f".{dest.name}.") as tmp, _pooch_quiet():
        try:
            got = pooch.retrieve(url, known_hash=known, fname=dest.name, path=tmp, downloader=downloader)
        except requests.HTTPError as exc:
            r = exc.response
            status = r.status_code if r is not None else None
            if status in RETRY_STATUS:
                retry_after = r.headers.get("Retry-After", "")
                raise _Retryable(f"HTTP {status}" + (f" (Retry-After {retry_after})" if retry_after else "")) from None
            raise DownloadError(f"HTTP {status} {getattr(r, 'reason', '') or ''}".strip()) from None
        except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
            if name_not_resolved(exc):
                raise DownloadError(
                    f"{reason(exc)} (the host name does not resolve: no network or no DNS; not retried)"
                ) from None
            raise _Retryable(reason(exc)) from None
        except requests.RequestException as exc:  # an invalid URL, too many redirects, an undecodable body
            raise DownloadError(reason(exc)) from None
        except ValueError as exc:  # pooch's hash check; it has deleted the file
            if known is None or "hash" not in str(exc):
                raise
            got_hash = re.search(r"but got ([0-9a-fA-F]+)", str(exc))
            digest = got_hash.group(1).lower() if got_hash else "another digest"
            raise DataError(
                f"{url}: sha256 mismatch: expected {sha256}, got {digest} ({dest.name} discarded)"
            ) from None
        os.replace(got, dest)


def download(
    url: str,
    dest: Path | str,
    *,
    sha256: str | None = None,
    max_tries: int = DEFAULTS["max_tries"],
    backoff: float = DEFAULTS["backoff"],
    timeout: tuple[float, float] = (CONNECT_TIMEOUT, DEFAULTS["timeout"]),
    sleep: Callable[[float], None] = time.sleep,
    progress_every: float = PROGRESS_EVERY,
) -> dict:
    """Fetch ``url`` to ``dest`` with :func:`pooch.retrieve` and return a provenance record (url, path, bytes, sha256,
    retrieved).

    Retries connection errors, timeouts, truncated transfers, HTTP 429 and 5xx up to ``max_tries`` times, waiting
    ``backoff · 2^k`` seconds; resumes a partial transfer with a Range request where the server allows it.
    A 4xx other than 429, a host name that does not resolve, or a sha256 mismatch fails at once (retrying cannot
    fix them; see :func:`name_not_resolved`). Progress: a log line every ``progress_every`` seconds, or tqdm's bar
    on a terminal where no log file is kept (see :func:`_progressbar`). Raises :class:`DownloadError` with the URL
    and the reason (:class:`DataError` for a sha256 mismatch); ``dest`` is written only after verification.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    log.info("downloading %s to %s", url, dest)
    started = time.monotonic()
    last = "no attempt made"
    for k in range(max_tries):
        try:
            _attempt(url, dest, part, sha256, timeout, progress_every)
            break
        except _Retryable as exc:
            last = str(exc)
            log.warning("%s: attempt %d/%d failed: %s", url, k + 1, max_tries, last)
            if k + 1 < max_tries:
                sleep(backoff * 2**k)
        except DownloadError as exc:
            part.unlink(missing_ok=True)
            raise DownloadError(f"{url}: {exc}") from None
    else:
        raise DownloadError(f"{url}: gave up after {max_tries} attempts; last error: {last}")
    record = {
        "url": url,
        "path": str(dest),
        "bytes": dest.stat().st_size,
        "sha256": sha256_file(dest),
        "retrieved": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    log.info(
        "%s: received %s in %.1f s (sha256 %s)",
        dest.name,
        _size(record["bytes"]),
        time.monotonic() - started,
        record["sha256"],
    )
    return record


def first_verified(
    local: Sequence,
    remote: Sequence[dict],
    dest_dir: Path | str,
    *,
    use_local: Callable[[object], object],
    use_download: Callable[[dict, Path, dict], object],
    **kwargs,
) -> tuple[object | None, list[str]]:
    """The first copy that verifies, local ones first: ``use_local(src)`` for each of ``local``, then for each of
    ``remote`` (``{url, filename, sha256?}``) :func:`download` to ``dest_dir/<filename>`` and ``use_download(src,
    path, record)``; either may raise :class:`DataError` to reject a copy. Returns (the first result, the failures
    before it), or (None, every failure); a rejected download is deleted, never left where a valid one belongs."""
    failures = []
    for src in local:
        try:
            return use_local(src), failures
        except DataError as exc:
            failures.append(str(exc))
    for src in remote:
        dest = Path(dest_dir) / src["filename"]
        try:
            return use_download(src, dest, download(src["url"], dest, sha256=src.get("sha256"), **kwargs)), failures
        except (DownloadError, DataError) as exc:
            failures.append(str(exc))
            dest.unlink(missing_ok=True)
    return None, failures


def download_first(
    sources: Sequence[dict],
    dest_dir: Path | str,
    *,
    manual_dir: Path | str | None = None,
    verify: Callable[[Path, dict], None] | None = None,
    **kwargs,
) -> dict:
    """Try each source ``{url, sha256, filename, ...}`` in order; return the record of the first that verifies.

    A file a user placed by hand at ``manual_dir/<filename>`` is used first when its sha256 matches. ``verify``
    (path, source) may raise :class:`DataError` to reject a download that passed its checksum (e.g. a parse check);
    the next source is then tried. When every source fails, one :class:`DownloadError` names each failure and
    says where a hand-downloaded copy would be picked up.
    """
    dest_dir = Path(dest_dir)
    failures = []
    for src in sources:
        name = src["filename"]
        manual = Path(manual_dir) / name if manual_dir is not None else None
        try:
            if manual is not None and manual.exists():
                digest = sha256_file(manual)
                if src.get("sha256") and src["sha256"].lower() != digest:
                    raise DataError(f"{manual}: sha256 {digest} does not match the expected {src['sha256']}")
                log.info("using the hand-placed copy %s", manual)
                rec = {
                    "url": src["url"],
                    "path": str(manual),
                    "bytes": manual.stat().st_size,
                    "sha256": digest,
                    "retrieved": "placed by hand",
                }
            else:
                rec = download(src["url"], dest_dir / name, sha256=src.get("sha256"), **kwargs)
            if verify is not None:
                verify(Path(rec["path"]), src)
            return {**src, **rec}
        except (DownloadError, DataError) as exc:
            failures.append(str(exc))
            if manual is None or not manual.exists():
                (dest_dir / name).unlink(missing_ok=True)  # never leave a rejected file where a valid one belongs
    where = f" or place a verified copy by hand in {manual_dir}/ ({', '.join(s['filename'] for s in sources)})"
    raise DownloadError(
        "no source delivered a verified file: " + "; ".join(failures) + ". Check the network and the URLs in the "
        "config" + (where if manual_dir is not None else "")
    )

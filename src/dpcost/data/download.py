"""Robust HTTP download: stream to a temporary file, retry with backoff, resume with Range, verify, rename.

A file appears at its destination only once it is complete and verified; a failed download leaves nothing there
(an interrupted one keeps ``<dest>.part`` so the next attempt can resume it).
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import socket
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path

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


def _name_not_resolved(exc: BaseException) -> bool:
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


def _attempt(session: requests.Session, url: str, part: Path, timeout: tuple[float, float]) -> None:
    """One GET, appending to ``part`` when the server honours Range. Raises _Retryable for transient failures."""
    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": USER_AGENT}
    if have:
        headers["Range"] = f"bytes={have}-"
    try:
        with session.get(url, stream=True, timeout=timeout, headers=headers, allow_redirects=True) as r:
            if r.status_code in RETRY_STATUS:
                retry_after = r.headers.get("Retry-After", "")
                raise _Retryable(f"HTTP {r.status_code}" + (f" (Retry-After {retry_after})" if retry_after else ""))
            if r.status_code == 416 and have:
                part.unlink()  # our partial file is not a prefix the server recognises: start over
                raise _Retryable("HTTP 416 on resume; restarting from byte 0")
            if r.status_code not in (200, 206):
                raise DownloadError(f"HTTP {r.status_code} {r.reason or ''}".strip())
            resumed = r.status_code == 206 and have and r.headers.get("Content-Range", "").startswith(f"bytes {have}-")
            expected = r.headers.get("Content-Length")
            expected_total = (have if resumed else 0) + int(expected) if expected and expected.isdigit() else None
            with open(part, "ab" if resumed else "wb") as fh:
                for chunk in r.iter_content(CHUNK):
                    fh.write(chunk)
    except (requests.ConnectionError, requests.Timeout, requests.exceptions.ChunkedEncodingError) as exc:
        # urllib3 nests the cause several levels deep; the OS reason ("Connection refused") is what a user needs
        reason = re.search(r"\[Errno -?\d+\] ([^'\")]+)", str(exc))
        why = f"{type(exc).__name__}: {reason.group(1) if reason else str(exc)[:200]}"
        if _name_not_resolved(exc):
            raise DownloadError(f"{why} (the host name does not resolve: no network or no DNS; not retried)") from None
        raise _Retryable(why) from None
    if expected_total is not None and part.stat().st_size < expected_total:
        raise _Retryable(f"transfer ended at {part.stat().st_size} of {expected_total} bytes")


def download(
    url: str,
    dest: Path | str,
    *,
    sha256: str | None = None,
    max_tries: int = DEFAULTS["max_tries"],
    backoff: float = DEFAULTS["backoff"],
    timeout: tuple[float, float] = (CONNECT_TIMEOUT, DEFAULTS["timeout"]),
    session: requests.Session | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> dict:
    """Fetch ``url`` to ``dest`` and return a provenance record (url, path, bytes, sha256, retrieved).

    Retries connection errors, timeouts, truncated transfers, HTTP 429 and 5xx up to ``max_tries`` times, waiting
    ``backoff · 2^k`` seconds; resumes a partial transfer with a Range request where the server allows it.
    A 4xx other than 429, a host name that does not resolve, or a sha256 mismatch fails at once (retrying cannot
    fix them; see :func:`_name_not_resolved`).
    Raises :class:`DownloadError` with the URL and the reason; ``dest`` is written only after verification.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    part = dest.with_name(dest.name + ".part")
    session = session or requests.Session()
    last = "no attempt made"
    for k in range(max_tries):
        try:
            _attempt(session, url, part, timeout)
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
    digest = sha256_file(part)
    if sha256 is not None and digest != sha256.lower():
        part.unlink()
        raise DataError(f"{url}: sha256 mismatch: expected {sha256}, got {digest} ({dest.name} discarded)")
    os.replace(part, dest)
    return {
        "url": url,
        "path": str(dest),
        "bytes": dest.stat().st_size,
        "sha256": digest,
        "retrieved": datetime.now(UTC).isoformat(timespec="seconds"),
    }


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

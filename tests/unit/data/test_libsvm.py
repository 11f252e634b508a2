"""The LIBSVM parser, preparation and download: hand-written svmlight text, bz2 fixtures made here, and the real
download code against a real HTTP server on 127.0.0.1 (no internet is used)."""

import bz2
import gzip
import hashlib
import json
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from dpcost.data import libsvm
from dpcost.data.libsvm import (
    DATASETS,
    SOURCES,
    binary_labels,
    fetch,
    load_prepared,
    prepare,
    read_svmlight,
    split_rows,
)
from dpcost.errors import ConfigError, DataError, DownloadError

FAST = dict(max_tries=3, backoff=0.0, timeout=(30.0, 30.0))  # no wait here is a time-out: room for a busy machine

SMALL = b"""# a header comment
1.5 3:0.5 1:2 10:-1e-3   # unsorted, with a trailing comment

-2
+1 2:7 5:0
  0.25\t4:3.25e2\t6:-0.5\r
"""
SMALL_DENSE = np.zeros((4, 10))
SMALL_DENSE[0, [0, 2, 9]] = [2, 0.5, -1e-3]  # file index j is column j - 1
SMALL_DENSE[2, 1] = 7  # 5:0 is an explicit zero: dropped
SMALL_DENSE[3, [3, 5]] = [325.0, -0.5]


def write(path, text: bytes, compress=None):
    path.write_bytes({None: lambda b: b, "bz2": bz2.compress, "gzip": gzip.compress}[compress](text))
    return path


def same(A, B):
    return A.shape == B.shape and (A != B).nnz == 0


def svmlight_text(X: np.ndarray, y: np.ndarray, rng=None) -> bytes:
    """svmlight text of a dense matrix (zeros left out), indices 1-based; shuffled within rows when rng is given."""
    lines = []
    for row, label in zip(X, y, strict=True):
        nz = np.flatnonzero(row)
        if rng is not None:
            nz = rng.permutation(nz)
        lines.append(" ".join([repr(float(label))] + [f"{j + 1}:{float(row[j])!r}" for j in nz]))
    return ("\n".join(lines) + "\n").encode()


def random_data(seed, n, d, density=0.2, binary=False):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * (rng.random((n, d)) < density)
    X[:, -1] = 1.0  # every row reaches the last feature: the parsed width is d
    y = rng.choice([-1.0, 1.0], n) if binary else rng.normal(size=n)
    return X, y


# ---------------------------------------------------------------- the parser


def test_hand_written_file(tmp_path):
    X, y = read_svmlight(write(tmp_path / "s.txt", SMALL))
    assert sp.isspmatrix_csr(X) and X.dtype == np.float64 and X.shape == (4, 10)
    np.testing.assert_array_equal(X.toarray(), SMALL_DENSE)
    np.testing.assert_array_equal(y, [1.5, -2.0, 1.0, 0.25])
    assert X.has_sorted_indices and X.nnz == 6
    X12, _ = read_svmlight(tmp_path / "s.txt", n_features=12)
    assert X12.shape == (4, 12) and same(X12[:, :10], X)


def test_values_are_parsed_exactly_and_unsorted_rows_are_sorted(tmp_path):
    X, y = random_data(0, 60, 30)
    X[::3] *= 1e-300  # subnormal-adjacent and long mantissas survive the round trip bit for bit
    text = svmlight_text(X, y, rng=np.random.default_rng(1))
    A, b = read_svmlight(write(tmp_path / "r.txt", text), n_features=30)
    np.testing.assert_array_equal(A.toarray(), X)
    np.testing.assert_array_equal(b, y)


@pytest.mark.parametrize("compress", ["bz2", "gzip"])
def test_compressed_and_plain_give_identical_matrices(tmp_path, compress):
    X, y = random_data(2, 200, 40)
    text = svmlight_text(X, y)
    plain = write(tmp_path / "looks.bz2", text)  # the name says bz2, the bytes say plain: the bytes win
    packed = write(tmp_path / "data.txt", text, compress)
    (A, a), (B, b) = read_svmlight(plain), read_svmlight(packed)
    assert same(A, B) and np.array_equal(a, b)
    for name in ("data", "indices", "indptr"):
        np.testing.assert_array_equal(getattr(A, name), getattr(B, name))


def test_chunk_boundaries_change_nothing(tmp_path, monkeypatch):
    X, y = random_data(3, 300, 25)
    path = write(tmp_path / "c.bz2", svmlight_text(X, y, rng=np.random.default_rng(4)), "bz2")
    A, a = read_svmlight(path)
    monkeypatch.setattr(libsvm, "CHUNK_BYTES", 100)  # a few rows a chunk
    B, b = read_svmlight(path)
    assert same(A, B) and np.array_equal(a, b) and np.array_equal(A.toarray(), X)


def test_pyarrow_rejects_but_python_parses(tmp_path):
    # form feed / vertical tab separate tokens for Python's split() but not for the CSV reader: the slow path reads it
    X, y = read_svmlight(write(tmp_path / "w.txt", b"1 1:2\x0c3:4\x0b5:6\n"))
    np.testing.assert_array_equal(X.toarray(), [[2, 0, 4, 0, 6]])


def test_max_rows_stops_before_a_bad_line(tmp_path):
    path = write(tmp_path / "m.txt", b"1 1:1\n2 2:2\nthis is not svmlight\n")
    X, y = read_svmlight(path, max_rows=2)
    assert X.shape == (2, 2) and list(y) == [1, 2]
    with pytest.raises(DataError, match="line 3"):
        read_svmlight(path)


def test_rows_columns_and_expected_count(tmp_path):
    X, y = random_data(5, 50, 20)
    path = write(tmp_path / "rc.bz2", svmlight_text(X, y), "bz2")
    rows, cols = np.array([3, 7, 8, 41]), np.array([0, 5, 19])
    A, a = read_svmlight(path, n_features=20, rows=rows, columns=cols, expect_rows=50)
    np.testing.assert_array_equal(A.toarray(), X[np.ix_(rows, cols)])
    np.testing.assert_array_equal(a, y[rows])
    with pytest.raises(DataError, match="50 data rows, expected 51"):
        read_svmlight(path, expect_rows=51)
    with pytest.raises(DataError, match="only 50 data rows"):
        read_svmlight(path, rows=[2, 60])
    for bad_cols in ([-1, 3], [3, 2], [5, 20]):
        with pytest.raises(ValueError, match="columns must be sorted distinct"):
            read_svmlight(path, n_features=20, columns=bad_cols)


BAD = [
    (b"1 3:1 3:2\n", "feature index 3 appears twice"),
    (b"1 4:1 2:1 4:5\n", "feature index 4 appears twice"),
    (b"1 0:1\n", "index 0 out of range \\(LIBSVM indices start at 1\\)"),
    (b"1 99:1\n", "index 99 out of range \\(allowed 1..50\\)"),
    (b"1 -3:1\n", "index -3 out of range"),
    (b"1 123456789012345678901:1\n", "is not an integer in 1..50"),
    (b"1 3:nan\n", "value nan of feature 3 is not finite"),
    (b"1 3:1e999\n", "value inf of feature 3 is not finite"),
    (b"inf 1:1\n", "label 'inf' is not finite"),
    (b"yes 1:1\n", "label 'yes' is not a number"),
    (b"1,2 1:1\n", "label '1,2' is not a number"),
    (b"<!DOCTYPE html>\n", "HTML"),
    (b"1 1:2:3\n", "malformed token '1:2:3'"),
    (b"1 3:\n", "malformed token '3:'"),
    (b"1 :3\n", "malformed token ':3'"),
    (b"1 7\n", "malformed token '7'"),
    (b"1 1:2,3:4\n", "malformed token"),
    (b"1 a:3\n", "feature index 'a' is not an integer"),
    (b"1 3:abc\n", "value 'abc' of feature 3 is not a number"),
    (b"1 3:1_0\n", "value '1_0' of feature 3 is not a number"),
    (b"1 qid:4 1:1\n", "qid"),
    (b"1 1:1 qid:4\n", "qid"),
]


@pytest.mark.parametrize("bad, message", BAD, ids=[b.decode().strip() for b, _ in BAD])
@pytest.mark.parametrize("compress", [None, "bz2"])
def test_malformed_input_names_file_and_line(tmp_path, bad, message, compress):
    path = write(tmp_path / "bad", b"# comment\n2 1:1\n\n" + bad + b"3 2:1\n", compress)
    with pytest.raises(DataError, match=message) as info:
        read_svmlight(path, n_features=50)
    msg = str(info.value)
    assert msg.startswith(f"{path}: line 4: ") and "\n" not in msg


def test_bad_line_in_a_later_chunk_is_located(tmp_path, monkeypatch):
    monkeypatch.setattr(libsvm, "CHUNK_BYTES", 50)
    lines = [f"{k} {k % 7 + 1}:1 9:2".encode() for k in range(200)]
    lines[150] = b"1 9:2 4:1 9:3"
    with pytest.raises(DataError, match="line 151: feature index 9 appears twice"):
        read_svmlight(write(tmp_path / "late.txt", b"\n".join(lines)))


@pytest.mark.parametrize("text", [b"", b"# nothing but comments\n\n   \n"])
def test_no_rows_is_an_error(tmp_path, text):
    with pytest.raises(DataError, match="no data rows"):
        read_svmlight(write(tmp_path / "empty.txt", text))


def test_truncated_bz2_is_an_error(tmp_path):
    X, y = random_data(6, 400, 30)
    blob = bz2.compress(svmlight_text(X, y))
    path = tmp_path / "cut.bz2"
    path.write_bytes(blob[: len(blob) // 2])
    with pytest.raises(DataError, match="damaged bz2 stream") as info:
        read_svmlight(path)
    assert "\n" not in str(info.value)


def test_huge_width_is_never_densified(tmp_path):
    d = 10_000_000  # dense float64 would be 10 x 10^7 x 8 B = 800 MB
    text = b"".join(f"{k} {k + 1}:1.5 {d - k}:-2\n".encode() for k in range(10))
    path = write(tmp_path / "wide.bz2", text, "bz2")
    tracemalloc.start()
    try:
        X, y = read_svmlight(path, n_features=d)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert X.shape == (10, d) and X.nnz == 20 and X[9, d - 10] == -2
    assert peak < 8 * 2**20, f"peak {peak / 2**20:.1f} MiB"  # the bz2 decompressor's own buffers dominate


# ---------------------------------------------------------------- preparation

SIZES = {
    "name": "toy",
    "task": "binary",
    "n_features_total": 50,
    "n_train": 40,
    "n_test_total": 30,
    "n_features": 20,
    "n_private": 20,
    "n_public": 19,
    "n_test": 10,
}


@pytest.fixture
def files(tmp_path):
    X_tr, y_tr = random_data(10, 40, 50, binary=True)
    X_te, y_te = random_data(11, 30, 50, binary=True)
    train = write(tmp_path / "train.bz2", svmlight_text(X_tr, y_tr), "bz2")
    test = write(tmp_path / "test.bz2", svmlight_text(X_te, y_te), "bz2")
    return train, test, (X_tr, y_tr, X_te, y_te)


def test_prepare_writes_what_load_prepared_reads(tmp_path, files):
    train, test, (X_tr, y_tr, X_te, y_te) = files
    meta = prepare(train, test, tmp_path / "p.npz", rng=np.random.default_rng(7), sizes=SIZES, seed=7)
    p = load_prepared(tmp_path / "p.npz")
    fi, rows = p.feature_index, p.rows
    assert fi.size == 20 and np.all(np.diff(fi) > 0) and 0 <= fi[0] and fi[-1] < 50
    assert len(rows["private"]) == 20 and len(rows["public"]) == 19 and len(rows["test"]) == 10
    assert not set(rows["private"]) & set(rows["public"])  # disjoint
    np.testing.assert_array_equal(p.X_private.toarray(), X_tr[np.ix_(rows["private"], fi)])
    np.testing.assert_array_equal(p.X_public.toarray(), X_tr[np.ix_(rows["public"], fi)])
    np.testing.assert_array_equal(p.X_test.toarray(), X_te[np.ix_(rows["test"], fi)])
    np.testing.assert_array_equal(p.y_private, (y_tr[rows["private"]] + 1) / 2)  # ±1 -> 0/1
    np.testing.assert_array_equal(p.y_test, (y_te[rows["test"]] + 1) / 2)
    assert set(np.unique(p.y_public)) <= {0.0, 1.0}
    assert p.meta == meta == json.loads(json.dumps(meta))
    assert meta["n"] == {"private": 20, "public": 19, "test": 10} and meta["seed"] == 7
    assert meta["nnz"]["private"] == p.X_private.nnz and 0 < meta["density"]["private"] < 1
    assert meta["private"] is False and "public seed" in meta["not_private"]
    assert "disjoint" in meta["public_part"] and "no centring" in meta["preprocessing"]
    rng = np.random.default_rng()
    rng.bit_generator.state = meta["rng_state"]  # the record reproduces the draws
    np.testing.assert_array_equal(np.sort(rng.choice(50, 20, replace=False)), fi)


def test_prepare_is_deterministic_and_blind_to_the_data(tmp_path, files):
    train, test, _ = files
    other_train = write(tmp_path / "o.txt", svmlight_text(*random_data(99, 40, 50, binary=True)))
    run = {}
    for key, tr, seed in [("a", train, 1), ("b", train, 1), ("other_data", other_train, 1), ("other_seed", train, 2)]:
        prepare(tr, test, tmp_path / f"{key}.npz", rng=np.random.default_rng(seed), sizes=SIZES)
        run[key] = load_prepared(tmp_path / f"{key}.npz")
    a, b = run["a"], run["b"]
    assert same(a.X_private, b.X_private) and np.array_equal(a.y_test, b.y_test) and a.meta == b.meta
    for key in ("other_data", "a"):  # the draws depend on the seed and the counts only
        np.testing.assert_array_equal(run[key].feature_index, a.feature_index)
        for part in libsvm.PARTS:
            np.testing.assert_array_equal(run[key].rows[part], a.rows[part])
    assert not np.array_equal(run["other_seed"].feature_index, a.feature_index)


def test_regression_keeps_the_target_and_all_test_rows(tmp_path):
    X, y = random_data(12, 30, 15)
    train = write(tmp_path / "tr", svmlight_text(X, y))
    sizes = SIZES | dict(task="regression", n_features_total=15, n_train=30, n_test_total=30, n_features=None)
    sizes |= dict(n_public=None, n_test=None)  # the public part is the rest; every test row
    meta = prepare(train, train, tmp_path / "r.npz", rng=np.random.default_rng(0), sizes=sizes)
    p = load_prepared(tmp_path / "r.npz")
    np.testing.assert_array_equal(p.feature_index, np.arange(15))
    np.testing.assert_array_equal(p.y_private, y[p.rows["private"]])
    np.testing.assert_array_equal(p.rows["test"], np.arange(30))
    assert same(p.X_test, sp.csr_matrix(X)) and meta["n"] == {"private": 20, "public": 10, "test": 30}


def test_prepare_checks_published_counts_and_labels(tmp_path, files):
    train, test, _ = files
    with pytest.raises(DataError, match="40 data rows, expected 41"):
        prepare(train, test, tmp_path / "x.npz", rng=np.random.default_rng(0), sizes=SIZES | dict(n_train=41))
    three = write(tmp_path / "three.txt", b"-1 1:1\n0 1:1\n1 2:1\n" * 14)
    with pytest.raises(DataError, match="labels ±1 or 0/1"):
        prepare(three, test, tmp_path / "x.npz", rng=np.random.default_rng(0), sizes=SIZES | dict(n_train=42))
    with pytest.raises(ConfigError, match="cannot split 40 rows"):
        prepare(train, test, tmp_path / "x.npz", rng=np.random.default_rng(0), sizes=SIZES | dict(n_public=21))
    assert not (tmp_path / "x.npz").exists()


@pytest.mark.parametrize(
    "y, out",
    [([-1, 1, 1], [0, 1, 1]), ([0, 1, 0], [0, 1, 0]), ([1, 1], [1, 1]), ([-1, 0, 1], None), ([1, 2], None)],
)
def test_binary_labels(y, out):
    if out is None:
        with pytest.raises(DataError, match="labels ±1 or 0/1"):
            binary_labels(np.array(y, dtype=float))
    else:
        np.testing.assert_array_equal(binary_labels(np.array(y, dtype=float)), out)


def test_split_rows_is_disjoint_and_reproducible():
    a, b = split_rows(16087, 8044, 8043, np.random.default_rng(3))
    assert len(a) == 8044 and len(b) == 8043 and np.intersect1d(a, b).size == 0
    assert np.array_equal(np.union1d(a, b), np.arange(16087))
    a2, b2 = split_rows(16087, 8044, 8043, np.random.default_rng(3))
    assert np.array_equal(a, a2) and np.array_equal(b, b2)
    with pytest.raises(ConfigError):
        split_rows(10, 6, 5, np.random.default_rng(0))


def test_write_is_atomic(tmp_path, files, monkeypatch):
    train, test, _ = files
    out = tmp_path / "p.npz"
    prepare(train, test, out, rng=np.random.default_rng(1), sizes=SIZES)
    before = out.read_bytes()

    def crash(fh, **arrays):
        fh.write(b"PK\x03\x04 half an archive")
        raise OSError("disk full")

    monkeypatch.setattr(libsvm.np, "savez_compressed", crash)
    with pytest.raises(OSError, match="disk full"):
        prepare(train, test, out, rng=np.random.default_rng(2), sizes=SIZES)
    assert out.read_bytes() == before  # the earlier complete file is untouched
    assert sorted(p.name for p in tmp_path.iterdir()) == ["p.npz", "test.bz2", "train.bz2"]  # no temp file left
    (tmp_path / "cut.npz").write_bytes(before[: len(before) // 2])
    with pytest.raises(DataError, match="not a complete prepared LIBSVM file"):
        load_prepared(tmp_path / "cut.npz")


# ---------------------------------------------------------------- download


def test_default_sources_and_published_shapes():
    base = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/"
    assert SOURCES["e2006"]["train"]["url"] == base + "regression/E2006.train.bz2"
    assert SOURCES["e2006"]["test"]["filename"] == "E2006.test.bz2"
    assert SOURCES["rcv1"]["train"]["url"] == base + "binary/rcv1_train.binary.bz2"
    assert SOURCES["rcv1"]["test"]["filename"] == "rcv1_test.binary.bz2"
    e, r = DATASETS["e2006"], DATASETS["rcv1"]
    assert (e["n_train"], e["n_test_total"], e["n_features_total"]) == (16087, 3308, 150360)
    assert (r["n_train"], r["n_test_total"], r["n_features_total"]) == (20242, 677399, 47236)
    assert e["n_private"] + e["n_public"] == e["n_train"] and r["n_private"] + r["n_public"] == r["n_train"]


@pytest.fixture
def blobs():
    X, y = random_data(20, 2000, 200, binary=True)  # ~ 400 kB of bz2 each: the cut transfer keeps some 64 kB chunks
    return {split: bz2.compress(svmlight_text(X[k::2], y[k::2])) for k, split in enumerate(("train", "test"))}


def sources_of(server, blobs, **extra):
    return {s: {"url": f"{server.base}/{s}.bz2", "filename": f"{s}.bz2", **extra.get(s, {})} for s in blobs}


def test_fetch_records_what_it_received(server, tmp_path, blobs):
    for split, blob in blobs.items():
        server.add(f"/{split}.bz2", blob)
    rec = fetch("rcv1", tmp_path, sources=sources_of(server, blobs), **FAST)
    for split, blob in blobs.items():
        f = rec["files"][split]
        assert f["sha256"] == hashlib.sha256(blob).hexdigest() and not f["sha256_pinned"]  # the digest to pin
        assert (tmp_path / f"{split}.bz2").read_bytes() == blob and f["bytes"] == len(blob)
    X, _ = read_svmlight(rec["files"]["train"]["path"])
    assert X.shape[0] == 1000


def test_interrupted_download_resumes(server, tmp_path, blobs):
    digest = {s: hashlib.sha256(b).hexdigest() for s, b in blobs.items()}
    route = server.add("/train.bz2", blobs["train"], actions=["truncate", "ok"])
    server.add("/test.bz2", blobs["test"])
    pins = {s: {"sha256": digest[s]} for s in blobs}
    rec = fetch("rcv1", tmp_path, sources=sources_of(server, blobs, **pins), **FAST)
    assert route.requests[0] is None and len(route.requests) == 2
    assert 0 < int(route.requests[1].removeprefix("bytes=").removesuffix("-")) <= len(blobs["train"]) // 2  # resumed
    assert rec["files"]["train"]["sha256_pinned"] and rec["files"]["train"]["sha256"] == digest["train"]
    assert (tmp_path / "train.bz2").read_bytes() == blobs["train"]


def test_wrong_sha256_is_refused(server, tmp_path, blobs):
    for split, blob in blobs.items():
        server.add(f"/{split}.bz2", blob)
    srcs = sources_of(server, blobs, train={"sha256": "0" * 64})
    with pytest.raises(DownloadError, match="sha256 mismatch: expected 0{64}"):
        fetch("rcv1", tmp_path, sources=srcs, **FAST)
    assert not (tmp_path / "train.bz2").exists() and not (tmp_path / "train.bz2.part").exists()


def test_html_page_is_refused_and_removed(server, tmp_path, blobs):
    server.add("/train.bz2", blobs["train"], actions=["html"])
    with pytest.raises(DownloadError, match="line 1: label '<html><body>Service' is not a number.*HTML") as info:
        fetch("e2006", tmp_path, sources=sources_of(server, {"train": 0}), **FAST)
    assert "\n" not in str(info.value) and not (tmp_path / "train.bz2").exists()
    server.add("/good.bz2", blobs["train"])  # a mirror listed after the failing source is used
    mirrors = {
        "train": [sources_of(server, {"train": 0})["train"], {"url": server.base + "/good.bz2", "filename": "g"}]
    }
    rec = fetch("e2006", tmp_path, sources=mirrors, **FAST)
    assert rec["files"]["train"]["url"].endswith("/good.bz2") and not (tmp_path / "train.bz2").exists()


def test_unknown_dataset_without_sources():
    with pytest.raises(ConfigError, match="unknown LIBSVM data set 'mnist'"):
        fetch("mnist", "/nonexistent")

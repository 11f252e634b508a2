"""The housing parsers on the real data (from ../shared), rebuilt in both published archive layouts."""

import io
import zipfile

import numpy as np
import pandas as pd
import pytest

from dpcost.data import housing
from dpcost.errors import DataError

from support import CONTENT_SHA256, statlib_zip_bytes


@pytest.fixture(params=["statlib", "figshare"])
def archive(request, housing_archives, tmp_path):
    blob, _ = housing_archives[request.param]
    path = tmp_path / ("houses.zip" if request.param == "statlib" else "cal_housing.tgz")
    path.write_bytes(blob)
    return path, request.param


def test_both_layouts_give_the_canonical_table(archive):
    path, fmt = archive
    df = housing.parse_archive(path, fmt)
    assert df.shape == (20640, 9) and list(df.columns) == housing.COLUMNS
    assert housing.canonical_sha256(df) == CONTENT_SHA256
    # check values: docs/proofs.md, "The housing data: column orders and checksums"
    assert df.value.sum() == 4_269_504_061 and df.households.sum() == 10_310_499
    assert df.total_rooms.sum() == 54_402_150 and df.population.sum() == 29_421_840
    assert df.iloc[0].tolist() == pytest.approx([452600, 8.3252, 41, 880, 129, 322, 126, 37.88, -122.23])
    assert (df.value == 500001).sum() == 965 and (df.age == 52).sum() == 1273


def test_content_mismatch_is_refused(archive):
    path, fmt = archive
    df = housing.parse_archive(path, fmt)
    df.loc[17, "households"] += 1
    with pytest.raises(DataError, match="does not match"):
        housing.verify_content(df, CONTENT_SHA256)


@pytest.mark.parametrize("damage", ["truncate", "empty", "html"])
def test_damaged_archives_fail_clearly(archive, damage):
    path, fmt = archive
    blob = path.read_bytes()
    path.write_bytes(
        {
            "truncate": blob[: len(blob) // 2],
            "empty": b"",
            "html": b"<html><body>503 Service Unavailable</body></html>",
        }[damage]
    )
    with pytest.raises(DataError, match="not a readable|expected 20640 rows"):
        housing.parse_archive(path, fmt)


def test_wrong_row_count_is_refused(tmp_path, housing_df):
    path = tmp_path / "houses.zip"
    path.write_bytes(statlib_zip_bytes(housing_df.iloc[:-1]))
    with pytest.raises(DataError, match="expected 20640 rows of 9 numbers, found 20639"):
        housing.parse_archive(path, "statlib")


def test_missing_member_is_named(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("README", "nothing here")
    path = tmp_path / "houses.zip"
    path.write_bytes(buf.getvalue())
    with pytest.raises(DataError, match="no member cadata.txt"):
        housing.parse_archive(path, "statlib")


def test_preprocessing_standardizes_and_says_it_is_not_private(housing_df):
    table, meta = housing.preprocess(housing_df, y_scale=1e5, center_y=True)
    X = table[housing.COVARIATES].to_numpy()
    assert np.allclose(X.mean(axis=0), 0, atol=1e-12) and np.allclose(X.std(axis=0), 1)
    assert abs(table.y.mean()) < 1e-12
    assert table.y.max() == pytest.approx(500001 / 1e5 - housing_df.value.mean() / 1e5)
    assert meta["private"] is False and "NOT PRIVATE" in meta["privacy_note"]
    assert meta["intercept"] is False and meta["y_scale"] == 1e5
    _, meta2 = housing.preprocess(housing_df, y_scale=1e5, center_y=False)
    assert meta2["y_center"] == 0.0


def test_file_name_follows_the_format():
    src = {"url": "https://example.org/x", "sha256": "0" * 64}
    assert housing.with_filename({**src, "format": "statlib"}) == {**src, "format": "statlib", "filename": "houses.zip"}
    assert housing.with_filename({**src, "format": "figshare"})["filename"] == "cal_housing.tgz"
    given = {**src, "format": "statlib", "filename": "mirror.zip"}
    out = housing.with_filename(given)
    assert out == given and out is not given  # a given name is kept, on a copy
    with pytest.raises(DataError, match="unknown housing archive format 'csv'"):
        housing.with_filename({**src, "format": "csv"})
    with pytest.raises(DataError, match="unknown housing archive format None"):
        housing.with_filename(src)


def test_prepare_records_source_content_and_the_ols_truth(tmp_path, housing_df):
    from support import real_housing

    path = tmp_path / "houses.zip"
    path.write_bytes(statlib_zip_bytes(real_housing()))
    manifest = {
        "path": str(path),
        "format": "statlib",
        "url": "https://example.org/houses.zip",
        "sha256": "a" * 64,
        "bytes": path.stat().st_size,
        "retrieved": "2026-01-01T00:00:00+00:00",
    }
    table, meta = housing.prepare(manifest, content_sha256=CONTENT_SHA256, y_scale=1e5, center_y=True)
    expected, _ = housing.preprocess(housing_df, y_scale=1e5, center_y=True)
    pd.testing.assert_frame_equal(table, expected)
    X, y = table[housing.COVARIATES].to_numpy(), table["y"].to_numpy()
    beta = np.linalg.lstsq(X, y, rcond=None)[0]
    assert list(meta["truth"]) == housing.COVARIATES
    assert np.array_equal(np.array(list(meta["truth"].values())), beta)
    assert meta["source"] == {k: manifest[k] for k in ("url", "format", "sha256", "bytes", "retrieved")}
    assert meta["content_sha256"] == CONTENT_SHA256
    assert meta["private"] is False and "NOT PRIVATE" in meta["privacy_note"]
    with pytest.raises(DataError, match="does not match"):
        housing.prepare(manifest, content_sha256="0" * 64, y_scale=1e5, center_y=True)

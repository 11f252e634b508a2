"""The housing parsers on the real data (from ../shared), rebuilt in both published archive layouts."""

import io
import zipfile

import numpy as np
import pytest

from dpcost import housing
from dpcost.errors import DataError

from support import CONTENT_SHA256


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
    # check values from data-sources.md
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
    from support import statlib_zip_bytes

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

"""The housing readers on the real data (from ../shared), rebuilt in both published archive layouts, and housing's
preparation as a built-in table."""

import io
import zipfile

import numpy as np
import pytest

from dpcost.data import housing
from dpcost.errors import DataError

from support import CONTENT_SHA256, housing_design, statlib_zip_bytes


@pytest.fixture(params=["statlib", "figshare"])
def archive(request, housing_archives, tmp_path):
    blob, _ = housing_archives[request.param]
    path = tmp_path / ("houses.zip" if request.param == "statlib" else "cal_housing.tgz")
    path.write_bytes(blob)
    return path, request.param


def test_both_layouts_give_the_canonical_table(archive):
    path, fmt = archive
    df = housing.read(path, fmt)
    assert df.shape == (20640, 9) and list(df.columns) == housing.COLUMNS
    assert housing.canonical_sha256(df) == CONTENT_SHA256
    # check values: docs/proofs.md, "The housing data: column orders and checksums"
    assert df.value.sum() == 4_269_504_061 and df.households.sum() == 10_310_499
    assert df.total_rooms.sum() == 54_402_150 and df.population.sum() == 29_421_840
    assert df.iloc[0].tolist() == pytest.approx([452600, 8.3252, 41, 880, 129, 322, 126, 37.88, -122.23])
    assert (df.value == 500001).sum() == 965 and (df.age == 52).sum() == 1273


def test_the_container_is_told_by_name_or_by_the_first_bytes(archive, tmp_path):
    path, fmt = archive
    assert housing.container_of(path) == fmt
    saved = tmp_path / "5976036"  # figshare's download URL has no file name: the bytes tell
    saved.write_bytes(path.read_bytes())
    assert housing.container_of(saved) == fmt and housing.read(saved).equals(housing.read(path))


def test_a_changed_value_changes_the_published_checksum(archive):
    path, fmt = archive
    df = housing.read(path, fmt)
    df.loc[17, "households"] += 1
    assert housing.canonical_sha256(df) != CONTENT_SHA256


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
        housing.read(path, fmt)


def test_wrong_row_count_is_refused(tmp_path, housing_df):
    path = tmp_path / "houses.zip"
    path.write_bytes(statlib_zip_bytes(housing_df.iloc[:-1]))
    with pytest.raises(DataError, match="expected 20640 rows of 9 numbers, found 20639"):
        housing.read(path, "statlib")


def test_missing_member_is_named(tmp_path):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("README", "nothing here")
    path = tmp_path / "houses.zip"
    path.write_bytes(buf.getvalue())
    with pytest.raises(DataError, match="no member cadata.txt"):
        housing.read(path, "statlib")


def test_housing_prepared_as_a_table_standardizes_and_says_it_is_not_private(housing_df):
    # the default block's spec: value / 1e5, then centred; the five covariates standardized column by column
    X, y, names, meta = housing_design()
    assert names == ["income", "age", "population", "households", "total_rooms"]  # the five of §6.2
    assert np.allclose(X.mean(axis=0), 0, atol=1e-12) and np.allclose(X.std(axis=0), 1)
    assert abs(y.mean()) < 1e-12 and y.max() == pytest.approx(500001 / 1e5 - housing_df.value.mean() / 1e5)
    assert meta["private"] is False and "NOT PRIVATE" in meta["privacy_note"]
    assert meta["intercept"] is False and meta["y_scale"] == 1e5 and meta["schema"]["d_public"] is True
    assert np.array_equal(np.array([meta["truth"][c] for c in names]), np.linalg.lstsq(X, y, rcond=None)[0])

import hashlib

import pytest

from support import LoopbackServer, figshare_tgz_bytes, real_housing, statlib_zip_bytes


@pytest.fixture(scope="session")
def housing_df():
    return real_housing()


@pytest.fixture(scope="session")
def housing_archives(housing_df):
    """{"statlib": bytes, "figshare": bytes} rebuilt from the real data, and their sha256."""
    blobs = {"statlib": statlib_zip_bytes(housing_df), "figshare": figshare_tgz_bytes(housing_df)}
    return {k: (v, hashlib.sha256(v).hexdigest()) for k, v in blobs.items()}


@pytest.fixture
def server():
    with LoopbackServer() as srv:
        yield srv

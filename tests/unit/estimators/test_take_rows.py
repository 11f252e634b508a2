"""take_rows: the row gather of designs, blocks and private selection is ``a[rows]``, whatever the array's layout."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from scipy import sparse

from dpcost.estimators.base import take_rows


@settings(max_examples=200, deadline=None)
@given(
    a=hnp.arrays(st.sampled_from([np.float64, np.int8]), hnp.array_shapes(min_dims=1, max_dims=3, max_side=6)),
    order=st.sampled_from(["C", "F", "strided"]),
    data=st.data(),
)
def test_take_rows_is_fancy_indexing_with_the_same_values_dtype_and_layout(a, order, data):
    if order == "F":
        a = np.asfortranarray(a)
    elif order == "strided" and a.shape[0] > 1:
        a = a[::2]  # a view that is neither C- nor F-contiguous in general
    shape = data.draw(hnp.array_shapes(min_dims=1, max_dims=2, min_side=0, max_side=5), label="index shape")
    rows = data.draw(hnp.arrays(np.int64, shape, elements=st.integers(-len(a), len(a) - 1)), label="rows")
    got, want = take_rows(a, rows), a[rows]
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert got.flags.c_contiguous == want.flags.c_contiguous  # BLAS sees the same layout: the same bits downstream
    assert not np.shares_memory(got, a)  # a copy: writing to it cannot change the design


def test_a_sparse_matrix_is_gathered_by_its_own_indexing():
    a = sparse.random(8, 5, density=0.4, format="csr", random_state=0)
    rows = np.array([3, 0, 3, 7])
    got = take_rows(a, rows)
    assert sparse.issparse(got) and (got != a[rows]).nnz == 0

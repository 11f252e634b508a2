"""The plan data model: a release and a plan are refused at construction unless their typed fields say what they are
(kind, norm, noise, coordinates, rounding; whether the releases are the whole mechanism, and why)."""

import dataclasses

import pytest

from dpcost.dp.plan import PrivacyPlan, Release, grid_release
from dpcost.errors import PrivacyError

GAUSS = Release("gaussian", 1.0, "l2", 3.0, kind="gaussian", noise="exact", coordinates=4)


def _plan(**kw):
    return PrivacyPlan("x", 1.0, 1e-5, "tight", "c", "a", (GAUSS,), **kw)


@pytest.mark.parametrize(
    "field, value, match",
    [
        ("kind", "gaussian_ish", "kind must be one of"),
        ("norm", "l2 (Frobenius)", "norm must be one of"),  # the words go to norm_words
        ("noise", "numpy", "noise must be one of"),
        ("count", 0, "count must be an integer >= 1"),
        ("count", 2.0, "count must be an integer >= 1"),
        ("coordinates", 0, "coordinates must be None or an integer >= 1"),
        ("rounding", -1e-9, "rounding must be a finite float >= 0"),
        ("rounding", float("nan"), "rounding must be a finite float >= 0"),
        ("per_unit", 1, "per_unit must be a bool"),
    ],
)
def test_a_release_with_an_unknown_or_malformed_typed_field_is_refused(field, value, match):
    with pytest.raises(PrivacyError, match=match):
        dataclasses.replace(GAUSS, **{field: value})


def test_rounding_belongs_to_an_exact_grid_release_of_a_sensitivity():
    assert dataclasses.replace(GAUSS, rounding=1e-7).rounding == 1e-7
    with pytest.raises(PrivacyError, match="only an exact grid release"):
        dataclasses.replace(GAUSS, rounding=1e-7, noise="float-unsafe")
    with pytest.raises(PrivacyError, match="only an exact grid release"):
        dataclasses.replace(GAUSS, rounding=1e-7, sensitivity=None)


def test_the_typed_fields_must_be_given():
    with pytest.raises(TypeError, match="kind"):
        Release("gaussian", 1.0, "l2", 3.0, noise="exact")
    with pytest.raises(TypeError, match="whole_mechanism"):
        PrivacyPlan("x", 1.0, 1e-5, "tight", "c", "a", (GAUSS,))


def test_a_plan_says_whether_its_releases_are_the_whole_mechanism_and_why():
    plan = _plan(whole_mechanism=True, whole_mechanism_why="one Gaussian release")
    assert plan.to_dict()["whole_mechanism"] is True and plan.to_dict()["releases"][0]["kind"] == "gaussian"
    with pytest.raises(PrivacyError, match="must say why"):
        _plan(whole_mechanism=False, whole_mechanism_why=" ")
    with pytest.raises(PrivacyError, match="must be a bool"):
        _plan(whole_mechanism="yes", whole_mechanism_why="why")
    with pytest.raises(PrivacyError, match="every release must be a Release"):
        PrivacyPlan(
            "x", 1.0, 1e-5, "t", "c", "a", ({"kind": "gaussian"},), whole_mechanism=True, whole_mechanism_why="w"
        )
    with pytest.raises(PrivacyError, match="releases_stated_for"):
        _plan(releases_stated_for="add/remove", whole_mechanism=True, whole_mechanism_why="w")


def test_a_grid_release_draws_gaussian_or_laplace_noise_of_a_stated_size():
    with pytest.raises(PrivacyError, match="the grid draws Gaussian and Laplace noise"):
        grid_release("posterior", "sample", 1.0, "none", 1.0, coordinates=None, sampler="exact")
    with pytest.raises(PrivacyError, match="must say how many coordinates"):
        grid_release("gaussian", "gaussian", 1.0, "l2", 1.0, coordinates=None, sampler="exact")
    with pytest.raises(PrivacyError, match="sampler must be one of"):
        grid_release("gaussian", "gaussian", 1.0, "l2", 1.0, coordinates=2, sampler="fast")
    sgd = grid_release("gaussian", "gaussian", 1.0, "l2", 1.0, coordinates=2, sampler="exact", note="a caveat")
    assert sgd.sampler.endswith("; a caveat") and sgd.kind == "gaussian" and sgd.coordinates == 2
    unsafe = grid_release("gaussian", "gaussian", 1.0, "l2", 1.0, coordinates=2, sampler="float-unsafe", note="x")
    assert not unsafe.sampler.endswith("x") and unsafe.noise == "float-unsafe"  # the note is about the exact sampler

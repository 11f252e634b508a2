import pytest


@pytest.fixture
def figures(monkeypatch):
    """Every figure the plotting functions draw, kept open (they close their figures after saving)."""
    from dpcost.analysis import plotting

    kept = []
    monkeypatch.setattr(plotting.plt, "close", kept.append)
    yield kept
    monkeypatch.undo()
    for fig in kept:
        plotting.plt.close(fig)

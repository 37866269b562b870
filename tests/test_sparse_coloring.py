"""Colourings (duals.sparse.coloring), verified structurally: no two columns (rows) of a colour
share a row (column), and a star colouring has no two-coloured path on four vertices."""
import itertools

import numpy as np
import pytest
import scipy.sparse

from duals.sparse.coloring import ORDERS, column_colors, row_colors, star_colors


def _random_pattern(seed, m, n, density):
    rng = np.random.default_rng(seed)
    return rng.random((m, n)) < density


def _columns_of_a_colour_share_no_row(P, colors):
    for c in np.unique(colors):
        if (P[:, colors == c].sum(axis=1) > 1).any():
            return False
    return True


def _is_star_coloring(S, colors):
    """Brute force: adjacent vertices differ, and every path a-b-c-d uses at least three colours."""
    n = S.shape[0]
    adjacent = S & ~np.eye(n, dtype=bool)
    if (adjacent & (colors[:, None] == colors[None, :])).any():
        return False
    neighbours = [np.flatnonzero(adjacent[v]) for v in range(n)]
    for b in range(n):
        for c in neighbours[b]:
            for a in neighbours[b]:
                if a == c or colors[a] != colors[c]:
                    continue
                for d in neighbours[c]:
                    if d != b and d != a and colors[d] == colors[b]:
                        return False
    return True


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("seed", range(6))
def test_columns_of_a_colour_share_no_row(seed, order):
    P = _random_pattern(seed, 40, 30, 0.08)
    colors = column_colors(scipy.sparse.csr_array(P), order)
    assert colors.shape == (30,) and colors.min() >= 0
    assert _columns_of_a_colour_share_no_row(P, colors)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("seed", range(6))
def test_rows_of_a_colour_share_no_column(seed, order):
    P = _random_pattern(seed + 100, 30, 40, 0.08)
    colors = row_colors(P, order)
    assert colors.shape == (30,)
    assert _columns_of_a_colour_share_no_row(P.T, colors)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("seed", range(8))
def test_star_coloring_has_no_two_coloured_path_on_four_vertices(seed, order):
    P = _random_pattern(seed + 200, 25, 25, 0.1)
    S = P | P.T | np.eye(25, dtype=bool)
    colors = star_colors(S, order)
    assert _is_star_coloring(S, colors)


def test_the_brute_force_check_rejects_a_two_coloured_path():
    path = np.eye(4, k=1, dtype=bool) | np.eye(4, k=-1, dtype=bool)
    assert not _is_star_coloring(path, np.array([0, 1, 0, 1]))
    assert _is_star_coloring(path, np.array([0, 1, 2, 0]))
    assert not _columns_of_a_colour_share_no_row(np.array([[1, 1]], dtype=bool), np.array([0, 0]))


def test_known_optima_are_reached():
    n = 12
    tridiagonal = np.eye(n, dtype=bool) | np.eye(n, k=1, dtype=bool) | np.eye(n, k=-1, dtype=bool)
    assert column_colors(np.eye(n, dtype=bool)).max() + 1 == 1
    assert column_colors(tridiagonal).max() + 1 == 3
    assert star_colors(np.eye(n, dtype=bool)).max() + 1 == 1
    assert star_colors(tridiagonal).max() + 1 == 3          # a path's star chromatic number
    arrow = np.eye(n, dtype=bool)
    arrow[0, :] = arrow[:, 0] = True
    assert star_colors(arrow).max() + 1 == 2                # a star: centre and the rest


def test_a_dense_row_needs_a_colour_per_column_but_one_per_row():
    P = np.vstack([np.ones((1, 10), dtype=bool), np.eye(10, dtype=bool)])
    assert column_colors(P).max() + 1 == 10
    assert row_colors(P).max() + 1 == 2


def test_every_pair_of_columns_of_a_colour_is_checked_on_a_grid_stencil():
    N = 6
    idx = np.arange(N * N).reshape(N, N)
    P = np.zeros((N * N, N * N), dtype=bool)
    for shift, axis in itertools.product((0, 1, -1), (0, 1)):
        P[idx.ravel(), np.roll(idx, shift, axis).ravel()] = True
    for order in ORDERS:
        colors = column_colors(P, order)
        assert _columns_of_a_colour_share_no_row(P, colors)
        assert colors.max() + 1 <= 13


def test_an_unknown_order_is_refused():
    with pytest.raises(ValueError, match="order must be one of"):
        column_colors(np.eye(2, dtype=bool), "random")

"""The reverse sweep of compiled reverse mode: ``adj[parent] += partial · adj[node]`` over a tape.

The nodes of a :class:`~duals.jit.tape.Tape` are read as two views of its buffer: uint32 rows
(the two parents first) and float64 rows (the partials after the first word). :func:`sweep` pulls
one adjoint per node, :func:`sweep_lanes` a row of them per node (rows of a Jacobian) and
:func:`sweep_duals` first-order duals (forward over reverse). An adjoint that no contribution
reached is :data:`UNTOUCHED` (``-0.0``) and passes nothing on.

>>> parents, partials = np.zeros((3, 6), np.uint32), np.zeros((3, 3))   # nodes 0 (constant), 1, 2
>>> parents[2, :2] = 1, 1; partials[2, 1:] = 2.0, 3.0                     # node 2 = 2·x1 + 3·x1
>>> adj = untouched(3); adj[2] = 1.0
>>> sweep(parents, partials, 2, adj); float(adj[1])
5.0
"""
import numba
import numpy as np

from .._numba_cache import cached_njit

__all__ = ["UNTOUCHED", "untouched", "positive_zeros", "sweep", "sweep_lanes", "sweep_duals"]

# An adjoint no contribution reached yet: -0.0, which no contribution leaves (each is ``c + 0.0``,
# and -0.0 + 0.0 is +0.0), so a zero that came from the output (a zero partial) is told from one
# that did not (a node nothing depends on, a row of a Jacobian that does not reach it).
UNTOUCHED = -0.0


def untouched(shape, dtype=np.float64):
    """untouched(shape, dtype=np.float64) -> adjoints that no contribution has reached (every float
    :data:`UNTOUCHED`), for a sweep; :func:`positive_zeros` turns them back into 0.0.

    >>> bool(np.signbit(untouched(2)).all())
    True
    """
    adj = np.empty(shape, dtype)
    adj.view(np.float64)[...] = UNTOUCHED
    return adj


def positive_zeros(adj):
    """positive_zeros(adj) -> ``adj``, changed in place: its zeros all +0.0 (a gradient no
    contribution reached is 0.0, not the sweep's -0.0)."""
    flat = adj.view(np.float64)
    flat += 0.0
    return adj


@cached_njit()
def sweep(parents, partials, first, adj):
    """sweep(parents, partials, first, adj): ``adj[parent] += partial * adj[node]`` for every
    node from the last down to ``first``, over floats; ``parents`` and ``partials`` are the
    node buffer seen as uint32 rows (parents in columns 0-1) and float64 rows (partials in
    columns 1-2). Untouched adjoints (:data:`UNTOUCHED`) are skipped: a node no output depends on
    adds nothing even through an infinite partial (``sqrt'(0)`` of a speed computed but not
    used), while a zero that is only numerical (``exp'`` at ``-inf``) meets it as ``0 · inf``,
    NaN, as in every other mode. Most nodes feed the node recorded just before them:
    that contribution stays in a register (``carry``) instead of a store the next step reloads.
    Every index is unsigned and the rows are read flat (a node over floats is 6 uint32 or 3
    float64 words), so no access pays a test for negative indices or a multiplication by a
    stride (about 10 % of the sweep)."""
    flat_parents, flat_partials = parents.reshape(-1), partials.reshape(-1)
    count = parents.shape[0]
    carry = UNTOUCHED
    for j in range(count - first):
        k = numba.uint64(count - 1 - j)
        a = adj[k] + carry
        carry = UNTOUCHED
        if a != 0.0 or not np.signbit(a):
            p1, p2 = flat_parents[6 * k], flat_parents[6 * k + 1]
            c1, c2 = flat_partials[3 * k + 1] * a + 0.0, flat_partials[3 * k + 2] * a + 0.0
            if p1 == k - 1:
                carry += c1
            else:
                adj[p1] += c1
            if p2 == k - 1:
                carry += c2
            else:
                adj[p2] += c2
    if first > 0:
        adj[first - 1] += carry


@cached_njit()
def sweep_lanes(parents, partials, first, adj):
    """sweep_lanes(parents, partials, first, adj): :func:`sweep` for ``adj`` of shape
    ``(nodes, lanes)``, one cotangent per lane (rows of a Jacobian). A lane's untouched adjoint
    adds nothing, as in :func:`sweep`: an infinite partial (``sqrt'(0)``) then leaves the exact 0
    of the rows that do not depend on it, not ``0 · inf = NaN`` (a select, so the lanes still
    vectorise)."""
    lanes = adj.shape[1]
    for k in range(parents.shape[0] - 1, first - 1, -1):
        a1, a2 = parents[k, 0], parents[k, 1]
        s1, s2 = partials[k, 1], partials[k, 2]
        for j in range(lanes):
            a = adj[k, j]
            keep = a != 0.0 or not np.signbit(a)
            adj[a1, j] += s1 * a + 0.0 if keep else UNTOUCHED
            adj[a2, j] += s2 * a + 0.0 if keep else UNTOUCHED


@cached_njit()
def sweep_duals(parents, partials, width, first, adj):
    """sweep_duals(parents, partials, width, first, adj): :func:`sweep` over first-order duals of
    ``width - 1`` lanes (forward over reverse). ``parents``/``partials`` are the node buffer as
    uint32 rows (parents in columns 0-1) and float64 rows (after the first word, the two
    partials' ``width`` floats each),
    ``adj`` the adjoints as ``(nodes, width)`` floats (real part, then lanes): the dual product
    ``(a0 + a ε)(d0 + d ε) = a0 d0 + (a0 d + a d0) ε`` written out. An adjoint that is zero in
    every part is skipped, as in :func:`sweep`; one lane (``hvp``) has a loop of its own."""
    if width == 2:
        _sweep_one_lane(parents, partials, first, adj)
        return
    for k in range(parents.shape[0] - 1, first - 1, -1):
        a0 = adj[k, 0]
        if _untouched(a0) and _untouched_lanes(adj, k, width):
            continue
        p1, p2 = parents[k, 0], parents[k, 1]
        d1, d2 = partials[k, 1], partials[k, 1 + width]
        adj[p1, 0] += a0 * d1 + 0.0
        adj[p2, 0] += a0 * d2 + 0.0
        for j in range(1, width):
            aj = adj[k, j]
            adj[p1, j] += a0 * partials[k, 1 + j] + aj * d1 + 0.0
            adj[p2, j] += a0 * partials[k, 1 + width + j] + aj * d2 + 0.0


@numba.njit(inline="always")
def _untouched(a):
    return a == 0.0 and np.signbit(a)


@numba.njit(inline="always")
def _untouched_lanes(adj, k, width):
    for j in range(1, width):
        if not _untouched(adj[k, j]):
            return False
    return True


@numba.njit(inline="always")
def _sweep_one_lane(parents, partials, first, adj):
    # a node is 5 words (two 32-bit parents, two partials of a real part and one lane); flat,
    # unsigned indices as in sweep
    flat_parents, flat_partials, flat_adj = parents.reshape(-1), partials.reshape(-1), adj.reshape(-1)
    count = parents.shape[0]
    for j in range(count - first):
        k = numba.uint64(count - 1 - j)
        a0, a1 = flat_adj[2 * k], flat_adj[2 * k + 1]
        if _untouched(a0) and _untouched(a1):
            continue
        p1, p2 = flat_parents[10 * k], flat_parents[10 * k + 1]
        d1, e1 = flat_partials[5 * k + 1], flat_partials[5 * k + 2]
        d2, e2 = flat_partials[5 * k + 3], flat_partials[5 * k + 4]
        flat_adj[2 * p1] += a0 * d1 + 0.0
        flat_adj[2 * p1 + 1] += a0 * e1 + a1 * d1 + 0.0
        flat_adj[2 * p2] += a0 * d2 + 0.0
        flat_adj[2 * p2 + 1] += a0 * e2 + a1 * d2 + 0.0

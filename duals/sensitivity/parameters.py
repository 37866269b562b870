"""A model's parameters as one flat float vector with a label per entry, and back.

``p`` is a float, a float array of any shape, or a dict of floats and arrays (named
parameters). Entries are numbered dict entry by dict entry in the dict's own order, each
array in C order; labels read ``"k1"``, ``"K[0,1]"``, ``"p[2]"``.

>>> params = Parameters({"k": 0.5, "K": [[1.0, 2.0]]}, "solve_ivp")
>>> params.labels, params.flat.tolist()
(['k', 'K[0,0]', 'K[0,1]'], [0.5, 1.0, 2.0])
"""
import numpy as np

from .. import numpy as dnp
from ..core import Tracer
from ..validation import check_float_dtype

__all__ = ["Parameters", "as_state"]


def refuse_traced(value, what, who):
    """Raise where ``value`` (or an entry of a list or tuple of them) is traced by an enclosing
    duals transformation: the sensitivity functions compute their derivatives themselves, on
    plain numbers, and their results are the pieces of the chain rule to apply instead."""
    items = value if isinstance(value, (list, tuple)) else (value,)
    if any(isinstance(v, Tracer) for v in items):
        raise TypeError(
            f"{who}: {what} is traced by an enclosing duals transformation (jacfwd, grad ...); "
            f"{who} computes its derivatives itself, on plain numbers, so it does not run inside "
            f"one. Take its sensitivities and chain them instead: with sens_y0=True, dy/dθ = "
            f"S_p + S_y0 · dy0/dθ for a y0 that depends on θ (a steady state), and an outer fit "
            f"takes the sensitivities as its Jacobian (docs/sensitivity.md)")


def _as_float(value, who, name):
    refuse_traced(value, name, who)
    what = f"{who}: {name}"
    if isinstance(value, (bool, np.bool_)):
        check_float_dtype(np.bool_(value), what)
    a = np.asarray(value)
    check_float_dtype(a, what)
    return a.astype(np.float64)


def _labels(key, shape):
    if shape == ():
        return [str(key)]
    return [f"{key}[{','.join(str(i) for i in index)}]" for index in np.ndindex(*shape)]


class Parameters:
    """Parameters(p, who, names=None, default="p"): ``p`` flattened, with labels and blocks.

    ``value`` is what the model receives (float64 throughout; a 0-d entry is a float),
    ``flat`` every entry as one vector, ``labels`` one name per entry (``names`` replaces them
    for a plain array), ``blocks`` ``(key, start, stop, shape)`` per dict entry (one block named
    ``default`` for a plain ``p``).
    """

    def __init__(self, p, who, names=None, default="p"):
        self.given = p   # (the caller's object: a function reading it from a closure is told apart)
        self.is_dict = isinstance(p, dict)
        self.who = who
        if self.is_dict:
            if names is not None:
                raise TypeError(f"{who}: names= labels the entries of an array p; a dict p is "
                                f"labelled by its keys already")
            items = [(key, _as_float(v, who, f"p[{key!r}]")) for key, v in p.items()]
        else:
            items = [(default, _as_float(p, who, default))]
        self.blocks, flat, self.labels, start = [], [], [], 0
        for key, a in items:
            self.blocks.append((key, start, start + a.size, a.shape))
            flat.append(a.reshape(-1))
            self.labels.extend(_labels(key, a.shape))
            start += a.size
        self.flat = np.concatenate(flat) if flat else np.zeros(0)
        self.size = self.flat.size
        if names is not None:
            names = [str(n) for n in names]
            if len(names) != self.size:
                option, what = ("names", "p") if default == "p" else ("output_names", "the output")
                raise ValueError(f"{who}: {option} has {len(names)} entries but {what} has "
                                 f"{self.size}; give one name per entry of {what}")
            self.labels = names
        self.flat.setflags(write=False)   # fun must not change its parameters
        self.value = self.rebuild(self.flat)

    def rebuild(self, flat):
        """rebuild(flat) -> the entries of ``flat`` in the layout of ``p`` (dict, array or float)."""
        leaves = [flat[start] if shape == () else flat[start:stop].reshape(shape)
                  for _, start, stop, shape in self.blocks]
        if self.is_dict:
            return {key: leaf for (key, *_), leaf in zip(self.blocks, leaves)}
        return leaves[0]

    def group(self, flat):
        """group(flat) -> ``flat`` shaped like ``p`` with plain floats for 0-d entries."""
        out = self.rebuild(np.asarray(flat, dtype=np.float64))
        if self.is_dict:
            return {k: float(v) if np.ndim(v) == 0 else v for k, v in out.items()}
        return float(out) if np.ndim(out) == 0 else out

    def columns(self, blocks, rows):
        """columns(blocks, rows) -> a ``(rows, size)`` matrix from a Jacobian with respect to ``p``
        (``lead + p.shape`` for an array, a dict of such blocks for a dict); traced blocks stay traced."""
        if not self.is_dict:
            return dnp.reshape(blocks, (rows, self.size))
        parts = [dnp.reshape(blocks[key], (rows, stop - start)) for key, start, stop, _ in self.blocks]
        return dnp.concatenate(parts, axis=1) if parts else np.zeros((rows, 0))

    def find(self, name):
        """find(name) -> (start, stop, shape) of a dict key (or the default name) or (j, j + 1, ()) of a label."""
        for key, start, stop, shape in self.blocks:
            if key == name:
                return start, stop, shape
        if name in self.labels:
            j = self.labels.index(name)
            return j, j + 1, ()
        return None


def as_state(y0, who):
    """as_state(y0, who) -> ``y0`` as a 1-d float64 array (integers promoted), or a clear error.

    >>> as_state([1, 0], "solve_ivp").tolist()
    [1.0, 0.0]
    """
    if isinstance(y0, dict):
        raise TypeError(f"{who}: y0 is a dict; the state is one 1-d float array")
    refuse_traced(y0, "y0", who)
    a = np.asarray(y0)
    if a.dtype.kind in "OSU":
        raise TypeError(f"{who}: y0 has dtype {a.dtype}; give the initial state as a 1-d float "
                        f"array (for example np.asarray(y0, dtype=float))")
    check_float_dtype(a, f"{who}: y0")
    if a.ndim != 1:
        raise ValueError(f"{who}: y0 must be 1-dimensional (as in SciPy's solve_ivp), got shape "
                         f"{a.shape}")
    return a.astype(np.float64)


def returning_a_number(f, who, call):
    """returning_a_number(f, who, call) -> ``f`` whose result must be one number: a vector (or a
    1-element array) is refused naming ``call`` (``"loss(t, y)"``), not the ``grad`` inside. A
    Numba dispatcher is returned as it is (compiled reverse mode differentiates it itself).

    >>> returning_a_number(lambda x: 2.0 * x, "dgsm", "f(x)")(1.5)
    3.0
    """
    from ..arguments import is_compiled
    if is_compiled(f):
        return f

    def checked(*args):
        out = f(*args)
        if isinstance(out, (list, tuple, dict)) or np.ndim(out) != 0:
            shape = f"a {type(out).__name__}" if isinstance(out, (list, tuple, dict)) else f"shape {np.shape(out)}"
            raise ValueError(f"{who}: {call} must return one number, got {shape}; return the "
                             f"number itself (y[0] rather than y, or np.sum(...) of the terms)")
        return out
    return checked


def takes_parameters(f, call, params, who):
    """Whether ``f`` (a loss, an integrand, an event) takes ``(t, y, p)``, else ``(t, y)``; a
    two-argument one that reads the very ``p`` given from a closure or a global is refused: its
    direct dependence on the parameters would be missing from the derivatives. ``call`` is how
    the refusal writes it, ``"loss(t, y"``.

    >>> takes_parameters(lambda t, y: y[0], "event(t, y", Parameters([1.0], "solve_ivp"), "solve_ivp")
    False
    """
    import inspect
    try:
        parameters = inspect.signature(getattr(f, "py_func", f)).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = [q for q in parameters if q.kind in (q.POSITIONAL_ONLY, q.POSITIONAL_OR_KEYWORD)
                  and q.default is q.empty]
    if len(positional) >= 3:
        return True
    try:
        seen = inspect.getclosurevars(getattr(f, "py_func", f))
    except TypeError:   # (not Python code: nothing to look into)
        return False
    if any(v is params.given for v in (*seen.nonlocals.values(), *seen.globals.values())):
        raise TypeError(f"{who}: {call}) reads p from a closure or a global, so its direct "
                        f"dependence on the parameters would be missing from the gradient; "
                        f"take p as the third argument, {call}, p), and it is differentiated too")
    return False

"""Local sensitivity tables: the Jacobian of a model and its normalised (elasticity) coefficients.

The normalised coefficient ``(p_j / f_i) ∂f_i/∂p_j`` reads "1 % more of ``p_j`` gives that many
% more of ``f_i``": it compares parameters of different units. The rule at zeros: where
``f_i = 0`` the coefficient is NaN (a relative change of zero is undefined) and ``undefined``
marks it; where ``p_j = 0`` (and ``f_i ≠ 0``) it is 0, the limit of ``p_j ∂f_i/∂p_j / f_i`` as
``p_j → 0``.

>>> res = local(lambda p: p["a"] ** 2 * p["b"], {"a": 2.0, "b": 3.0})
>>> res.jacobian.tolist(), res.normalized.tolist()
([[12.0, 4.0]], [[2.0, 1.0]])
"""
import numpy as np

from ..arguments import is_compiled
from ..random_states import from_one_state
from ..transforms import jacobian as _jacobian
from ._optional import require
from .parameters import Parameters

__all__ = ["local", "LocalSensitivity"]

WHO = "duals.sensitivity.local"


def local(f, p, names=None, output_names=None, workers=None):
    """local(f, p, names=None, output_names=None, workers=None) -> LocalSensitivity: ``∂f/∂p`` and ``(p_j / f_i) ∂f_i/∂p_j``.

    Args:
        f: ``f(p)`` returning a float, an array (any shape, flattened in C order) or a dict of
            named floats and arrays; Python code or a ``@numba.njit`` function (which then
            needs an array ``p``). The Jacobian is :func:`duals.jacobian` (forward or reverse
            mode by its sizes rule; compiled forward mode for a dispatcher).
        p: a float, a float array or a dict of named floats and arrays, passed to ``f`` as given.
        names: labels of the entries of an array ``p`` (default ``p[0]``, ``p[1]``, ...; a
            dict is labelled by its keys).
        output_names: labels of the entries of an array output (default ``f[0]``, ...).
        workers: where the Jacobian's chunks run, as in :func:`duals.jacobian` (see the
            workers page of the docs); the result is the same bits.

    Returns:
        A :class:`LocalSensitivity` with ``jacobian`` and ``normalized`` of shape
        ``(n_outputs, n_parameters)``; printing it shows both as tables.

    >>> import duals.numpy as dnp
    >>> res = local(lambda p: dnp.stack([p[0] * p[1], p[0] - 2.0]), [2.0, 0.0], names=["a", "b"])
    >>> res.normalized.tolist()[0], bool(res.undefined[1, 0])
    ([nan, nan], True)
    """
    params = Parameters(p, WHO, names, default="p")
    if params.size == 0:
        raise ValueError(f"{WHO}: p is empty; there is nothing to differentiate")
    if is_compiled(f) and params.is_dict:
        raise TypeError(f"{WHO}: a @numba.njit f receives p as one float array (Numba cannot "
                        f"take a dict of arrays); pass an array and label it with names=[...]")
    def checked_value():
        value = f(params.value)
        if isinstance(value, (list, tuple)):
            raise TypeError(f"{WHO}: f returned a {type(value).__name__}; return a float, an array or "
                            f"a dict of named outputs (use dnp.stack to build an array)")
        return Parameters(value, WHO, output_names, default="f")

    # the value and the Jacobian from one realisation of any noise f draws
    outputs, blocks = from_one_state(checked_value, lambda: _jacobian(f, workers=workers)(params.value),
                                     args=(params.value,))
    rows = []
    for key, start, stop, _ in outputs.blocks:
        block = blocks[key] if outputs.is_dict else blocks
        rows.append(np.asarray(params.columns(block, stop - start), dtype=np.float64))
    jac = np.concatenate(rows, axis=0)
    return LocalSensitivity(outputs.flat, params.flat, jac, outputs.labels, params.labels)


def normalized_coefficients(value, parameters, jac):
    """normalized_coefficients(value, parameters, jac) -> (coefficients, undefined) by the module's rule at zeros.

    >>> normalized_coefficients(np.array([2.0, 0.0]), np.array([1.0]), np.array([[4.0], [1.0]]))[0].tolist()
    [[2.0], [nan]]
    """
    value = np.asarray(value, dtype=np.float64)[:, None]
    parameters = np.asarray(parameters, dtype=np.float64)[None, :]
    undefined = np.broadcast_to(value == 0, jac.shape).copy()
    with np.errstate(divide="ignore", invalid="ignore"):
        coefficients = np.where(parameters == 0, 0.0, jac * parameters) / value
    coefficients[undefined] = np.nan
    return coefficients, undefined


def _cell(x, width):
    return f"{x:>{width}.4g}" if np.isfinite(x) or np.isnan(x) else f"{x:>{width}}"


class LocalSensitivity:
    """LocalSensitivity: the result of :func:`local`.

    Attributes:
        value: the outputs ``f(p)``, flattened, shape ``(n_outputs,)``.
        parameters: the entries of ``p``, flattened, shape ``(n_parameters,)``.
        jacobian: ``∂f_i/∂p_j``, shape ``(n_outputs, n_parameters)``.
        normalized: ``(p_j / f_i) ∂f_i/∂p_j`` (NaN where ``f_i = 0``, 0 where ``p_j = 0``).
        undefined: where ``normalized`` is NaN because ``f_i = 0`` (a boolean array).
        output_names, parameter_names: the labels of rows and columns.
    """

    def __init__(self, value, parameters, jac, output_names, parameter_names):
        self.value = np.asarray(value, dtype=np.float64)
        self.parameters = np.asarray(parameters, dtype=np.float64)
        self.jacobian = jac
        self.output_names, self.parameter_names = list(output_names), list(parameter_names)
        self.normalized, self.undefined = normalized_coefficients(self.value, self.parameters, jac)

    def _table(self, matrix, title):
        name_width = max([len("parameter")] + [len(n) for n in self.parameter_names])
        width = max([11] + [len(n) + 1 for n in self.output_names])
        lines = [title,
                 f"{'parameter':<{name_width}} {'value':>11}" +
                 "".join(f"{n:>{width}}" for n in self.output_names)]
        for j, name in enumerate(self.parameter_names):
            lines.append(f"{name:<{name_width}} {_cell(self.parameters[j], 11)}" +
                         "".join(_cell(matrix[i, j], width) for i in range(len(self.output_names))))
        return lines

    def __str__(self):
        outputs = ", ".join(f"{n} = {v:.6g}" for n, v in zip(self.output_names, self.value))
        lines = [f"local sensitivities at {outputs}", ""]
        lines += self._table(self.normalized, "normalised (p_j / f_i) df_i/dp_j:")
        lines += [""] + self._table(self.jacobian, "derivatives df_i/dp_j:")
        if self.undefined.any():
            zero = [n for n, u in zip(self.output_names, self.undefined.any(axis=1)) if u]
            lines += ["", f"nan: {', '.join(zero)} = 0, so the relative change is undefined"]
        return "\n".join(lines)

    __repr__ = __str__

    def to_dict(self):
        """to_dict() -> plain dicts of floats: ``parameters``, ``outputs``, ``jacobian`` and
        ``normalized`` (``{output: {parameter: value}}``) and ``undefined`` (a list of pairs).

        >>> local(lambda p: 3.0 * p, 2.0).to_dict()["normalized"]
        {'f': {'p': 1.0}}
        """
        def table(matrix):
            return {o: {p: float(matrix[i, j]) for j, p in enumerate(self.parameter_names)}
                    for i, o in enumerate(self.output_names)}
        return {"parameters": dict(zip(self.parameter_names, self.parameters.tolist())),
                "outputs": dict(zip(self.output_names, self.value.tolist())),
                "jacobian": table(self.jacobian), "normalized": table(self.normalized),
                "undefined": [(self.output_names[i], self.parameter_names[j])
                              for i, j in zip(*np.nonzero(self.undefined))]}

    def plot(self, output=None, ax=None, sort=True):
        """plot(output=None, ax=None, sort=True) -> a matplotlib Axes with a tornado chart.

        Horizontal bars of the normalised coefficients of one output (a name or an index;
        ``None``: every output, grouped), largest magnitude at the top when ``sort``.
        Undefined coefficients (NaN) are drawn as empty bars and named in the title.
        Needs matplotlib.
        """
        plt = require("matplotlib.pyplot", "LocalSensitivity.plot")
        if output is None:
            rows = list(range(len(self.output_names)))
        elif isinstance(output, str):
            if output not in self.output_names:
                raise KeyError(f"plot: no output named {output!r}; the outputs are {self.output_names}")
            rows = [self.output_names.index(output)]
        else:
            rows = [int(output)]
        data = self.normalized[rows]
        order = np.arange(len(self.parameter_names))
        if sort:
            order = np.argsort(np.nan_to_num(np.abs(data), nan=-1.0).max(axis=0))
        if ax is None:
            _, ax = plt.subplots(figsize=(6.4, 0.4 * len(order) + 1.4))
        height = 0.8 / len(rows)
        for r, i in enumerate(rows):
            position = np.arange(len(order)) + (r - (len(rows) - 1) / 2) * height
            ax.barh(position, np.nan_to_num(data[r, order]), height=height,
                    label=self.output_names[i])
        ax.set_yticks(np.arange(len(order)))
        ax.set_yticklabels([self.parameter_names[j] for j in order])
        ax.axvline(0.0, color="black", linewidth=0.8)
        ax.set_xlabel("normalised sensitivity (p/f) ∂f/∂p  [% change of f per % change of p]")
        ax.set_ylabel("parameter")
        missing = [self.output_names[i] for i in rows if self.undefined[i].any()]
        title = "local sensitivities" + (f" of {self.output_names[rows[0]]}" if len(rows) == 1 else "")
        if missing:
            title += f" (undefined for {', '.join(missing)} = 0)"
        ax.set_title(title)
        if len(rows) > 1:
            ax.legend(title="output")
        return ax

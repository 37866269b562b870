"""The function a transformation returns: it pickles as the transformation of ``f``.

``duals.grad(loss)`` is a closure over the machinery of one process; a process pool
(``Pool.map(duals.grad(loss), points)``) pickles the callable it is given, and a closure does not
pickle. :func:`returns_transformed` wraps what ``grad``, ``jacfwd`` ... return in a
:class:`Transformed`, which pickles as "``duals.grad`` of ``loss`` with these options" and is
rebuilt by calling the transformation again in the other process (``loss`` must pickle: a
module-level function or a Numba dispatcher, not a lambda). It carries ``loss``'s name too.

>>> import pickle, numpy as np, duals
>>> g = pickle.loads(pickle.dumps(duals.grad(np.sin)))
>>> float(g(0.0)), g.__name__
(1.0, 'sin')
"""
import functools
import inspect

__all__ = ["Transformed", "returns_transformed"]


class Transformed:
    """Transformed(call, made_by, f, options): ``call`` (what ``duals.<made_by>(f, **options())``
    returned), named after ``f``; pickles as that transformation of ``f``. ``options`` is a
    function returning them, called only when pickled (binding the transformation's signature
    at every ``duals.grad(f)`` cost a loop that makes one per call 20 us)."""

    def __init__(self, call, made_by, f, options):
        self._call, self._made_by, self._f, self._options = call, made_by, f, options
        self.__name__ = getattr(f, "__name__", made_by)
        self.__qualname__ = getattr(f, "__qualname__", self.__name__)
        self.__doc__ = f"duals.{made_by} of {self.__name__}"
        self.__wrapped__ = f

    def __call__(self, *args, **kwargs):
        return self._call(*args, **kwargs)

    def compile(self, *args, **kwargs):
        """compile(*args, **kwargs) -> the call's result, with the compiled driver for this layout of
        arguments made now: for a loop of thousands of calls of a derivative of a Numba dispatcher.

        ``jacfwd`` (one pass of at most 16 directions), ``grad`` and ``value_and_grad`` of
        a dispatcher then run as one compiled call each (a few µs of Python instead of 15-40 µs).
        Without it a layout gets its driver once the calls made without it would have paid for
        its compilation (seconds: about 170,000 forward calls), so a loop of 5,000 never does.
        The function runs twice (the second time by the driver), from one state of any random
        generators and argument arrays, left where one call leaves them. Elsewhere (Python
        functions, layouts a driver cannot serve) it is the call.

        >>> import numba, numpy as np, duals
        >>> J = duals.jacfwd(numba.njit(lambda x: x * x))
        >>> J.compile(np.array([1.0, 2.0])).tolist()
        [[2.0, 0.0], [0.0, 4.0]]
        """
        from .jit.driver import drivers_now
        from .random_states import from_one_state
        with drivers_now():
            _, result = from_one_state(lambda: self._call(*args, **kwargs), lambda: self._call(*args, **kwargs),
                                       args=args + tuple(kwargs.values()))
        return result

    def __getattr__(self, name):   # (only for names that are not there) what the call carries
        if name.startswith("__") or name in ("_call", "_made_by", "_f", "_options"):
            raise AttributeError(name)
        return getattr(self._call, name)

    def __reduce__(self):
        return _remake, (self._made_by, self._f, self._options())

    def __repr__(self):
        return f"<duals.{self._made_by} of {self.__name__}>"


def _remake(made_by, f, options):
    import duals
    return getattr(duals, made_by)(f, **options)


def returns_transformed(transform):
    """Decorator of a transformation ``transform(f, ...)``: what it returns is a :class:`Transformed`."""
    signature = inspect.signature(transform)

    def options(f, args, kwargs):
        bound = dict(signature.bind(f, *args, **kwargs).arguments)
        del bound[next(iter(signature.parameters))]
        return bound

    @functools.wraps(transform)
    def make(f, *args, **kwargs):
        call = transform(f, *args, **kwargs)
        return Transformed(call, transform.__name__, f, lambda: options(f, args, kwargs))
    return make

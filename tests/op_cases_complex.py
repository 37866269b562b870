"""Cases of the complex parts (real, imag, conj, abs and angle of complex values): real functions of
real arguments that pass through complex numbers, so that every mode pairing of test_ops.py runs
them (complex inputs themselves are tested in test_complex.py)."""
import numpy as np

import duals.numpy as dnp
from op_cases import Case


def _z(x, y):
    return x + 1j * y


CASES = [
    Case("complex-real", lambda x, y: dnp.real(dnp.exp(_z(x, y)) * (1.0 - 2.0j)),
         ((3,), (3,)), ("real", "exp", "mul", "add")),
    Case("complex-imag", lambda x, y: dnp.imag(dnp.sin(_z(x, y)) * _z(y, x)),
         ((2, 3), (3,)), ("imag", "sin")),
    Case("complex-conj", lambda x, y: dnp.real(dnp.conj(_z(x, y)) * dnp.exp(1j * x)),
         ((3,), (3,)), ("conj",)),
    Case("complex-abs", lambda x, y: dnp.abs(_z(x, y) ** 2 + 0.5), ((3,), (3,)), ("abs",),
         away_from_zero=True),
    Case("complex-angle", lambda x, y: dnp.angle(_z(x, y)), ((3,), (3,)), ("arctan2",),
         away_from_zero=True),
]
CASES += [
    Case("correlate-complex", lambda x, y: dnp.real(dnp.correlate(_z(x, y), _z(y, x) * 1j, "same")),
         ((4,), (4,)), ("convolve", "conj")),
    Case("expm-complex", lambda x, y: dnp.real(dnp.linalg.expm(_z(x, y)) * (1.0 - 0.5j)),
         ((3, 3), (3, 3)), ("expm",), domain=(-1.0, 1.0)),
    Case("fft-imag", lambda x, y: dnp.imag(dnp.fft.fft(x + 1j * y, n=5)), ((2, 4), (4,)), ("dft",)),
    Case("rfft-irfft", lambda x: dnp.fft.irfft(dnp.fft.rfft(x, norm="ortho") * (1.0 + 0.5j), n=6),
         ((2, 5),), ("rfft", "irfft")),
    Case("hfft-of-complex", lambda x, y: np.fft.hfft(_z(x, y), n=7, norm="ortho"), ((2, 4), (4,)),
         ("irfft", "conj")),
    Case("ihfft-imag", lambda x: dnp.imag(np.fft.ihfft(x, axis=0)), ((5, 2),), ("rfft", "conj")),
    Case("emath-sqrt-log-of-negatives", lambda x: dnp.imag(np.emath.sqrt(x - 2.5)) * dnp.real(np.emath.log(x - 2.5)),
         ((4,),), ("sqrt", "log")),
    Case("emath-arcsin-arccos-beyond-one", lambda x: dnp.imag(np.emath.arcsin(1.5 * x + 2.0))
         + dnp.real(np.emath.arccos(1.5 * x + 2.0)), ((4,),), ("arcsin", "arccos")),
    Case("emath-power-logn", lambda x: dnp.real(np.emath.power(x - 2.5, 1.5) + np.emath.logn(3.0, x - 2.5)),
         ((4,),), ("pow", "log")),
    Case("fft2-real", lambda x: dnp.real(dnp.fft.ifft2(x * dnp.fft.fft2(x))), ((3, 4),), ("dft",)),
]

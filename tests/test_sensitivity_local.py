"""duals.sensitivity.local: Jacobian and normalised coefficients against central differences, the
rule at zero outputs and parameters, named parameters and outputs, @njit, the table and the plot."""
import math

import numba
import numpy as np
import pytest

import duals.numpy as dnp
from duals.sensitivity import local
from duals.testing import numerical_jacobian


def peak_model(p):
    """An SIR-like pair of outputs of three parameters."""
    beta, gamma, i0 = p[0], p[1], p[2]
    r0 = beta / gamma
    return dnp.stack([1 - (1 + dnp.log(r0)) / r0 + i0, gamma * dnp.exp(-beta) + i0 ** 2])


def test_jacobian_and_normalized_match_central_differences():
    p = np.array([0.5, 0.2, 0.01])
    res = local(peak_model, p, names=["beta", "gamma", "i0"], output_names=["peak", "decay"])
    numerical = numerical_jacobian(peak_model, (p,), 0)
    np.testing.assert_allclose(res.jacobian, numerical, rtol=1e-7, atol=1e-10)
    value = np.asarray(peak_model(p))
    np.testing.assert_allclose(res.normalized, numerical * p[None, :] / value[:, None], rtol=1e-7)
    np.testing.assert_allclose(res.value, value)
    assert res.parameter_names == ["beta", "gamma", "i0"] and res.output_names == ["peak", "decay"]
    assert not res.undefined.any()


def test_power_law_elasticities_are_the_exponents():
    res = local(lambda p: p["a"] ** 2 * p["b"] ** -0.5 * p["c"], {"a": 1.7, "b": 3.0, "c": 0.2})
    np.testing.assert_allclose(res.normalized, [[2.0, -0.5, 1.0]], rtol=1e-12)
    assert res.parameter_names == ["a", "b", "c"] and res.output_names == ["f"]


def test_zero_outputs_give_nan_and_a_flag_and_zero_parameters_give_zero():
    res = local(lambda p: dnp.stack([p[0] * p[1], p[0] - 2.0, p[0] + p[1]]), np.array([2.0, 0.0]))
    assert np.isnan(res.normalized[0]).all() and np.isnan(res.normalized[1]).all()
    assert res.undefined.tolist() == [[True, True], [True, True], [False, False]]
    np.testing.assert_allclose(res.normalized[2], [1.0, 0.0])   # p_1 = 0: coefficient 0
    assert "nan: f[0], f[1] = 0" in str(res)


def test_dict_outputs_and_array_entries_are_labelled():
    res = local(lambda p: {"sum": dnp.sum(p["w"]) * p["s"], "first": p["w"][0, 1]},
                {"s": 2.0, "w": np.arange(1.0, 5.0).reshape(2, 2)})
    assert res.parameter_names == ["s", "w[0,0]", "w[0,1]", "w[1,0]", "w[1,1]"]
    assert res.output_names == ["sum", "first"]
    np.testing.assert_allclose(res.jacobian, [[10.0, 2, 2, 2, 2], [0, 0, 1, 0, 0]])
    table = res.to_dict()
    assert table["jacobian"]["sum"]["s"] == 10.0 and table["normalized"]["first"]["w[0,1]"] == 1.0
    assert table["outputs"] == {"sum": 20.0, "first": 2.0} and table["undefined"] == []


def test_compiled_model():
    @numba.njit
    def model(p):
        out = np.empty(2, dtype=p.dtype)
        out[0] = p[0] * math.exp(p[1])
        out[1] = p[0] + p[1]
        return out
    p = np.array([2.0, 0.5])
    res = local(model, p)
    np.testing.assert_allclose(res.jacobian, [[math.exp(0.5), 2 * math.exp(0.5)], [1.0, 1.0]])
    np.testing.assert_allclose(res.normalized[0], [1.0, 0.5])


def test_table_lists_every_parameter_and_output():
    text = str(local(peak_model, np.array([0.5, 0.2, 0.01]), names=["beta", "gamma", "i0"]))
    lines = text.splitlines()
    assert lines[0].startswith("local sensitivities at f[0] =")
    assert any(line.startswith("beta") for line in lines) and "df_i/dp_j" in text
    assert sum(line.startswith("gamma") for line in lines) == 2   # normalised and raw tables
    assert repr(local(lambda p: 2.0 * p, 1.0)) == str(local(lambda p: 2.0 * p, 1.0))


def test_plot_draws_labelled_bars_sorted_by_size():
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    res = local(lambda p: p[0] ** 3 * p[1] ** -1 * p[2] ** 0.5, np.array([1.0, 2.0, 3.0]),
                names=["a", "b", "c"])
    ax = res.plot()
    assert [t.get_text() for t in ax.get_yticklabels()] == ["c", "b", "a"]   # |0.5| < |-1| < |3|
    widths = sorted(round(bar.get_width(), 12) for bar in ax.patches)
    assert widths == [-1.0, 0.5, 3.0]
    assert ax.get_xlabel().startswith("normalised sensitivity") and ax.get_ylabel() == "parameter"
    plt.close(ax.figure)
    ax = local(peak_model, np.array([0.5, 0.2, 0.01])).plot(output="f[1]")
    assert "f[1]" in ax.get_title()
    plt.close(ax.figure)


def test_bad_input():
    with pytest.raises(ValueError, match="empty"):
        local(lambda p: p, np.zeros(0))
    with pytest.raises(TypeError, match="list"):
        local(lambda p: [p[0], p[1]], np.ones(2))
    with pytest.raises(TypeError, match="dict"):
        local(numba.njit(lambda p: p), {"a": 1.0})
    with pytest.raises(TypeError, match="complex"):
        local(lambda p: p, np.array([1j]))
    with pytest.raises(ValueError, match=r"output_names has 2 entries but the output has 3; give one "
                                         r"name per entry of the output"):
        local(lambda p: p * 2.0, np.ones(3), names=["a", "b", "c"], output_names=["y0", "y1"])
    with pytest.raises(ValueError, match=r"names has 2 entries but p has 3"):
        local(lambda p: p * 2.0, np.ones(3), names=["a", "b"])

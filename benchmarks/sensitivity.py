"""ODE sensitivities with duals.sensitivity: cost relative to the plain solve, against finite differences.

    python benchmarks/sensitivity.py [--quick] [--json results.json]

Measures, on this machine and single-threaded (``benchmarks/_threads.py``):

* Robertson's stiff kinetics (3 rate constants, BDF, rtol 1e-8): the plain ``solve_ivp``
  (SciPy's finite-difference Jacobian, and the hand-written one), the forward sensitivities of
  ``duals.sensitivity.solve_ivp`` (``@njit`` and Python right-hand sides), and central
  differences over whole solves (2 · 3 solves with the hand-written Jacobian);
* a mass-action network with 20 rate constants (RK45): the same entries;
* the same network with 100 rate constants: the gradient of a least-squares misfit at 10
  observation times by ``adjoint_gradient``, by forward sensitivities and by central
  differences (200 solves).

Every derivative is checked against central differences of tight solves. Entries are timed in
turns (``benchmarks/timing.py``); the table gives the median time and the ratio to the plain
solve. The issue's targets: forward sensitivities at most 3x the plain solve for 3 parameters
and n_param/4 x for 20, the adjoint gradient at most 10x at 100 parameters.
"""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)
import benchmarks._threads  # noqa: E402,F401  (one thread: before NumPy)

import argparse  # noqa: E402
import json  # noqa: E402

import numba  # noqa: E402
import numpy as np  # noqa: E402
import scipy.integrate  # noqa: E402

import duals.numpy as dnp  # noqa: E402
from benchmarks.report import format_time, machine  # noqa: E402
from benchmarks.timing import QUICK, Case, Entry, Settings, run_case  # noqa: E402
from duals import sensitivity  # noqa: E402
from benchmarks._steady import drivers_at_once  # noqa: E402

drivers_at_once()   # the timed repetitions stand for a long loop

# ---------------------------------------------------------------- models


@numba.njit(cache=True)
def robertson(t, y, p):
    out = np.empty_like(y)
    out[0] = -p[0] * y[0] + p[2] * y[1] * y[2]
    out[1] = p[0] * y[0] - p[2] * y[1] * y[2] - p[1] * y[1] ** 2
    out[2] = p[1] * y[1] ** 2
    return out


@numba.njit(cache=True)
def robertson_jacobian(t, y, p):
    out = np.zeros((3, 3))
    out[0, 0], out[0, 1], out[0, 2] = -p[0], p[2] * y[2], p[2] * y[1]
    out[1, 0], out[1, 1], out[1, 2] = p[0], -p[2] * y[2] - 2 * p[1] * y[1], -p[2] * y[1]
    out[2, 1] = 2 * p[1] * y[1]
    return out


def robertson_python(t, y, p):
    return dnp.stack([-p[0] * y[0] + p[2] * y[1] * y[2],
                      p[0] * y[0] - p[2] * y[1] * y[2] - p[1] * y[1] ** 2,
                      p[1] * y[1] ** 2])


ROBERTSON = dict(fun=robertson, python=robertson_python, jac=robertson_jacobian,
                 p=np.array([0.04, 3.0e7, 1.0e4]), y0=np.array([1.0, 0.0, 0.0]),
                 t_span=(0.0, 40.0), t_eval=np.array([0.4, 4.0, 40.0]), method="BDF",
                 rtol=1e-8, atol=1e-12)


def network(n_species, n_reactions, seed):
    """A random mass-action network: reaction r turns species a_r (and b_r, when it is
    bimolecular) into c_r at rate k_r y_a (y_b). Returns the model as a dict of the settings."""
    rng = np.random.default_rng(seed)
    a = rng.integers(n_species, size=n_reactions)
    b = np.where(rng.random(n_reactions) < 0.5, rng.integers(n_species, size=n_reactions), -1)
    c = (a + 1 + rng.integers(n_species - 1, size=n_reactions)) % n_species
    k = np.exp(rng.uniform(np.log(0.05), np.log(2.0), n_reactions))
    y0 = rng.uniform(0.5, 1.5, n_species)

    @numba.njit
    def fun(t, y, p):
        out = np.zeros_like(y)
        for r in range(a.size):
            rate = p[r] * y[a[r]]
            if b[r] >= 0:
                rate = rate * y[b[r]]
            out[a[r]] -= rate
            if b[r] >= 0:
                out[b[r]] -= rate
            out[c[r]] += rate
        return out

    bimolecular = (b >= 0).astype(float)
    b_safe = np.where(b >= 0, b, 0)
    produce = np.zeros((n_species, n_reactions))
    produce[c, np.arange(n_reactions)] += 1.0
    produce[a, np.arange(n_reactions)] -= 1.0
    produce[b_safe, np.arange(n_reactions)] -= bimolecular

    def python(t, y, p):
        rate = p * y[a] * (y[b_safe] * bimolecular + (1.0 - bimolecular))
        return produce @ rate

    t_eval = np.linspace(1.0, 10.0, 10)
    data = 0.9 * y0[:, None] * np.ones(t_eval.size)
    return dict(fun=fun, python=python, jac=None, p=k, y0=y0, t_span=(0.0, 10.0),
                t_eval=t_eval, method="RK45", rtol=1e-8, atol=1e-10, data=data)


# ---------------------------------------------------------------- the computations


def plain_solve(model, p=None, jac=True, rtol=None, atol=None):
    p = model["p"] if p is None else p
    options = {}
    if jac and model["jac"] is not None:
        options["jac"] = model["jac"]
    sol = scipy.integrate.solve_ivp(model["fun"], model["t_span"], model["y0"],
                                    method=model["method"], t_eval=model["t_eval"],
                                    rtol=rtol or model["rtol"], atol=atol or model["atol"],
                                    args=(p,), **options)
    if not sol.success:
        raise RuntimeError(sol.message)
    return sol.y


def forward(model, python=False):
    res = sensitivity.solve_ivp(model["python"] if python else model["fun"], model["t_span"],
                                model["y0"], model["p"], method=model["method"],
                                t_eval=model["t_eval"], rtol=model["rtol"], atol=model["atol"])
    return res.sensitivity


def central_differences(model, relative_step=1e-4, **tight):
    p = model["p"]
    columns = []
    for j in range(p.size):
        e = np.zeros(p.size)
        e[j] = relative_step * p[j]
        columns.append((plain_solve(model, p + e, **tight) - plain_solve(model, p - e, **tight))
                       / (2 * e[j]))
    return np.stack(columns, axis=1)


def misfit(model):
    data = model["data"]
    times = list(model["t_eval"])

    def loss(t, y):
        return dnp.sum((y - data[:, times.index(t)]) ** 2)
    return loss


def adjoint(model, python=False):
    return sensitivity.adjoint_gradient(model["python"] if python else model["fun"],
                                        model["t_span"], model["y0"], model["p"], misfit(model),
                                        t_eval=model["t_eval"], method=model["method"],
                                        rtol=model["rtol"], atol=model["atol"]).gradient


def gradient_from(model, S):
    """The misfit's gradient from sensitivities S (state, parameter, time) of the solution."""
    y = plain_solve(model)
    return np.einsum("it,ijt->j", 2 * (y - model["data"]), S)


def gradient_by_differences(model):
    return gradient_from(model, central_differences(model))


# ---------------------------------------------------------------- cases


def sensitivity_case(name, model):
    m = model["p"].size
    tight = dict(rtol=1e-12, atol=model["atol"] * 1e-3)
    entries = [Entry("scipy", "plain solve" + (" (FD Jacobian)" if model["jac"] else ""),
                     lambda: (lambda: plain_solve(model, jac=False)), rtol=None)]
    if model["jac"] is not None:
        entries.append(Entry("scipy", "plain solve (exact Jacobian)",
                             lambda: (lambda: plain_solve(model)), rtol=None))
    entries += [
        Entry("duals", "sensitivities", lambda: (lambda: forward(model)), rtol=2e-5,
              note="duals.sensitivity.solve_ivp, @njit fun"),
        Entry("duals (Python fun)", "sensitivities", lambda: (lambda: forward(model, True)),
              rtol=2e-5, note="duals.sensitivity.solve_ivp, duals.numpy fun"),
        Entry("central differences", "sensitivities", lambda: (lambda: central_differences(model)),
              rtol=1e-3, note=f"{2 * m} solves at the same tolerance"),
    ]
    return Case("sensitivity", name, "forward", ("scipy", entries[0].task), entries,
                references={"sensitivities": lambda: central_differences(model, **tight)})


def adjoint_case(name, model):
    m = model["p"].size
    tight = dict(rtol=1e-12, atol=model["atol"] * 1e-3)
    entries = [
        Entry("scipy", "plain solve", lambda: (lambda: plain_solve(model)), rtol=None),
        Entry("duals", "gradient", lambda: (lambda: adjoint(model)), rtol=1e-5,
              note="adjoint_gradient, @njit fun"),
        Entry("duals (Python fun)", "gradient", lambda: (lambda: adjoint(model, True)), rtol=1e-5,
              note="adjoint_gradient, duals.numpy fun"),
        Entry("duals forward", "gradient", lambda: (lambda: gradient_from(model, forward(model))),
              rtol=1e-5, note=f"forward sensitivities ({m} lanes), @njit fun"),
        Entry("duals forward (Python fun)", "gradient",
              lambda: (lambda: gradient_from(model, forward(model, True))), rtol=1e-5,
              note=f"forward sensitivities ({m} lanes), duals.numpy fun"),
        Entry("central differences", "gradient", lambda: (lambda: gradient_by_differences(model)),
              rtol=1e-3, note=f"{2 * m} solves"),
    ]
    return Case("sensitivity", name, "adjoint", ("scipy", "plain solve"), entries,
                references={"gradient": lambda: gradient_from(
                    model, central_differences(model, **tight))})


def cases(quick):
    kinetics20 = network(6, 20, seed=1)
    kinetics100 = network(10, 100, seed=2)
    return [sensitivity_case("Robertson, 3 parameters (BDF)", ROBERTSON),
            sensitivity_case("mass-action network, 20 parameters (RK45)", kinetics20),
            adjoint_case("mass-action network, 100 parameters (RK45)", kinetics100)]


def _ratio(records, system, task):
    for r in records:
        if (r["system"], r["task"]) == (system, task) and r["ratio"]:
            return r["ratio"]
    return None


def targets(all_records):
    rows = []
    for case, limit, system, task in (
            ("Robertson, 3 parameters (BDF)", 3.0, "duals", "sensitivities"),
            ("mass-action network, 20 parameters (RK45)", 20 / 4, "duals", "sensitivities"),
            ("mass-action network, 100 parameters (RK45)", 10.0, "duals", "gradient")):
        ratio = _ratio([r for r in all_records if r["case"] == case], system, task)
        met = "–" if ratio is None else ("met" if ratio <= limit else "NOT met")
        rows.append(f"| {case} | {task} (@njit fun) | ≤ {limit:g}× | "
                    f"{'–' if ratio is None else f'{ratio:.2f}×'} | {met} |")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="one turn per entry (CI)")
    ap.add_argument("--json", metavar="PATH", help="write the raw records")
    args = ap.parse_args(argv)
    settings = QUICK if args.quick else Settings(repeats=5, min_time=0.05, entry_budget=4.0)
    records = []
    print(f"machine: {machine()}\n")
    print("| case | system | task | median | × plain | first call | check | note |")
    print("|---|---|---|---|---|---|---|---|")
    for case in cases(args.quick):
        for r in run_case(case, settings):
            records.append(r)
            ratio = f"{r['ratio']:.2f}" if r.get("ratio") else "–"
            check = ("✓" if r["check"] == "ok" else f"✗ ({r['rel_err']:.1e})"
                     if r["check"] == "MISMATCH" else "n/c")
            note = r["note"] if r["status"] == "ok" else r["status"]
            print(f"| {case.name} | {r['system']} | {r['task']} | {format_time(r['median_s'])} | "
                  f"{ratio} | {format_time(r['first_call_s'])} | {check} | {note} |", flush=True)
    print("\n| target | what | aim | measured | |\n|---|---|---|---|---|")
    print("\n".join(targets(records)))
    if args.json:
        with open(args.json, "w") as out:
            json.dump({"machine": machine(), "records": records}, out, indent=1, default=str)
    wrong = [r for r in records if r["check"] == "MISMATCH" or r["status"] != "ok"]
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())

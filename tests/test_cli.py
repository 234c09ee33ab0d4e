"""``python -m dpcore`` run as a user runs it: in a subprocess, checking output and exit status."""

from __future__ import annotations

import json
import math
import subprocess
import sys
import textwrap
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import ClassVar  # module level: dataclasses resolves string annotations here

import pytest

import dpcore
from dpcore.cli import main


def run(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dpcore", *args], capture_output=True, text=True, cwd=cwd, timeout=120)


def run_json(*args: str, cwd: Path | None = None, status: int = 0) -> dict:
    proc = run(*args, "--json", cwd=cwd)
    assert proc.returncode == status, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout)


def needs(*names: str) -> None:
    missing = [n for n in names if not hasattr(dpcore, n)]
    if missing:  # pragma: no cover - only while another module is still a placeholder
        pytest.skip(f"dpcore does not provide {missing} yet")


# --------------------------------------------------------------------------- help
def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    proc = run("--help")
    assert proc.returncode == 0, proc.stderr
    assert "examples:" in proc.stdout and "python -m dpcore calibrate" in proc.stdout
    for cmd in ("calibrate", "account", "audit"):  # the subcommands' help, in-process (same parser)
        with pytest.raises(SystemExit) as exc:
            main([cmd, "--help"])
        assert exc.value.code == 0
        out = capsys.readouterr().out
        assert "examples:" in out and f"python -m dpcore {cmd}" in out


def test_no_command_is_a_usage_error() -> None:
    proc = run()
    assert proc.returncode == 2
    # one line (issue 15: every failure is one line on stderr), pointing to the help that shows the usage
    assert proc.stderr.count("\n") == 1 and "--help" in proc.stderr and "Traceback" not in proc.stderr
    assert "calibrate,account,audit" in proc.stderr


# --------------------------------------------------------------------------- calibrate
def test_calibrate_table_and_json() -> None:
    needs("classic_gaussian_sigma", "analytic_gaussian_sigma", "gaussian_delta")
    proc = run("calibrate", "--sensitivity", "1", "--epsilon", "0.5", "--delta", "1e-5")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert any(line.startswith("Laplace") and " 2.0 " in line for line in lines)
    assert any(line.startswith("Gaussian (analytic)") for line in lines)

    out = run_json("calibrate", "--sensitivity", "2", "--epsilon", "0.5", "--delta", "1e-5")
    assert out["laplace_scale"] == 4.0  # b = sensitivity / epsilon, exactly
    classic = 2 * math.sqrt(2 * math.log(1.25 / 1e-5)) / 0.5  # Dwork & Roth Thm A.1
    assert out["classic_gaussian_sigma"] == pytest.approx(classic, rel=1e-12)
    sigma = out["analytic_gaussian_sigma"]
    # the analytic sigma meets delta (almost) exactly, and is smaller than the classic one
    achieved = dpcore.gaussian_delta(sigma, 2.0, 0.5)
    assert achieved <= 1e-5 * (1 + 1e-9) and achieved >= 1e-5 * (1 - 1e-6)
    assert sigma < classic


def test_calibrate_refuses_classic_above_one_but_gives_analytic() -> None:
    needs("analytic_gaussian_sigma")
    out = run_json("calibrate", "--epsilon", "3", "--delta", "1e-9")
    assert out["classic_gaussian_sigma"] is None and "epsilon" in out["classic_gaussian_sigma_refused"]
    assert out["analytic_gaussian_sigma"] > 0
    proc = run("calibrate", "--epsilon", "3", "--delta", "1e-9")
    assert "n/a" in proc.stdout


# --------------------------------------------------------------------------- account
def test_account_gaussian_matches_exact_reference_values() -> None:
    needs("RdpAccountant", "exact_gaussian_composition_epsilon")
    # exact reference values for delta = 1e-5 (issue 6): sigma 1, k 10 -> 17.86; sigma 5, k 100 -> 9.997
    for sigma, k, exact in (("1", "10", 17.86), ("5", "100", 9.997)):
        out = run_json("account", "--mechanism", "gaussian", "--sigma", sigma, "--count", k, "--delta", "1e-5")
        assert out["exact_epsilon"] == pytest.approx(exact, abs=6e-3)
        assert out["rdp_epsilon"] >= out["exact_epsilon"]  # RDP is an upper bound on the exact epsilon
        assert out["rdp_order"] > 1
    proc = run("account", "--mechanism", "gaussian", "--sigma", "1", "--count", "10", "--delta", "1e-5")
    assert proc.returncode == 0 and "RDP accountant" in proc.stdout and "exact" in proc.stdout


def test_account_laplace() -> None:
    needs("RdpAccountant")
    out = run_json("account", "--mechanism", "laplace", "--scale", "10", "--count", "50", "--delta", "1e-6")
    assert out["basic_composition_epsilon"] == pytest.approx(5.0, rel=1e-15)
    # for many releases RDP (at delta > 0) beats basic composition
    assert 0 < out["rdp_epsilon"] < out["basic_composition_epsilon"]


# --------------------------------------------------------------------------- audit
def test_audit_builtin_laplace_valid_and_powerful() -> None:
    needs("audit_epsilon", "LaplaceMechanism")
    out = run_json("audit", "--mechanism", "laplace", "--epsilon", "1", "--samples", "1000000", "--seed", "0")
    assert 0.9 <= out["epsilon_lower"] <= 1.0
    assert out["violation"] is False


def test_audit_detects_the_seed_stray_factor_two() -> None:
    needs("audit_epsilon", "ReleaseOutputs")
    out = run_json(
        "audit",
        "--mechanism",
        "laplace-stray-factor-two",
        "--epsilon",
        "1",
        "--samples",
        "500000",
        "--seed",
        "0",
        status=1,
    )
    assert out["violation"] is True and out["epsilon_lower"] > 1.0


def test_audit_user_callable(tmp_path: Path) -> None:
    needs("audit_epsilon")
    (tmp_path / "mymechs.py").write_text(
        textwrap.dedent("""
        import numpy as np

        def half_scale(data, size, rng):
            # Laplace noise of scale 0.5: really 2-DP for sensitivity 1
            return float(data) + rng.laplace(0.0, 0.5, size)
    """)
    )

    def audit(epsilon: str, status: int) -> dict:
        argv = ["--callable", "mymechs:half_scale", "--d", "0", "--d-prime", "1", "--epsilon", epsilon]
        return run_json("audit", *argv, "--samples", "300000", "--seed", "3", cwd=tmp_path, status=status)

    out = audit("1", status=1)
    assert out["violation"] is True and out["epsilon_lower"] > 1.0
    out = audit("2", status=0)
    assert out["violation"] is False and out["epsilon_lower"] <= 2.0


# --------------------------------------------------------------------------- bad input
BAD_INPUTS = [
    (["calibrate", "--epsilon", "0"], "--epsilon"),
    (["calibrate", "--epsilon", "-1"], "--epsilon"),
    (["calibrate", "--epsilon", "nan"], "--epsilon"),
    (["calibrate", "--epsilon", "inf"], "--epsilon"),
    (["calibrate", "--epsilon", "1", "--sensitivity", "0"], "--sensitivity"),
    (["calibrate", "--epsilon", "1", "--delta", "1"], "--delta"),
    (["calibrate", "--epsilon", "1", "--delta", "0"], "--delta"),
    (["calibrate", "--epsilon", "abc"], "--epsilon"),
    (["account", "--mechanism", "gaussian", "--count", "10", "--delta", "1e-5"], "--sigma"),
    (["account", "--mechanism", "gaussian", "--sigma", "1", "--count", "0", "--delta", "1e-5"], "--count"),
    (["account", "--mechanism", "laplace", "--count", "3", "--delta", "1e-5"], "--scale"),
    (["account", "--mechanism", "laplace", "--scale", "-2", "--count", "3", "--delta", "1e-5"], "--scale"),
    (["account", "--mechanism", "poisson", "--count", "3", "--delta", "1e-5"], "--mechanism"),
    (
        ["account", "--mechanism", "laplace", "--sigma", "1", "--scale", "1", "--count", "3", "--delta", "1e-5"],
        "--sigma",
    ),
    (["account", "--mechanism", "randomized-response", "--count", "3", "--delta", "1e-5"], "--epsilon0"),
    (
        [
            "account",
            "--mechanism",
            "discrete-laplace",
            "--scale",
            "2",
            "--sensitivity",
            "1.5",
            "--count",
            "3",
            "--delta",
            "1e-5",
        ],
        "--sensitivity",
    ),
    (["audit", "--mechanism", "randomized-response", "--epsilon", "1", "--sensitivity", "2"], "--sensitivity"),
    (["audit", "--mechanism", "laplace"], "--epsilon"),
    (["audit", "--mechanism", "discrete-gaussian", "--epsilon", "1"], "--mechanism"),
    (["audit", "--mechanism", "gaussian", "--epsilon", "1"], "--delta"),
    (["audit", "--epsilon", "1", "--samples", "1"], "--samples"),
    (["audit", "--epsilon", "1", "--confidence", "1.5"], "--confidence"),
    (["audit", "--callable", "no_such_module_xyz:f"], "no_such_module_xyz"),
    (["audit", "--callable", "json:no_such_function"], "no_such_function"),
    (["audit", "--callable", "not-a-spec"], "module:function"),
    (["audit", "--callable", "json:dumps", "--d", "{oops"], "--d"),
]


@pytest.mark.parametrize(("argv", "needle"), BAD_INPUTS, ids=[" ".join(a) for a, _ in BAD_INPUTS])
def test_bad_input_exits_2_with_a_message(argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]) -> None:
    # in-process for speed (the same main() that python -m dpcore runs); argparse's own errors exit via SystemExit
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    captured = capsys.readouterr()
    assert status == 2, (argv, status, captured)
    assert "error" in captured.err and needle in captured.err, captured.err
    assert captured.out == ""


def test_bad_input_in_a_subprocess_has_no_traceback() -> None:
    cases = [BAD_INPUTS[2], BAD_INPUTS[9], BAD_INPUTS[17]]  # a NaN, a zero count, an unimportable callable
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = list(pool.map(lambda case: run(*case[0]), cases))
    for (argv, needle), proc in zip(cases, procs, strict=True):
        assert proc.returncode == 2, (argv, proc.returncode, proc.stdout, proc.stderr)
        assert "Traceback" not in proc.stderr and needle in proc.stderr, (argv, proc.stderr)
        assert proc.stdout == ""


def test_a_mechanism_that_raises_is_reported_not_crashed(tmp_path: Path) -> None:
    needs("audit_epsilon")
    (tmp_path / "broken.py").write_text("def mech(data, size, rng):\n    raise RuntimeError('boom')\n")
    proc = run("audit", "--callable", "broken:mech", "--samples", "1000", cwd=tmp_path)
    assert proc.returncode == 2 and "boom" in proc.stderr and "Traceback" not in proc.stderr


# --------------------------------------------------------------------------- the registry


def test_account_speaks_every_mechanism_class(capsys: pytest.CaptureFixture[str]) -> None:
    # the CLI is a thin layer over the mechanism objects: the same numbers as the library, for each registered class
    cases = {
        "laplace": (["--scale", "3"], dpcore.LaplaceMechanism(3.0)),
        "gaussian": (["--sigma", "2", "--sensitivity", "1.5"], dpcore.GaussianMechanism(2.0, 1.5)),
        "discrete-laplace": (["--scale", "2.5", "--sensitivity", "2"], dpcore.DiscreteLaplaceMechanism(2.5, 2)),
        "randomized-response": (["--epsilon0", "0.7"], dpcore.RandomizedResponse(0.7)),
        "discrete-gaussian": (["--sigma2", "2.25", "--sensitivity", "2"], dpcore.DiscreteGaussianMechanism(2.25, 2)),
        "subsampled-gaussian": (
            ["--sigma", "1.5", "--sampling-rate", "0.1"],
            dpcore.SubsampledGaussianMechanism(1.5, 0.1),
        ),
    }
    assert set(cases) == set(dpcore.mechanism_classes())
    for name, (opts, mech) in cases.items():
        assert main(["account", "--mechanism", name, *opts, "--count", "7", "--delta", "1e-6", "--json"]) == 0
        out = json.loads(capsys.readouterr().out)
        assert out["rdp_epsilon"] == dpcore.RdpAccountant().compose(mech, 7).epsilon(1e-6)
        if name in ("discrete-gaussian", "subsampled-gaussian"):  # no pure epsilon, no closed-form composition
            assert "basic_composition_epsilon" not in out and "exact_epsilon" not in out
        elif mech.pure_epsilon is not None:  # basic composition: k times the pure epsilon, computed here by hand
            assert out["basic_composition_epsilon"] == pytest.approx(
                7 * {"laplace": 1 / 3, "discrete-laplace": 0.8, "randomized-response": 0.7}[name], rel=1e-15
            )
        else:  # 7 Gaussians (sigma 2, sensitivity 1.5) = one Gaussian of sensitivity 1.5 sqrt 7
            assert out["exact_epsilon"] == dpcore.gaussian_epsilon(2.0, 1e-6, 1.5 * math.sqrt(7))


def test_a_new_mechanism_class_is_on_the_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # adding a mechanism means writing one class: listed in dpcore.mechanisms.__all__, it is accounted by the CLI
    from dataclasses import dataclass

    import dpcore.mechanisms as m

    @dataclass(frozen=True)
    class HalfGaussian(m.Mechanism):
        name: ClassVar[str] = "toy-gaussian"
        summary: ClassVar[str] = "a Gaussian written as a new class"
        width: float

        def sample(self, value, size=None, rng=None):  # type: ignore[no-untyped-def]
            return dpcore.GaussianMechanism(self.width).sample(value, size, rng)

        def rdp(self, orders):  # type: ignore[no-untyped-def]
            return dpcore.gaussian_rdp(orders, self.width)

    monkeypatch.setattr(m, "HalfGaussian", HalfGaussian, raising=False)
    monkeypatch.setattr(m, "__all__", [*m.__all__, "HalfGaussian"])
    assert (
        main(["account", "--mechanism", "toy-gaussian", "--width", "2", "--count", "5", "--delta", "1e-5", "--json"])
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["width"] == 2.0
    assert out["rdp_epsilon"] == dpcore.RdpAccountant().compose(dpcore.GaussianMechanism(2.0), 5).epsilon(1e-5)
    assert main(["account", "--mechanism", "toy-gaussian", "--count", "5", "--delta", "1e-5"]) == 2
    assert "--width" in capsys.readouterr().err


def test_audit_builtins_are_the_registry_calibrated(capsys: pytest.CaptureFixture[str]) -> None:
    for name in ("discrete-laplace", "randomized-response"):
        assert (
            main(["audit", "--mechanism", name, "--epsilon", "1", "--samples", "20000", "--seed", "3", "--json"]) == 0
        )
        out = json.loads(capsys.readouterr().out)
        assert out["d"] == 0 and out["d_prime"] == 1 and not out["violation"]


def test_account_reports_the_tightest_certified_epsilon_and_its_method(capsys: pytest.CaptureFixture[str]) -> None:
    # issue 14's contract: epsilon (tightest certified upper bound), epsilon_lower, method, rdp_epsilon beside them
    argv = ["account", "--mechanism", "subsampled-gaussian", "--sigma", "0.8", "--sampling-rate", "0.01"]
    assert main([*argv, "--count", "1000", "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    mech = dpcore.SubsampledGaussianMechanism(0.8, 0.01)
    lower, upper = dpcore.PldAccountant().compose(mech, 1000).epsilon_bracket(1e-5)
    assert out["method"] == "pld" and out["epsilon"] == upper and out["epsilon_lower"] == lower
    assert out["rdp_epsilon"] == dpcore.RdpAccountant().compose(mech, 1000).epsilon(1e-5) > out["epsilon"]
    assert 3.13977 - 1e-3 <= out["epsilon"] <= 3.14226 * 1.001  # prv-accountant's bracket (issue 14), widened 1e-3
    # the Gaussian composes exactly: that is the answer, and its own lower end
    assert (
        main(["account", "--mechanism", "gaussian", "--sigma", "1", "--count", "4", "--delta", "1e-5", "--json"]) == 0
    )
    g = json.loads(capsys.readouterr().out)
    assert g["method"] == "exact" and g["epsilon"] == g["epsilon_lower"] == g["exact_epsilon"] <= g["pld_epsilon"]
    # pure DP mechanisms: basic composition is certified too, and wins when k is small
    assert main(["account", "--mechanism", "laplace", "--scale", "1", "--count", "1", "--delta", "1e-5", "--json"]) == 0
    lap = json.loads(capsys.readouterr().out)
    assert lap["epsilon"] == min(lap["basic_composition_epsilon"], lap["pld_epsilon"], lap["rdp_epsilon"])
    for bad, word in [(["--sampling-rate", "1.5"], "--sampling-rate"), (["--sampling-rate", "0"], "--sampling-rate")]:
        code = main(
            ["account", "--mechanism", "subsampled-gaussian", "--sigma", "1", *bad, "--count", "3", "--delta", "1e-5"]
        )
        assert code == 2 and word in capsys.readouterr().err


# --------------------------------------------------------------------------- issue 15: every failure is one line
def _status(argv: list[str]) -> int:
    try:
        return main(argv)
    except SystemExit as exc:  # argparse's own errors (through _Parser.error)
        return int(exc.code or 0)


def _one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str], *needles: str) -> str:
    status = _status(argv)
    out, err = capsys.readouterr()
    assert status == 2, (argv, status, out, err)
    assert out == "" and err.count("\n") == 1 and err.endswith("\n"), err
    assert "Traceback" not in err and "Warning:" not in err.split("error:", 1)[0], err
    for needle in needles:
        assert needle in err, (needle, err)
    return err


ISSUE_15_CASES = [
    # the issue's examples: a traceback with exit 1 before (--sigma 1e300 now has its right answer, epsilon 0:
    # test_sigma_1e300_in_a_subprocess_has_no_traceback)
    (["account", "--mechanism", "gaussian", "--sigma", "1", "--count", "10" + "0" * 20, "--delta", "1e-5"], "--count"),
    # "math domain error" / a library parameter for a tiny epsilon: now the options and the rule
    (["calibrate", "--epsilon", "1e-310"], "--epsilon"),
    (["calibrate", "--epsilon", "5e-324", "--delta", "1e-5"], "--epsilon"),
    (["calibrate", "--sensitivity", "1e-300", "--epsilon", "1e300"], "--sensitivity"),
    (["audit", "--epsilon", "1e-320", "--samples", "100"], "--epsilon"),
    # --d true was the number 1
    (["audit", "--mechanism", "laplace", "--epsilon", "1", "--d", "true", "--samples", "100"], "--d"),
    (["audit", "--mechanism", "laplace", "--epsilon", "1", "--d-prime", "[1, null]", "--samples", "100"], "--d-prime"),
    (["audit", "--mechanism", "laplace", "--epsilon", "1", "--d", "NaN", "--samples", "100"], "--d"),
    (["audit", "--mechanism", "laplace", "--epsilon", "1", "--d", "1e400", "--samples", "100"], "--d"),
    (["audit", "--mechanism", "laplace", "--epsilon", "1", "--d", "1" * 5000, "--samples", "100"], "--d"),
    (["audit", "--epsilon", "1", "--samples", "1" * 100], "--samples"),
    (["audit", "--epsilon", "1", "--seed", "-1"], "--seed"),
    (["calibrate", "--epsilon", "inf"], "--epsilon"),
    (["calibrate", "--epsilon", "1e400"], "--epsilon"),
    (["calibrate", "--epsilon", "0x10"], "--epsilon"),
    (["account", "--mechanism", "laplace", "--scale", "1", "--count", "2.5", "--delta", "1e-5"], "--count"),
    (["account", "--mechanism", "laplace", "--scale", "1", "--count", "True", "--delta", "1e-5"], "--count"),
    ([], "--help"),
    (["calibrate"], "--epsilon"),
]


@pytest.mark.parametrize(("argv", "needle"), ISSUE_15_CASES, ids=[" ".join(a)[:60] for a, _ in ISSUE_15_CASES])
def test_issue_15_failures_are_one_line_with_status_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    _one_line_error(capsys, argv, needle)


def test_sigma_1e300_in_a_subprocess_has_no_traceback() -> None:
    # the right answer since the Gaussian profile is computed at every scale (issue 15): noise 1e300 gives
    # delta(0) = erf(1/(2 sqrt(2) 1e300)) < 1e-5, so epsilon is exactly 0; no traceback, no warning
    proc = run("account", "--mechanism", "gaussian", "--sigma", "1e300", "--count", "10", "--delta", "1e-5", "--json")
    assert proc.returncode == 0 and proc.stderr == "", (proc.returncode, proc.stderr)
    out = json.loads(proc.stdout)
    assert out["epsilon"] == 0.0 and out["exact_epsilon"] == 0.0


def test_json_never_contains_infinity_or_nan(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dpcore.cli as cli

    # an infinite value is written as the string "inf" (documented); json.dumps raised ValueError before
    monkeypatch.setattr(cli, "cmd_calibrate", lambda args: ({"eps": math.inf, "low": [-math.inf, 1.0]}, "table"))
    assert main(["calibrate", "--epsilon", "1", "--json"]) == 0
    text = capsys.readouterr().out
    assert "Infinity" not in text and json.loads(text) == {"eps": "inf", "low": ["-inf", 1.0]}
    # a NaN is never a result: refused in one line, in the table and in JSON
    monkeypatch.setattr(cli, "cmd_calibrate", lambda args: ({"eps": math.nan}, "table"))
    for extra in ([], ["--json"]):
        _one_line_error(capsys, ["calibrate", "--epsilon", "1", *extra], "NaN", "eps")


def test_warnings_are_never_printed_and_a_floating_point_warning_fails(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    import dpcore.cli as cli

    def warns_then_refuses(args):  # type: ignore[no-untyped-def]
        np.exp(np.array([1000.0]))  # RuntimeWarning: overflow
        raise ValueError("epsilon must be > 0; got 0")

    def warns_then_answers(args):  # type: ignore[no-untyped-def]
        return {"x": float(np.exp(np.array([1000.0]))[0] * 0.0 + 1.0)}, "table"

    monkeypatch.setattr(cli, "cmd_calibrate", warns_then_refuses)
    err = _one_line_error(capsys, ["calibrate", "--epsilon", "1"], "epsilon must be > 0")
    assert "RuntimeWarning" not in err and "overflow" not in err  # the warning was not printed before the error
    monkeypatch.setattr(cli, "cmd_calibrate", warns_then_answers)
    _one_line_error(capsys, ["calibrate", "--epsilon", "1"], "RuntimeWarning", "overflow")


def test_an_unexpected_library_exception_is_one_line_naming_where(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import dpcore.cli as cli

    def crashes(args):  # type: ignore[no-untyped-def]
        return {"x": 1 / 0}, ""

    monkeypatch.setattr(cli, "cmd_calibrate", crashes)
    _one_line_error(capsys, ["calibrate", "--epsilon", "0.5"], "ZeroDivisionError", "internal error", "--epsilon 0.5")


def test_the_pld_accountant_beyond_its_grid_does_not_sink_the_others(capsys: pytest.CaptureFixture[str]) -> None:
    # Laplace of scale 1e-10: the PLD grid refuses (too many cells); RDP and basic composition still answer
    argv = ["account", "--mechanism", "laplace", "--scale", "1e-10", "--count", "3", "--delta", "1e-5", "--json"]
    assert main(argv) == 0, capsys.readouterr().err
    out = json.loads(capsys.readouterr().out)
    assert "pld_epsilon" not in out and "too fine" in out["pld_refused"]
    assert out["basic_composition_epsilon"] == pytest.approx(3e10, rel=1e-12)
    assert out["epsilon"] == min(out["basic_composition_epsilon"], out["rdp_epsilon"])


def test_valid_data_options_still_work(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["audit", "--mechanism", "laplace", "--epsilon", "1", "--samples", "2000", "--seed", "1", "--json"]
    assert main([*argv, "--d", "0", "--d-prime", "1.0"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["d"] == 0 and out["d_prime"] == 1.0


def test_json_keeps_numpy_integers_as_integers(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import numpy as np

    import dpcore.cli as cli

    monkeypatch.setattr(cli, "cmd_calibrate", lambda args: ({"k": np.int64(3), "x": np.float64(0.5)}, "table"))
    assert main(["calibrate", "--epsilon", "1", "--json"]) == 0
    assert capsys.readouterr().out.replace(" ", "").replace("\n", "") == '{"k":3,"x":0.5}'


def test_audit_samples_beyond_the_limit_are_refused_with_the_option_to_raise_it(capsys):
    from dpcore import cli

    assert cli.main(["audit", "--mechanism", "laplace", "--epsilon", "1", "--samples", str(10**12)]) == 2
    err = capsys.readouterr().err
    assert "--max-samples" in err and err.count("\n") == 1
    args = ["audit", "--mechanism", "laplace", "--epsilon", "1", "--samples", "3000", "--max-samples", "3000"]
    assert cli.main([*args, "--seed", "1", "--json"]) == 0


def test_calibrate_note_names_the_reason_when_the_classic_sigma_is_refused_below_one(monkeypatch, capsys) -> None:
    # below epsilon = 1 the theorem applies: a refusal there (sigma beyond the double range) is not "epsilon < 1"
    def refuse(*args: object) -> float:
        raise ValueError("sigma = inf from these inputs is not a positive finite normal double")

    monkeypatch.setattr(dpcore, "classic_gaussian_sigma", refuse)
    assert main(["calibrate", "--epsilon", "0.5", "--delta", "1e-5"]) == 0
    out = capsys.readouterr().out
    assert "sigma = inf" in out and "needs epsilon < 1" not in out


# --------------------------------------------------------------------------- issue 31: composed calibration
def test_calibrate_composed_subsampled_gaussian_json(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["calibrate", "--mechanism", "subsampled-gaussian", "--sampling-rate", "0.004267", "--count", "14062"]
    assert main([*argv, "--epsilon", "3", "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] <= 3.0 < out["epsilon_below_lower"]
    assert out["sigma_below"] >= out["sigma"] * (1 - 1e-3) and out["method"] == "pld"
    assert 0.96 < out["sigma"] < 0.98 and "Poisson" in out["assumption"]


def test_calibrate_composed_gaussian_and_laplace_tables(capsys: pytest.CaptureFixture[str]) -> None:
    import dpcore

    assert main(["calibrate", "--mechanism", "gaussian", "--count", "100", "--epsilon", "1", "--delta", "1e-5"]) == 0
    text = capsys.readouterr().out
    sigma = dpcore.calibrate_noise("gaussian", epsilon=1.0, delta=1e-5, count=100).noise
    assert repr(sigma) in text and "exact-gaussian" in text
    argv = ["calibrate", "--mechanism", "laplace", "--count", "10", "--epsilon", "1", "--delta", "1e-6", "--json"]
    assert main(argv) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "exact-laplace" and out["epsilon"] <= 1.0 and "scale" in out


def test_the_one_release_calibrate_is_unchanged(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calibrate", "--epsilon", "0.5", "--delta", "1e-5", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["laplace_scale"] == 2.0 and "analytic_gaussian_sigma" in out and "sigma" not in out


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["calibrate", "--count", "3", "--epsilon", "1"], "--count"),
        (["calibrate", "--mechanism", "gaussian", "--count", "3", "--epsilon", "1"], "--delta"),
        (["calibrate", "--mechanism", "poisson", "--epsilon", "1", "--delta", "1e-5"], "--mechanism"),
        (["calibrate", "--mechanism", "subsampled-gaussian", "--epsilon", "1", "--delta", "1e-5"], "--sampling-rate"),
        (
            ["calibrate", "--mechanism", "gaussian", "--sampling-rate", "0.1", "--epsilon", "1", "--delta", "1e-5"],
            "--sampling-rate",
        ),
        (["calibrate", "--mechanism", "gaussian", "--epsilon", "1", "--delta", "1e-5", "--rtol", "2"], "--rtol"),
        (["calibrate", "--mechanism", "laplace", "--epsilon", "1", "--delta", "1e-12"], "--delta"),
        (["calibrate", "--mechanism", "laplace", "--epsilon", "1e-3", "--delta", "1e-5"], "--epsilon"),
        (
            [
                "account",
                "--mechanism",
                "gaussian",
                "--sigma",
                "1",
                "--count",
                "10",
                "--delta",
                "1e-5",
                "--checkpoints",
                "0",
            ],
            "--checkpoints",
        ),
        (
            [
                "account",
                "--mechanism",
                "gaussian",
                "--sigma",
                "1",
                "--count",
                "10",
                "--delta",
                "1e-5",
                "--checkpoints",
                "11",
            ],
            "--checkpoints",
        ),
        (
            [
                "account",
                "--mechanism",
                "gaussian",
                "--sigma",
                "1",
                "--count",
                "9",
                "--delta",
                "1e-5",
                "--checkpoints",
                "a",
            ],
            "--checkpoints",
        ),
    ],
)
def test_composed_calibrate_and_checkpoints_bad_input_one_line_exit_2(
    argv: list[str], needle: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err.count("\n") == 1 and needle in captured.err


def test_account_checkpoints(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["account", "--mechanism", "subsampled-gaussian", "--sigma", "1.1", "--sampling-rate", "0.004267"]
    assert main([*argv, "--count", "14062", "--delta", "1e-5", "--checkpoints", "235,2344", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    steps = [c["step"] for c in out["checkpoints"]]
    assert steps == [235, 2344, 14062]
    assert all(c["epsilon_lower"] <= c["epsilon"] for c in out["checkpoints"])
    assert out["checkpoints"][-1]["epsilon"] == pytest.approx(out["pld_epsilon"], rel=1e-12)


def test_help_states_the_poisson_assumption(capsys: pytest.CaptureFixture[str]) -> None:
    for cmd in ("calibrate", "account"):
        with pytest.raises(SystemExit):
            main([cmd, "--help"])
        text = " ".join(capsys.readouterr().out.split())
        assert "Poisson subsampling" in text and "Chua et al. 2024" in text and "fixed-size batches" in text

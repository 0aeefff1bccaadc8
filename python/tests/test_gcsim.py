"""gcsim's Python module against the gcsim binary built from the same tree.

The binary is target/release/gcsim (GCSIM_BIN overrides): the module's
results must equal the binary's JSON for the same arguments, and its errors
the binary's messages with flags written as keywords.
"""

import json
import math
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

import gcsim

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(os.environ.get("GCSIM_BIN", ROOT / "target" / "release" / "gcsim"))


def cli(*args):
    """The binary's JSON report for `args` (its `--format json`)."""
    out = subprocess.run([str(BIN), *args, "--format", "json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


def cli_error(*args):
    """The binary's error message for `args`: stderr's first line without `error: `/`Error: `."""
    out = subprocess.run([str(BIN), *args], capture_output=True, text=True)
    assert out.returncode == 2, out
    first = out.stderr.splitlines()[0]
    for prefix in ("error: ", "Error: "):
        if first.startswith(prefix):
            return first[len(prefix):]
    return first


def inf_as_float(rows):
    return [{k: math.inf if v == "inf" else (-math.inf if v == "-inf" else v) for k, v in r.items()} for r in rows]


def same(result, report):
    assert result.config == report["config"]
    assert result.rows == inf_as_float(report["rows"])


@pytest.mark.parametrize(
    "kwargs,argv",
    [
        (
            dict(n=100, scheme="crc", s=20, dist="exp:rate=1", load_model="fixed", trials=20000, seed=3),
            ["run", "--n", "100", "--scheme", "crc", "--s", "20", "--dist", "exp:rate=1",
             "--load-model", "fixed", "--trials", "20000", "--seed", "3"],
        ),
        (
            dict(n=20, scheme="mds", k=15, dist="shifted-exp:shift=1,rate=2", load_model="scaled", trials=5000),
            ["run", "--n", "20", "--scheme", "mds", "--k", "15", "--dist", "shifted-exp:shift=1,rate=2",
             "--load-model", "scaled", "--trials", "5000"],
        ),
        (
            dict(n=12, scheme="crc", s=2, load_model="affine", unit_time=0.145, comm_time=0.5, trials=3000),
            ["run", "--n", "12", "--scheme", "crc", "--s", "2", "--load-model", "affine", "--unit-time", "0.145",
             "--comm-time", "0.5", "--trials", "3000"],
        ),
    ],
)
def test_run_equals_the_binary(kwargs, argv):
    same(gcsim.run(**kwargs), cli(*argv))


def test_sweep_equals_the_binary_with_ranges_and_lists():
    r = gcsim.sweep(n=30, s=range(0, 6), scheme=["crc", "frc", "uncoded"], trials=4000, seed=1)
    same(r, cli("sweep", "--n", "30", "--s", "0..5", "--scheme", "crc,frc,uncoded", "--trials", "4000", "--seed", "1"))
    assert [row["scheme"] for row in r.rows][:2] == ["crc", "crc"]
    assert r.config["s"] == "0..5"


def test_repeated_flag_takes_a_list():
    r = gcsim.sweep(workers=["8:exp:rate=1", "2:exp:rate=0.2"], s=[0, 2], trials=3000)
    same(r, cli("sweep", "--workers", "8:exp:rate=1", "--workers", "2:exp:rate=0.2", "--s", "0,2", "--trials", "3000"))
    assert r.rows[0]["n"] == 10


def test_switches():
    same(gcsim.analytic(n=100, s=[0, 20, 50]), cli("sweep", "--n", "100", "--s", "0,20,50", "--analytic"))
    same(gcsim.run(n=10, scheme="crc", s=2, trials=2000, shuffle_placement=False),
         cli("run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "2000"))


def test_the_readme_number():
    r = gcsim.sweep(n=100, s=[0, 20, 50], trials=100000)
    assert abs(r.rows[1]["speedup"] - 3.26) < 0.01
    exact = gcsim.analytic(n=100, s=[0, 20, 50])
    assert exact.config["mode"] == "analytic"
    assert abs(exact.rows[1]["mean"] - 1.590) < 0.001


def test_empty_fields_are_none_and_inf_is_a_float():
    r = gcsim.run(n=10, scheme="uncoded", dist="pareto:scale=1,shape=0.5", trials=1000)
    row = r.rows[0]
    assert row["m"] is None and row["std_err"] is None
    assert row["mean"] == math.inf and isinstance(row["mean"], float)
    assert row["analytic_mean"] == math.inf
    same(r, cli("run", "--n", "10", "--scheme", "uncoded", "--dist", "pareto:scale=1,shape=0.5", "--trials", "1000"))


def test_rows_have_the_csv_fields_in_order():
    r = gcsim.run(n=10, scheme="crc", s=2, trials=1000)
    out = subprocess.run([str(BIN), "run", "--n", "10", "--scheme", "crc", "--s", "2", "--trials", "1000", "--format", "csv"],
                         capture_output=True, text=True, check=True)
    assert list(r.rows[0]) == out.stdout.splitlines()[0].split(",")


def test_plan_and_train_equal_the_binary():
    same(gcsim.plan(n=20, objective="p99", trials=3000), cli("plan", "--n", "20", "--objective", "p99", "--trials", "3000"))
    data = str(ROOT / "data" / "breast-cancer.csv")
    r = gcsim.train(data=data, n=20, scheme=["uncoded", "crc"], s=3, target_metric=0.95, repeats=3)
    report = cli("train", "--data", data, "--n", "20", "--scheme", "uncoded,crc", "--s", "3",
                 "--target-metric", "0.95", "--repeats", "3")
    same(r, report)
    assert r.data["verdict"] == report["verdict"]


def test_to_pandas():
    pandas = pytest.importorskip("pandas")
    df = gcsim.sweep(n=20, s=[0, 3], trials=1000).to_pandas()
    assert isinstance(df, pandas.DataFrame) and list(df["s"]) == [0, 3]


def keywords(message):
    """The binary's message with its flags as keywords: `'--trials <N>'` as
    `'trials'`, `--load-model` as `load_model`."""
    message = re.sub(r"'--([a-z0-9-]+)(?: <[^>]+>)?'", lambda m: "'" + m.group(1).replace("-", "_") + "'", message)
    return re.sub(r"(?<![\w-])--([a-z][a-z0-9-]*)", lambda m: m.group(1).replace("-", "_"), message)


@pytest.mark.parametrize(
    "kwargs,argv",
    [
        (dict(n=100, load_model="bogus"), ["sweep", "--n", "100", "--load-model", "bogus"]),
        (dict(n=100, trials="abc"), ["sweep", "--n", "100", "--trials", "abc"]),
        (dict(n=100, load_model="affine"), ["sweep", "--n", "100", "--load-model", "affine"]),
        (dict(n=0), ["sweep", "--n", "0"]),
        (dict(n=20, scheme="crc", s=30), ["run", "--n", "20", "--scheme", "crc", "--s", "30"]),
        (dict(n=100, dist="exp:rate=-1"), ["sweep", "--n", "100", "--dist", "exp:rate=-1"]),
        (dict(n=10, scheme="crx", s=1), ["run", "--n", "10", "--scheme", "crx", "--s", "1"]),
        (dict(n=100, s=20), ["run", "--n", "100", "--s", "20"]),
        (dict(n=100, analytic=True, decoder="rank"), ["sweep", "--n", "100", "--analytic", "--decoder", "rank"]),
        (dict(n=[100, 200], plot="x.svg"), ["sweep", "--n", "100,200", "--plot", "x.svg"]),
        (dict(n=10, scheme="custom"), ["run", "--n", "10", "--scheme", "custom"]),
        (dict(n=5000, scheme="crc", s=1, decoder="rank"), ["run", "--n", "5000", "--scheme", "crc", "--s", "1", "--decoder", "rank"]),
        (dict(n=10, scheme="crc", s=1, generator="vandermonde"), ["run", "--n", "10", "--scheme", "crc", "--s", "1", "--generator", "vandermonde"]),
        (dict(n=10, scheme="timeout", timeout=-1), ["run", "--n", "10", "--scheme", "timeout", "--timeout", "-1"]),
        (dict(n=10, max_load=0.5), ["plan", "--n", "10", "--max-load", "0.5"]),
        (dict(n=10, objective="cost"), ["plan", "--n", "10", "--objective", "cost"]),
        (dict(n=10, load_model="additive", ref_n=20), ["plan", "--n", "10", "--load-model", "additive", "--ref-n", "20"]),
        (dict(n=10, max_load=1.0, ref_n=20), ["plan", "--n", "10", "--max-load", "1", "--ref-n", "20"]),
        (dict(n=10, scheme="timeout"), ["plan", "--n", "10", "--scheme", "timeout"]),
        (dict(n=10, gpu_hour_price=2), ["sweep", "--n", "10", "--gpu-hour-price", "2"]),
        (dict(n=10, trace_bootstrap=5), ["sweep", "--n", "10", "--trace-bootstrap", "5"]),
    ],
)
def test_bad_arguments_raise_the_binarys_message(kwargs, argv):
    command = {"run": gcsim.run, "sweep": gcsim.sweep, "plan": gcsim.plan}[argv[0]]
    with pytest.raises(ValueError) as raised:
        command(**kwargs)
    message = str(raised.value)
    assert message.startswith(keywords(cli_error(*argv))), message
    assert "--" not in message


def test_keyword_names():
    with pytest.raises(ValueError, match=r"unknown argument `load_modle` of gcsim.sweep; did you mean load_model\?"):
        gcsim.sweep(n=10, load_modle="fixed")
    with pytest.raises(ValueError, match=r"out is not accepted"):
        gcsim.sweep(n=10, out="x.csv")
    with pytest.raises(ValueError, match=r"analytic is a switch"):
        gcsim.sweep(n=10, analytic="yes")
    with pytest.raises(ValueError, match=r"n takes a value"):
        gcsim.sweep(n=True)


def test_interrupt_stops_a_long_run_quickly():
    # Python's own SIGINT handler, which raises KeyboardInterrupt: a process
    # started in the background by a script inherits SIGINT ignored, and
    # Python then installs none.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        interrupt_a_long_run()
    finally:
        signal.signal(signal.SIGINT, previous)


def interrupt_a_long_run():
    started = time.monotonic()
    sent = []

    def interrupt():
        sent.append(time.monotonic())
        os.kill(os.getpid(), signal.SIGINT)

    timer = threading.Timer(1.0, interrupt)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        # Tens of seconds of work on two cores: long enough for an ignored
        # interrupt (raised only once the run returns) to fail the test,
        # short enough that it does not hang.
        gcsim.sweep(n=100, s=range(0, 51), trials=3 * 10**7, quiet=True)
    stopped = time.monotonic()
    timer.join()
    assert stopped - sent[0] < 2, (stopped - sent[0], stopped - started)
    # The module works after an interrupt.
    assert len(gcsim.run(n=10, scheme="crc", s=1, trials=1000).rows) == 1


def test_the_gil_is_released_during_a_run():
    ticks = []
    stop = threading.Event()

    def tick():
        while not stop.is_set():
            ticks.append(time.monotonic())
            time.sleep(0.01)

    thread = threading.Thread(target=tick)
    thread.start()
    started = time.monotonic()
    gcsim.sweep(n=100, s=range(0, 51), trials=4000000, quiet=True)
    took = time.monotonic() - started
    stop.set()
    thread.join()
    during = [t for t in ticks if started < t < started + took]
    assert took > 0.3, took
    # The other thread ran throughout: at least half the 10 ms ticks.
    assert len(during) > 0.5 * took / 0.01, (len(during), took)

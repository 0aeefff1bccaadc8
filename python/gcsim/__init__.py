"""gcsim in Python: the command line's commands as functions that return rows.

Each function takes the command's flags as keyword arguments, named like the
flags with dashes as underscores (``--load-model`` is ``load_model``), runs the
same code as the ``gcsim`` binary (its parser, its checks, its engine) and
returns a :class:`Result`. A list, tuple or ``range`` stands for a comma list
(``s=range(0, 51)`` is ``--s 0..50``), ``True`` for a switch (``analytic=True``).

Invalid arguments raise ``ValueError`` with the binary's message, arguments
named by their keywords. A long run releases the GIL and stops on Ctrl-C
(``KeyboardInterrupt``) within a chunk of trials.

>>> import gcsim
>>> r = gcsim.sweep(n=100, s=[0, 20, 50], trials=100000)
>>> round(r.rows[1]["speedup"], 2)
3.26
"""

from __future__ import annotations

import json
import math
from typing import Any, Dict, List, Optional

from . import _native

__all__ = ["Result", "run", "sweep", "plan", "analytic", "train", "__version__"]

__version__: str = _native.version()


class Result:
    """A command's report.

    ``rows`` is a list of dicts with the CSV's field names (``None`` where the
    CSV is empty, ``math.inf`` where it says ``inf``); ``config`` the JSON
    report's ``config``; ``data`` the whole JSON report (with ``plan``'s
    ``recommendation`` and ``train``'s ``verdict``).
    """

    def __init__(self, command: str, data: Dict[str, Any]) -> None:
        self.command = command
        self.data = data
        self.config: Dict[str, Any] = data.get("config", {})
        self.rows: List[Dict[str, Any]] = [_numbers(row) for row in data.get("rows", [])]

    def to_pandas(self) -> Any:
        """The rows as a pandas DataFrame, columns in the CSV's order.

        >>> gcsim.run(n=10, scheme="crc", s=2, trials=1000).to_pandas()["mean"]
        """
        try:
            import pandas
        except ImportError as err:
            raise ImportError("Result.to_pandas() needs pandas: pip install pandas") from err
        return pandas.DataFrame(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def __repr__(self) -> str:
        return f"<gcsim.Result of {self.command}: {len(self.rows)} rows>"


def _numbers(row: Dict[str, Any]) -> Dict[str, Any]:
    """The row with the JSON's ``"inf"``/``"-inf"`` as floats."""
    return {k: _INFINITIES.get(v, v) if isinstance(v, str) else v for k, v in row.items()}


_INFINITIES = {"inf": math.inf, "-inf": -math.inf}


def _value(key: str, value: Any) -> Any:
    """A keyword's value as the native part takes it: a bool, a string or a list of strings."""
    if isinstance(value, bool):
        return value
    if isinstance(value, range):
        if value.step == 1 and len(value) > 0:
            return f"{value.start}..{value.stop - 1}"
        return [str(v) for v in value]
    if isinstance(value, (str, int, float)):
        return str(value)
    if isinstance(value, (list, tuple)):
        if not value:
            raise ValueError(f"{key}: an empty list; give at least one value")
        return [str(v) for v in value]
    raise ValueError(f"{key}: {value!r} is neither a string, a number, a list nor a range")


def _call(command: str, options: Dict[str, Any]) -> Result:
    native = {k: _value(k, v) for k, v in options.items() if v is not None}
    return Result(command, json.loads(_native.call(command, native)))


def run(**options: Any) -> Result:
    """Simulate one configuration (``gcsim run``).

    >>> gcsim.run(n=100, scheme="crc", s=20, dist="exp:rate=1", load_model="fixed",
    ...           trials=100000, seed=0).rows[0]["mean"]
    1.5895...
    """
    return _call("run", options)


def sweep(**options: Any) -> Result:
    """Simulate schemes over ranges of s, m, k on common random numbers (``gcsim sweep``).

    >>> r = gcsim.sweep(n=100, s=range(0, 51), scheme=["crc", "frc"])
    >>> [(row["scheme"], row["s"], row["speedup"]) for row in r.rows][:2]
    """
    return _call("sweep", options)


def analytic(**options: Any) -> Result:
    """Exact values only, no simulation (``gcsim sweep --analytic``).

    >>> gcsim.analytic(n=100, s=[0, 20, 50]).rows[1]["mean"]
    1.5896...
    """
    return _call("sweep", {**options, "analytic": True})


def plan(**options: Any) -> Result:
    """Rank every configuration of every allowed scheme by an objective (``gcsim plan``).

    ``data["recommendation"]`` holds the recommendation.

    >>> gcsim.plan(n=20, objective="p99", trials=20000).rows[0]["scheme"]
    """
    return _call("plan", options)


def train(**options: Any) -> Result:
    """Train a model by gradient descent on the simulated cluster (``gcsim train``).

    ``data["verdict"]`` says which configuration reached the target first.

    >>> gcsim.train(data="data/breast-cancer.csv", n=20, scheme=["uncoded", "crc"], s=3,
    ...             target_metric=0.95).rows[0]["time_to_target"]
    """
    return _call("train", options)

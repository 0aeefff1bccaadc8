"""Type hints of gcsim's Python module. Every function also takes any other
flag of its command as a keyword (dashes as underscores)."""

from typing import Any, Dict, Iterable, List, Optional, Union

__version__: str

_Values = Union[int, str, Iterable[int], range]
_Strings = Union[str, Iterable[str]]

class Result:
    command: str
    data: Dict[str, Any]
    config: Dict[str, Any]
    rows: List[Dict[str, Any]]
    def __init__(self, command: str, data: Dict[str, Any]) -> None: ...
    def to_pandas(self) -> Any: ...
    def __len__(self) -> int: ...

def run(
    *,
    n: Optional[int] = ...,
    scheme: Optional[str] = ...,
    s: Optional[int] = ...,
    m: Optional[int] = ...,
    k: Optional[int] = ...,
    d: Optional[int] = ...,
    dist: Optional[str] = ...,
    workers: Optional[_Strings] = ...,
    load_model: Optional[str] = ...,
    unit_time: Optional[float] = ...,
    comm_time: Optional[float] = ...,
    trials: Optional[int] = ...,
    seed: Optional[int] = ...,
    threads: Optional[int] = ...,
    analytic: bool = ...,
    quiet: bool = ...,
    **options: Any,
) -> Result: ...
def sweep(
    *,
    n: Optional[_Values] = ...,
    scheme: Optional[_Strings] = ...,
    s: Optional[_Values] = ...,
    m: Optional[_Values] = ...,
    k: Optional[_Values] = ...,
    d: Optional[_Values] = ...,
    dist: Optional[str] = ...,
    workers: Optional[_Strings] = ...,
    load_model: Optional[str] = ...,
    unit_time: Optional[float] = ...,
    comm_time: Optional[float] = ...,
    trials: Optional[int] = ...,
    seed: Optional[int] = ...,
    threads: Optional[int] = ...,
    plot: Optional[str] = ...,
    analytic: bool = ...,
    quiet: bool = ...,
    **options: Any,
) -> Result: ...
def analytic(
    *,
    n: Optional[_Values] = ...,
    scheme: Optional[_Strings] = ...,
    s: Optional[_Values] = ...,
    m: Optional[_Values] = ...,
    k: Optional[_Values] = ...,
    dist: Optional[str] = ...,
    load_model: Optional[str] = ...,
    **options: Any,
) -> Result: ...
def plan(
    *,
    n: Optional[_Values] = ...,
    objective: Optional[str] = ...,
    max_load: Optional[float] = ...,
    dist: Optional[str] = ...,
    load_model: Optional[str] = ...,
    trials: Optional[int] = ...,
    seed: Optional[int] = ...,
    **options: Any,
) -> Result: ...
def train(
    *,
    data: Optional[str] = ...,
    n: Optional[int] = ...,
    scheme: Optional[_Strings] = ...,
    s: Optional[_Values] = ...,
    target_metric: Optional[float] = ...,
    target_loss: Optional[float] = ...,
    repeats: Optional[int] = ...,
    seed: Optional[int] = ...,
    **options: Any,
) -> Result: ...

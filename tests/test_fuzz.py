"""Property-based tests of the loaders: any table or spec gives a valid object or a
:class:`~bayeslaw.errors.BayeslawError` naming a column, row, key or value; never another
exception, and the input file is left as it was (bytes and mtime).  Seeded (derandomized)."""

import math
import os

import numpy as np
import pandas as pd

from .extras import need  # noqa: E402

hypothesis = need("hypothesis", "property-based tests of the loaders", module_level=True)
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

import bayeslaw as bl  # noqa: E402
from bayeslaw.errors import BayeslawError  # noqa: E402
from bayeslaw.spec.catalog import load_spec  # noqa: E402

SETTINGS = settings(derandomize=True, deadline=None, max_examples=200, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture,
                                           HealthCheck.too_slow])

COLUMNS = ["run", "N", "D", "loss", "T_m", "P", "horizon", "lr", "extra"]
VALUES = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([1e8, 3e8, 1e9, 1e10, 2.5, 3.1, 1e300, 1e308, -1.0, 0.0, 1e-300]),
    st.integers(min_value=-10**6, max_value=10**12),
    st.booleans(),
    st.text(max_size=6),
    st.none(),
)


@st.composite
def tables(draw):
    """A small table: a random subset of bayeslaw's columns (and others), random values."""
    names = draw(st.lists(st.sampled_from(COLUMNS), min_size=0, max_size=6, unique=True))
    if draw(st.booleans()):  # mostly tables with the required columns
        names = list(dict.fromkeys(["N", "D", "loss", *names]))
    n = draw(st.integers(min_value=0, max_value=6))
    base = {"run": ["r1", "r1", "r2", "r2", "r3", "r3"], "N": [1e8, 1e8, 3e8, 3e8, 1e9, 1e9],
            "D": [1e8, 1e9] * 3, "loss": [3.2, 2.9, 3.0, 2.7, 2.8, 2.5]}
    frame = pd.DataFrame({c: (base[c][:n] if c in base else [1.0] * n) for c in names})
    for _ in range(draw(st.integers(min_value=0, max_value=3))):
        if n and names:
            col, row = draw(st.sampled_from(names)), draw(st.integers(0, n - 1))
            frame[col] = frame[col].astype(object)
            frame.loc[row, col] = draw(VALUES)
    if n and names and draw(st.booleans()):  # a duplicated row
        frame = pd.concat([frame, frame.iloc[[0]]], ignore_index=True)
    return frame


def _named(exc: BayeslawError, frame: pd.DataFrame) -> bool:
    """Whether the message names a column, a row or a value of the table."""
    text = str(exc)
    return ("column" in text or "row" in text or "run" in text or "rows" in text
            or any(str(c) in text for c in frame.columns))


@SETTINGS
@given(frame=tables())
def test_load_any_dataframe(frame):
    before = frame.copy(deep=True)
    try:
        data = bl.load(frame)
    except BayeslawError as exc:
        assert _named(exc, frame), str(exc)
        assert "np.float64" not in str(exc) and "np.int64" not in str(exc), str(exc)
    else:
        assert isinstance(data, bl.LossData) and len(data) > 0
        # a table of curves (run, D, loss) has no N: the curve-population law needs none
        assert "N" in data.frame or {"run", "D"} <= set(data.frame)
        values = data.frame[[c for c in ("N", "loss") if c in data.frame]].to_numpy(dtype=float)
        assert np.all(np.isfinite(values)) and np.all(values > 0)
    pd.testing.assert_frame_equal(frame, before)


@SETTINGS
@given(frame=tables())
def test_load_any_csv_file(tmp_path_factory, frame):
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    frame.to_csv(path, index=False)
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = path.read_bytes()
    try:
        data = bl.load(path)
    except BayeslawError as exc:
        assert _named(exc, frame) or "parse" in str(exc), str(exc)
        assert "np.float64" not in str(exc), str(exc)
    else:
        assert isinstance(data, bl.LossData) and len(data) > 0
    assert path.read_bytes() == before and path.stat().st_mtime_ns == 1_000_000_000


SECTIONS = ["law", "description", "reference", "fixed", "priors", "effects", "likelihood",
            "sampler", "colour"]
KEYS = ["N", "D", "T_m", "E", "a", "alpha", "b", "beta", "t2", "dist", "mu", "sigma", "lower",
        "upper", "alpha", "beta", "param", "group", "pooling", "scale", "family", "sigma_by",
        "draws", "sum_split", "nu", "x"]
SCALARS = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.booleans(),
                    st.integers(-10**6, 10**6), st.text(max_size=5),
                    st.sampled_from(["LogNormal", "Normal", "Uniform", "Gamma", "HalfNormal",
                                     "N", "none", "partial", "student_t", "E", "b"]))
TOML_VALUES = st.recursive(
    SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=3),
                                     st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)),
    max_leaves=8)


def _toml(value) -> str:
    """``value`` as a TOML inline value (nan and inf included)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf") \
            if math.isinf(value) else repr(value)
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return '"' + value.encode("unicode_escape").decode().replace('"', '\\"') + '"'
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return "{" + ", ".join(f'"{k}" = {_toml(v)}' for k, v in value.items()) + "}"


def _names_something(message: str, given, law=None) -> bool:
    """Whether ``message`` names a key, a value or the law of the input ``given``: quoted as
    the parser quotes them (``'key'``, ``[section]``, ``key = value``) or a value as printed."""
    tokens = {law} if law else set()
    stack = [given]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            tokens |= set(item)
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
        else:
            tokens.add(item)
    for token in tokens:
        if isinstance(token, str):
            if f"'{token}'" in message or f"[{token}]" in message or f"{token} =" in message \
                    or (len(token) > 2 and token in message):
                return True
        elif isinstance(token, bool):
            if str(token) in message or str(token).lower() in message:
                return True
        elif isinstance(token, int | float) and (f"{token:g}" in message or repr(token)
                                                 in message):
            return True
    return False


@SETTINGS
@given(spec=st.dictionaries(st.sampled_from(SECTIONS), TOML_VALUES, max_size=4),
       law=st.sampled_from([None, "looped_total", "chinchilla", "parallel_streams"]))
def test_parse_any_toml_spec(tmp_path_factory, spec, law):
    path = tmp_path_factory.mktemp("spec") / "s.toml"
    path.write_text("\n".join(f"{k} = {_toml(v)}" for k, v in spec.items()) + "\n")
    os.utime(path, ns=(1_000_000_000, 1_000_000_000))
    before = path.read_bytes()
    try:
        parsed = load_spec(path, law=law)
    except BayeslawError as exc:
        # a key, value or the law; or, for a file that is not TOML, the file and the place
        named = _names_something(str(exc), spec, law) or (str(path) in str(exc)
                                                          and "line" in str(exc))
        assert "np.float64" not in str(exc) and named, str(exc)
    else:
        assert isinstance(parsed, bl.ModelSpec)
        assert bl.ModelSpec.from_dict(parsed.to_dict()) == parsed
    assert path.read_bytes() == before and path.stat().st_mtime_ns == 1_000_000_000


@st.composite
def mutated_specs(draw):
    """A shipped default spec with a few values (at any depth) replaced by random ones."""
    law = draw(st.sampled_from(["looped_total", "chinchilla", "chinchilla_curves_walk",
                                "parallel_streams_pooled"]))
    spec = load_spec(law).to_dict()
    for _ in range(draw(st.integers(1, 3))):
        table = spec
        while True:  # walk down to a random table, then replace or add one of its keys
            keys = sorted(table)
            key = draw(st.sampled_from(keys + ["x"])) if keys else "x"
            inner = table.get(key)
            if isinstance(inner, list) and inner and isinstance(inner[0], dict):
                inner = inner[draw(st.integers(0, len(inner) - 1))]
            if isinstance(inner, dict) and draw(st.booleans()):
                table = inner
                continue
            table[key] = draw(TOML_VALUES)
            break
    return spec


@SETTINGS
@given(spec=mutated_specs())
def test_parse_any_mutated_spec(spec):
    try:
        parsed = bl.ModelSpec.from_dict(spec)
    except BayeslawError as exc:
        assert "np.float64" not in str(exc) and _names_something(str(exc), spec), str(exc)
    else:
        assert bl.ModelSpec.from_dict(parsed.to_dict()) == parsed
        for prior in parsed.priors.values():
            assert all(math.isfinite(v) for v in prior.params.values())

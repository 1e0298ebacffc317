"""Step tables (a looped LM's loss per exit step, and its totals): layout and validation."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import bayeslaw as bl
from bayeslaw import constants as C
from bayeslaw.data.steps import as_step_table, fixed_by_data
from bayeslaw.errors import DataError, SpecError
from bayeslaw.simulate import exit_probabilities, step_design
from bayeslaw.spec.catalog import resolve_spec


def table(**options) -> pd.DataFrame:
    """Two sizes x T_m 2 and 4, three checkpoints, steps and totals, q logged."""
    return step_design(N=(1e8, 3e8), T_m=(2, 4), D=(1e9, 2e9, 4e9), **options)


def test_layout_one_curve_per_step_and_one_for_the_totals():
    raw = table()
    data = bl.load(raw)
    f = data.frame
    assert sorted(f.loc[f[C.LOOPED_RUN] == "N100M_T4", C.RUN].unique()) == [
        "N100M_T4/T1", "N100M_T4/T2", "N100M_T4/T3", "N100M_T4/T4", "N100M_T4/total"]
    assert len(f) == len(raw) and len(data.runs) == 2 * (3 + 5)
    w = f[list(C.EXIT_WEIGHTS)].to_numpy()
    steps = f[C.EXIT_KIND] == "step"
    # a step row's weights are one-hot at its T; a total row's are its checkpoint's q
    assert np.array_equal(w[steps.to_numpy()].argmax(axis=1) + 1, f.loc[steps, C.T_STEP])
    assert np.allclose(w[steps.to_numpy()].sum(axis=1), 1.0)
    total = f[(f[C.EXIT_KIND] == "total") & (f[C.T_M] == 4)].iloc[0]
    q = exit_probabilities(4)
    assert np.allclose([total[c] for c in C.EXIT_WEIGHTS[:4]], q)
    assert total[C.EXIT_ENTROPY] == pytest.approx(-np.sum(q * np.log(q)))
    assert (f.loc[steps, C.EXIT_ENTROPY] == 0).all()
    # the input is not modified, and the layout inverts
    assert raw.equals(table())
    back = as_step_table(f)
    assert set(back[C.RUN]) == set(raw[C.RUN]) and not set(C.EXIT_WEIGHTS) & set(back)
    assert bl.load(back).frame[list(C.EXIT_WEIGHTS)].equals(f[list(C.EXIT_WEIGHTS)])


def test_latent_layout_marks_the_totals_and_their_allowed_steps():
    f = bl.load(table().drop(columns="q")).frame
    total = f[f[C.EXIT_KIND] == "total"]
    assert (total[C.EXIT_LATENT] == 1).all() and (f.loc[f[C.EXIT_KIND] == "step",
                                                      C.EXIT_LATENT] == 0).all()
    allowed = total[list(C.EXIT_WEIGHTS)].sum(axis=1)
    assert np.array_equal(allowed.to_numpy(), total[C.T_M].to_numpy())
    assert C.EXIT_ENTROPY not in f.columns


def test_totals_may_say_total_and_steps_alone_load():
    raw = table()
    raw[C.T_STEP] = raw[C.T_STEP].astype(object).where(raw[C.T_STEP].notna(), "total")
    assert bl.load(raw).frame[C.EXIT_KIND].eq("total").sum() == 2 * 2 * 3
    steps_only = bl.load(table(totals=False))
    assert (steps_only.frame[C.EXIT_KIND] == "step").all()
    assert C.EXIT_ENTROPY in steps_only.columns  # the logged-q law (no totals to link)


def _row(raw: pd.DataFrame, run: str, D: float, T) -> int:
    T_col = raw[C.T_STEP]
    hit = (raw[C.RUN] == run) & (raw[C.D] == D) & (T_col.isna() if T is None else T_col == T)
    return int(np.flatnonzero(hit.to_numpy())[0])


def _set(raw, run, D, T, column, value):
    out = raw.copy()
    out[column] = out[column].astype(object)
    out.iloc[_row(raw, run, D, T), out.columns.get_loc(column)] = value
    return out


@pytest.mark.parametrize(("mutate", "match"), [
    (lambda r: _set(r, "N100M_T2", 2e9, 2.0, C.T_STEP, 3.0),
     r"row 5 .*run 'N100M_T2'.* exit step T = 3 above its T_m = 2"),
    (lambda r: _set(r, "N100M_T2", 2e9, 2.0, C.T_STEP, 1.5),
     r"column 'T' must be an exit step .* row 5 .* has 1.5"),
    (lambda r: _set(r, "N100M_T2", 2e9, 2.0, C.T_STEP, "two"),
     r"column 'T' must be an exit step .* row 5 .* has 'two'"),
    (lambda r: r.drop(index=_row(r, "N300M_T4", 4e9, 3.0)),
     r"run 'N300M_T4' at D = 4e\+09 .* lacks exit step\(s\) \[3\] of its T_m = 4"),
    (lambda r: _set(r, "N100M_T2", 1e9, 2.0, C.T_STEP, 1.0),
     r"run 'N100M_T2' has several rows of exit step T = 1 at D = 1e\+09"),
    (lambda r: _set(r, "N100M_T4", 2e9, 1.0, C.Q_EXIT, 0.5),
     r"run 'N100M_T4' at D = 2e\+09 .*q sum to 1.4, not 1"),
    (lambda r: _set(r, "N100M_T4", 2e9, 1.0, C.Q_EXIT, 1.5),
     r"column 'q' must be an exit probability .* row \d+ .*run 'N100M_T4', T = 1.* 1.5"),
    (lambda r: _set(r, "N100M_T4", 2e9, None, C.Q_EXIT, 0.3),
     r"total-loss row of run 'N100M_T4' but has q = 0.3"),
    (lambda r: r.assign(T_m=r[C.T_M].where(r[C.T_M] != 4, 16.0)),
     r"T_m = 16; the step-wise laws take whole T_m up to 8"),
    (lambda r: r.assign(entropy_weight=np.where(r[C.RUN] == "N300M_T4", 0.1, 0.05)),
     r"'entropy_weight' has 0.05 in row 1 and 0.1 in row \d+ .*run 'N300M_T4'"),
    (lambda r: r.assign(entropy_weight=-0.1), r"'entropy_weight' must be a number >= 0"),
    (lambda r: r.drop(columns=C.T_M), r"has a 'T' column .* but no 'T_m' column"),
    (lambda r: r.assign(N=np.where((r[C.RUN] == "N100M_T4") & (r[C.T_STEP] == 3), 2e8, r[C.N])),
     r"run 'N100M_T4' has several N values .* row \d+ .* differs from its first"),
    (lambda r: r.assign(T_m=np.where((r[C.RUN] == "N100M_T2") & r[C.T_STEP].isna(), 4.0,
                                     r[C.T_M])).drop(columns="q"),
     r"run 'N100M_T2' has several T_m values"),
    (lambda r: _set(r, "N100M_T2", 1e9, 1.0, C.T_STEP, True),
     r"column 'T' must be an exit step .* row 1 .* has 'True'"),  # a CSV's True is text
    (lambda r: r.assign(schedule="cosine", horizon=1e10),
     r"step-wise losses .* with a learning-rate schedule"),
])
def test_bad_step_tables_are_named(mutate, match, tmp_path):
    path = tmp_path / "steps.csv"
    mutate(table()).to_csv(path, index=False)
    before = path.read_bytes()
    with pytest.raises(DataError, match=match):
        bl.load(path)
    assert path.read_bytes() == before


def test_a_total_needs_its_steps_when_q_is_logged():
    raw = table()
    drop = (raw[C.RUN] == "N100M_T2") & (raw[C.D] == 4e9) & raw[C.T_STEP].notna()
    with pytest.raises(DataError, match=r"total loss of run 'N100M_T2' at D = 4e\+09 has no step "
                                        r"rows .* drop the column 'q'"):
        bl.load(raw[~drop])
    # without q, the same totals load (a latent exit distribution)
    assert bl.load(raw[~drop].drop(columns="q")).frame[C.EXIT_KIND].eq("total").any()


def test_a_checkpoint_may_log_some_steps_only_where_nothing_sums_over_them():
    raw = table(totals=False).drop(columns="q")
    some = raw[~((raw[C.RUN] == "N300M_T4") & raw[C.T_STEP].isin([1.0, 3.0]))]
    data = bl.load(some)
    assert not (data.frame[C.RUN].isin(["N300M_T4/T1", "N300M_T4/T3"])).any()
    assert [n for n in data.notes if "without a loss at every exit step" in n] == [
        "step table: 3 checkpoint(s) without a loss at every exit step (no q and no total "
        "there, so nothing sums over the steps; the step-wise law is fitted at the steps "
        "logged): N300M_T4 at D = 1e+09: steps [1, 3]; N300M_T4 at D = 2e+09: steps [1, 3]; "
        "N300M_T4 at D = 4e+09: steps [1, 3]"]
    # a total at the checkpoint (latent q) sums over every step: then each must be there
    latent = table().drop(columns="q")
    gap = latent[~((latent[C.RUN] == "N300M_T4") & (latent[C.D] == 2e9)
                   & (latent[C.T_STEP] == 2.0))]
    with pytest.raises(DataError, match=r"run 'N300M_T4' at D = 2e\+09 .* lacks exit step\(s\) "
                                        r"\[2\] of its T_m = 4 \(its total loss sums over"):
        bl.load(gap)
    # a run may have a total at one checkpoint and only some steps at another (latent q)
    mixed = gap[~((gap[C.RUN] == "N300M_T4") & (gap[C.D] == 2e9) & gap[C.T_STEP].isna())]
    loaded = bl.load(mixed)
    assert any("N300M_T4 at D = 2e+09: steps [2]" in n for n in loaded.notes)
    assert loaded.frame[C.EXIT_KIND].eq("total").sum() == 2 * 2 * 3 - 1
    # and so do logged q's, without totals
    with pytest.raises(DataError, match=r"\(its exit probabilities q must cover every step\)"):
        bl.load(table(totals=False).drop(index=[0]))


def test_the_entropy_weight_fixes_beta_H_unless_the_user_says_otherwise():
    data = bl.load(table().assign(entropy_weight=0.05))
    assert fixed_by_data(data.frame) == {"beta_H": 0.05}
    spec = resolve_spec(None, law=None, columns=data.columns, data_fixed=fixed_by_data(data.frame))
    assert spec.law == "looped_steps" and spec.fixed["beta_H"] == 0.05
    assert "beta_H" not in spec.free_params
    mine = resolve_spec({"priors": {"beta_H": {"dist": "HalfNormal", "sigma": 0.2}}}, law=None,
                        columns=data.columns, data_fixed=fixed_by_data(data.frame))
    assert "beta_H" in mine.free_params and "beta_H" not in mine.fixed
    assert fixed_by_data(bl.load(table()).frame) == {}
    with pytest.raises(DataError, match=r"row 1 of <DataFrame> has True \(true / false"):
        bl.load(_set(table(), "N100M_T2", 1e9, 1.0, C.T_STEP, True))  # a DataFrame's is bool
    # the shipped spec named as the spec is not the user's: the table still fixes beta_H
    named = resolve_spec("looped_steps", law=None, columns=data.columns,
                         data_fixed=fixed_by_data(data.frame))
    assert named.fixed["beta_H"] == 0.05


def test_exit_exponents_by_depth_in_the_simulator():
    powers = {2: 0.3, 4: 1.0, 8: 1.8}
    frame = step_design(N=(1e8,), T_m=(2, 4, 8), D=(1e9,), power=powers)
    for T_m, power in powers.items():
        q = frame.loc[(frame[C.T_M] == T_m) & frame[C.T_STEP].notna(), C.Q_EXIT].to_numpy()
        w = np.arange(1, T_m + 1, dtype=float) ** power
        assert np.allclose(q, w / w.sum(), rtol=1e-14)
    with pytest.raises(bl.ArgumentError, match=r"no exit exponent for T_m = 8: the mapping "
                                                r"has \[2.0, 4.0\]"):
        exit_probabilities(8, {2: 0.3, 4: 1.0})


def test_exponents_by_depth_warn_unless_the_entropy_weight_fixes_beta_H():
    """``looped_steps_latent_depths`` with ``beta_H`` sampled is not identified
    (``tests/laws/test_looped_steps.py`` shows the ridge): a warning says what to add."""
    from bayeslaw.inference.sampling import _resolved

    latent = table().drop(columns=C.Q_EXIT)
    with pytest.warns(bl.BayeslawWarning, match=r"lambda_q varies by T_m while beta_H is "
                                                r"sampled.*add the table's entropy_weight"):
        spec = _resolved("looped_steps_latent_depths", None, bl.load(latent))
    assert "beta_H" in spec.free_params
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        spec = _resolved("looped_steps_latent_depths", None,
                         bl.load(latent.assign(entropy_weight=0.05)))
        assert spec.fixed["beta_H"] == 0.05
        assert [e.group for e in spec.effects if e.param == "lambda_q"] == ["T_m"]
        _resolved("looped_steps_latent", None, bl.load(latent))  # one exponent: no warning


def test_a_loaded_spec_object_takes_the_tables_entropy_weight_unless_its_prior_is_the_users():
    """A spec object from ``bl.load_spec`` remembers which priors came from a default: the
    table's entropy weight replaces the shipped ``beta_H`` prior as it does for the spec's
    name (a script that passed ``bl.load_spec(...)`` fitted another model before, with only a
    warning); a ``beta_H`` prior of the user's own, or a spec built with ``from_dict``, is
    fitted as given, with the warning."""
    from bayeslaw.inference.sampling import _resolved

    data = bl.load(table().drop(columns=C.Q_EXIT).assign(entropy_weight=0.05))
    by_name = _resolved("looped_steps_latent_depths", None, data)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loaded = _resolved(bl.load_spec("looped_steps_latent_depths"), None, data)
    assert loaded == by_name and loaded.fixed["beta_H"] == 0.05
    assert "beta_H" not in loaded.priors and loaded.defaulted == by_name.defaulted
    own = bl.load_spec({"law": "looped_steps_latent",
                        "priors": {"beta_H": {"dist": "HalfNormal", "sigma": 0.2}}})
    assert "beta_H" not in own.defaulted and "lambda_q" in own.defaulted
    with pytest.warns(bl.BayeslawWarning, match=r"the table fixes \{'beta_H': 0.05\}.*of its "
                                                r"own, not from a default"):
        kept = _resolved(own, None, data)
    assert kept.priors["beta_H"] == own.priors["beta_H"] and "beta_H" not in kept.fixed
    built = bl.ModelSpec.from_dict(bl.load_spec("looped_steps_latent").to_dict())
    assert built.defaulted == frozenset()
    with pytest.warns(bl.BayeslawWarning, match="of its own"):
        assert "beta_H" in _resolved(built, None, data).free_params
    with pytest.raises(SpecError, match=r"unknown spec section\(s\) \['defaulted'\]"):
        bl.load_spec({"law": "looped_steps_latent", "defaulted": ["beta_H"]})


@pytest.mark.parametrize("law", ["looped_steps", "looped_steps_latent"])
def test_the_step_term_needs_three_exit_steps_not_counting_totals(law):
    """A total's exit weights (its q) are not a step: T_m = 2 logs two steps, too few for
    the T term, with or without totals (before, the totals' q counted as a third level)."""
    from bayeslaw.laws.registry import get_law

    spec = get_law(law)
    for totals in (True, False) if law == "looped_steps" else (True,):  # latent: q from totals
        raw = step_design(N=(1e8, 3e8, 1e9), T_m=(2,), D=(1e9, 2e9, 4e9), totals=totals)
        data = bl.load(raw if law == "looped_steps" else raw.drop(columns="q"))
        with pytest.raises(DataError, match="the step rows have 2 distinct exit step"):
            data.require_levels(spec.covariates, law, spec.min_levels)
    four = bl.load(step_design(N=(1e8, 3e8, 1e9), T_m=(2, 4), D=(1e9, 2e9, 4e9)))
    four.require_levels(get_law("looped_steps").covariates, "looped_steps",
                        get_law("looped_steps").min_levels)  # steps 1..4: enough

"""The HTML / Markdown report on the stored small posterior (no sampling)."""

import base64
import re
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
import zlib
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from bayeslaw.cli.commands import _fit_names, main
from bayeslaw.posterior.derived import loss_at
from bayeslaw.report.build import build_report
from bayeslaw.report.document import Block, Image, Report, Section

from ..browser import browser, probe
from ..browser import chromium as find_chromium
from ..conftest import cli_env

STORED = Path(__file__).parents[1] / "fixtures" / "small_fit.nc"
SECTIONS = ["Data", "Priors and hierarchy", "Diagnostics", "Coefficients", "Fitted curves",
            "Residuals", "Group effects", "Derived quantities"]
_VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
         "track", "wbr"}


class _Outline(HTMLParser):
    """Checks that tags nest and close; collects headings and image sources."""

    def __init__(self):
        super().__init__()
        self.stack, self.errors, self.images = [], [], []
        self.headings: dict[str, list[str]] = {"h1": [], "h2": [], "h3": []}
        self._text: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if tag == "img":
            self.images.append(dict(attrs)["src"])
        if tag not in _VOID:
            self.stack.append(tag)
        if tag in self.headings:
            self._text = []

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()
        if tag in self.headings:
            self.headings[tag].append("".join(self._text))
            self._text = None

    def handle_data(self, data):
        if self._text is not None:
            self._text.append(data)


def _outline(text: str) -> _Outline:
    parser = _Outline()
    parser.feed(text)
    parser.close()
    assert not parser.errors and not parser.stack, (parser.errors, parser.stack)
    return parser


def _check_image_bytes(raw: bytes, kind: str) -> None:
    """A PNG with a well-formed IHDR chunk (length, type, size, CRC), or a parseable SVG."""
    if kind == "svg":
        assert ET.fromstring(raw).tag.endswith("svg")
        return
    assert raw[:8] == b"\x89PNG\r\n\x1a\n"
    length, ctype = struct.unpack(">I4s", raw[8:16])
    assert (length, ctype) == (13, b"IHDR")
    width, height = struct.unpack(">II", raw[16:24])
    assert width > 100 and height > 100
    assert struct.unpack(">I", raw[29:33])[0] == zlib.crc32(raw[12:29])
    assert raw.rstrip(b"\0").endswith(b"IEND\xaeB`\x82")


def _check_data_uri(src: str) -> None:
    match = re.fullmatch(r"data:image/(png|svg\+xml);base64,([A-Za-z0-9+/=]+)", src)
    assert match, src[:60]
    _check_image_bytes(base64.b64decode(match.group(2), validate=True),
                       "svg" if match.group(1).startswith("svg") else "png")


@pytest.fixture(scope="module")
def report(stored_fit):
    return build_report(stored_fit, seed=1)


@pytest.fixture(scope="module")
def saved(report, tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    return report.save(out)


def test_html_is_self_contained_and_well_formed(saved):
    text = saved["html"].read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    outline = _outline(text)
    assert outline.headings["h1"] == ["bayeslaw report: looped_total"]
    assert outline.headings["h2"] == SECTIONS
    assert len(outline.images) == 4  # grid, zoomed grid, residuals, group effects
    for src in outline.images:
        _check_data_uri(src)
    assert not re.search(r"<(script|link|iframe)\b", text)
    assert not re.search(r"(src|href)=\"(https?:|file:|//)", text)


def test_every_table_follows_its_sentence(saved):
    text = saved["html"].read_text(encoding="utf-8")
    tables = re.findall(r"(.{0,6})<table", text, flags=re.S)
    assert len(tables) >= 10
    assert all(before.endswith("</p>\n") for before in tables)


def test_markdown_links_existing_figures(saved, report):
    md = saved["markdown"].read_text(encoding="utf-8")
    assert [ln[3:] for ln in md.splitlines() if ln.startswith("## ")] == SECTIONS
    links = re.findall(r"!\[[^\]]*\]\(([^)]+)\)", md)
    assert links == [f"{im.name}.png" for im in report.images]
    for link in links:
        path = saved["markdown"].parent / link
        _check_image_bytes(path.read_bytes(), "png")
    assert "| max R-hat | 1.0379 | <= 1.01 | b_run |" in md


def test_report_values_come_from_the_fit(report, stored_fit):
    sections = {s.title: s for s in report.sections}
    coef = sections["Coefficients"].blocks[0].table
    pd.testing.assert_frame_equal(coef, stored_fit.summary())
    at = sections["Derived quantities"].blocks[0].table
    n, d = stored_fit.data.frame["N"].max(), stored_fit.data.frame["D"].max()
    expected = loss_at(stored_fit, n, 10 * d, 4.0, seed=1).summary()
    assert at.loc["4", "median"] == pytest.approx(expected["median"].iloc[0], rel=1e-12)
    best = sections["Derived quantities"].blocks[2].table
    assert best["p_best"].sum() == pytest.approx(1.0)
    assert sections["Diagnostics"].blocks[0].text.startswith("Sampling did NOT converge: R-hat")
    # the diagnosis beside the verdict, as the fit holds it
    assert sections["Diagnostics"].blocks[1].code == str(stored_fit.diagnostics.diagnosis)
    assert "worst R-hat: " in sections["Diagnostics"].blocks[1].code


def test_report_repr_and_notebook_html(report):
    assert repr(report).startswith("Report('bayeslaw report: looped_total', 8 sections, "
                                   "4 figures: Data, Priors and hierarchy,")
    fragment = report._repr_html_()
    assert fragment.startswith('<div class="bayeslaw-report">') and "<html" not in fragment
    assert _outline(fragment).headings["h2"] == SECTIONS


def test_report_rejects_repeated_figure_names():
    png = build_png()
    section = Section("S", (Block("one", image=Image("x", png)), Block("two", image=Image("x",
                                                                                          png))))
    with pytest.raises(ValueError, match="unique"):
        Report("t", [section])
    with pytest.raises(ValueError, match="not a PNG"):
        Image("y", b"GIF89a")


def build_png() -> bytes:
    from bayeslaw.report.document import figure_png

    fig, ax = plt.subplots(figsize=(2, 2))
    ax.plot([0, 1], [0, 1])
    return figure_png(fig)


@pytest.fixture(scope="module")
def chinchilla_fit(stored_fit):
    """The stored posterior read as a Chinchilla fit (no T_m, no group effects)."""
    from bayeslaw.data.table import LossData
    from bayeslaw.posterior.result import Fit
    from bayeslaw.spec.catalog import load_spec

    frame = stored_fit.data.frame.drop(columns=["T_m"])
    return Fit.from_draws(idata=stored_fit.idata, spec=load_spec(law="chinchilla"),
               data=LossData(frame, "<DataFrame>", "0" * 64), provenance=stored_fit.provenance)


def test_report_of_a_law_without_T_m(chinchilla_fit, tmp_path):
    from bayeslaw.posterior.derived import compute_optimal

    report = build_report(chinchilla_fit, seed=1, budget=1e21)
    sections = {s.title: s for s in report.sections}
    assert sections["Group effects"].blocks[0].text.startswith("No group effects")
    derived = sections["Derived quantities"].blocks
    assert len(derived) == 2  # no best-T_m tables
    assert list(derived[1].table.index) == ["-"]
    opt = compute_optimal(chinchilla_fit, 1e21)
    np.testing.assert_allclose(6 * opt.draws["N_opt"] * opt.draws["D_opt"], 1e21, rtol=1e-12)
    outline = _outline(report.save(tmp_path)["html"].read_text(encoding="utf-8"))
    assert outline.headings["h2"] == SECTIONS
    assert len(outline.images) == 3  # grid, zoomed grid, residuals
    for src in outline.images:
        _check_data_uri(src)


@dataclass
class StandInComparison:
    """Has the attributes of ``bayeslaw.compare.compare``'s result."""

    table: pd.DataFrame
    method: str = "loo"

    def plot(self, ax=None):
        fig, ax = plt.subplots(figsize=(4, 2)) if ax is None else (ax.figure, ax)
        ax.errorbar(self.table["elpd"], np.arange(len(self.table)), xerr=self.table["se"],
                    fmt="o")
        return fig

    def summary_sentence(self) -> str:
        return "Model `a` predicts held-out points best (stand-in sentence)."


def test_several_fits_with_a_comparison(stored_fit, tmp_path):
    table = pd.DataFrame({"elpd": [150.0, 149.0], "se": [5.0, 5.1], "elpd_diff": [0.0, 1.0],
                          "dse": [0.0, 0.4], "weight": [0.7, 0.3], "p": [20.0, 21.0],
                          "n_bad_k": [0, 1]}, index=pd.Index(["a", "b"], name="model"))
    report = build_report({"a": stored_fit, "b": stored_fit}, comparison=StandInComparison(table),
                          seed=1)
    paths = report.save(tmp_path)
    outline = _outline(paths["html"].read_text(encoding="utf-8"))
    assert outline.headings["h2"] == ["Model a", "Model b", "Model comparison"]
    assert outline.headings["h3"][:2] == ["a: Data", "a: Priors and hierarchy"]
    assert len(outline.headings["h3"]) == 2 * len(SECTIONS)
    assert len(outline.images) == 2 * 4 + 1
    for src in outline.images:
        _check_data_uri(src)
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "stand-in sentence" in md and "| a | 150 | 5 | 0 | 0 | 0.7 | 20 | 0 |" in md
    assert (tmp_path / "report-a-grid.png").is_file() and (tmp_path / "compare.png").is_file()


def test_several_fits_with_the_real_comparison(stored_fit):
    report = build_report({"a": stored_fit, "b": stored_fit}, seed=1)
    section = report.sections[-1]
    assert section.title == "Model comparison"
    assert {"elpd", "se", "elpd_diff", "dse", "weight", "p", "n_bad_k"} <= set(
        section.blocks[1].table.columns)
    # the stored posterior has points with Pareto k > 0.7: the comparison's notes say so in
    # the report (the warning itself is not raised while the report is built)
    assert section.blocks[1].table["n_bad_k"].min() > 0
    assert "Pareto k > 0.7" in section.blocks[-1].text
    assert "Pareto k &gt; 0.7" in report.to_html() or "Pareto k > 0.7" in report.to_html()


# -- command line ----------------------------------------------------------------------------
def test_report_command_writes_both_files(tmp_path, capsys):
    out = tmp_path / "rep"
    assert main(["report", str(STORED), "--out", str(out), "--budget", "1e21"]) == 0
    assert {"report.html", "report.md", "report-grid.png"} <= {p.name for p in out.iterdir()}
    assert "wrote" in capsys.readouterr().out
    assert "budget of C = 1e+21 FLOPs" in (out / "report.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("args, message", [
    (["report", "missing.nc"], "fit file 'missing.nc' does not exist"),
    (["report", str(STORED), "--budget", "-5"], "--budget must be a positive number"),
])
def test_report_user_errors_exit_2(tmp_path, args, message):
    out = tmp_path / "rep"
    proc = subprocess.run([sys.executable, "-m", "bayeslaw.cli", *args, "--out", str(out)],
                          capture_output=True, text=True, timeout=300,
                          env=cli_env(tmp_path / "cache"))
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith("error: ") and message in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not out.exists()


def test_fit_names():
    assert _fit_names(["x/a.nc", "y/b.nc"]) == ["a", "b"]
    assert _fit_names(["x/fit.nc", "y/fit.nc"]) == ["x", "y"]
    assert _fit_names(["x/fit.nc", "x/fit.nc"]) == ["x-1", "x-2"]


# -- a real browser (tests/browser.py) -----------------------------------------------------
def _probe(binary: str, html: str, tmp_path: Path, name: str) -> dict[str, str]:
    """What the image probe found in a test copy of the report (the report holds no script)."""
    return probe(binary, html, tmp_path / name, tmp_path / "profile")[1]


@pytest.mark.browser
def test_report_renders_in_chromium(saved, tmp_path):
    import matplotlib.image as mpimg

    chromium = find_chromium()
    shot = tmp_path / "shot.png"
    proc = browser(chromium, tmp_path / "profile", f"--screenshot={shot}",
                    "--window-size=1200,3000", saved["html"].as_uri())
    assert shot.is_file(), proc.stderr[-2000:]
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (3000, 1200)
    not_white = (pixels < 0.95).any(axis=-1).mean()
    assert not_white > 0.02 and pixels.std() > 0.05
    html = saved["html"].read_text(encoding="utf-8")
    assert _probe(chromium, html, tmp_path, "probe.html") == {"data-images": "4",
                                                              "data-broken": ""}
    # the probe does catch a broken image
    broken = html.replace("data:image/png;base64,iVBOR", "data:image/png;base64,AAAA", 1)
    assert _probe(chromium, broken, tmp_path, "broken.html")["data-broken"] == "0"


def test_report_of_final_losses_without_D(tmp_path):
    """A law without a data term (ParScale-like N x P grid): final-loss figure, residuals
    against N, forecasts at a larger N instead of a compute-optimal split.  The "posterior"
    is a set of prior draws: plumbing only, no sampling."""
    import arviz as az
    import xarray as xr

    import bayeslaw as bl
    from bayeslaw.inference.sampling import sample_prior_predictive
    from bayeslaw.posterior.result import Fit

    rows = [{"N": n, "P": float(p), "loss": 1.0 + 0.3 * (n * (0.4 * np.log(p) + 1) / 1e9)
             ** -0.2} for n in (5e8, 1.1e9, 2.8e9, 4.4e9) for p in (1, 2, 4, 8)]
    data = bl.load(pd.DataFrame(rows))
    spec = bl.load_spec(law="parallel_streams")
    prior = sample_prior_predictive(data, spec, draws=50, seed=1).prior
    energy = np.random.default_rng(0).normal(size=(1, 50))
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((1, 50), bool)),
                        "energy": (("chain", "draw"), energy)},
                       coords={"chain": [0], "draw": np.arange(50)})
    fake = Fit.from_draws(idata=az.InferenceData(posterior=prior, sample_stats=stats), spec=spec,
               data=data, provenance={"seed": 1, "sampler": {"backend": "nutpie", "chains": 1,
                                                             "draws": 50, "tune": 0}})
    report = build_report(fake, seed=1)
    paths = report.save(tmp_path)
    assert "report-final" in paths["figure report-final"].stem
    md = paths["markdown"].read_text(encoding="utf-8")
    assert "against model size" in md and "no compute-optimal split" in md
    for src in _outline(paths["html"].read_text(encoding="utf-8")).images:
        _check_data_uri(src)


def test_fit_outputs_of_final_losses_without_D(tmp_path):
    """`bayeslaw fit` on a table without D writes its figure against N (no KeyError)."""
    import arviz as az
    import xarray as xr

    import bayeslaw as bl
    from bayeslaw.inference.sampling import sample_prior_predictive
    from bayeslaw.posterior.result import Fit
    from bayeslaw.report.folders import write_fit_outputs

    rows = [{"N": n, "P": float(p), "loss": 1.0 + 0.3 * (n / 1e9) ** -0.2 - 0.01 * p}
            for n in (5e8, 1.1e9, 2.8e9, 4.4e9) for p in (1, 2, 4, 8)]
    data = bl.load(pd.DataFrame(rows))
    spec = bl.load_spec(law="looped_streams")
    prior = sample_prior_predictive(data, spec, draws=20, seed=1).prior
    stats = xr.Dataset({"diverging": (("chain", "draw"), np.zeros((1, 20), bool)),
                        "energy": (("chain", "draw"), np.random.default_rng(0).normal(
                            size=(1, 20)))}, coords={"chain": [0], "draw": np.arange(20)})
    fake = Fit.from_draws(idata=az.InferenceData(posterior=prior, sample_stats=stats), spec=spec,
               data=data, provenance={"seed": 1, "sampler": {"backend": "nutpie", "chains": 1,
                                                             "draws": 20, "tune": 0}})
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # arviz: 1 chain of 20 draws
        paths = write_fit_outputs(fake, tmp_path)
    assert paths["grid figure (png)"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "grid figure, plateau zoom (png)" not in paths

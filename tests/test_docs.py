"""The documentation site and the inventories a newcomer reads.

* the site (``docs/``) builds with Sphinx with warnings as errors and every cross-reference
  checked (``-W``, ``nitpicky``): skipped outside CI when Sphinx or its extensions (the
  ``docs`` extra) are missing, failed in CI;
* its API reference lists every public name of ``bayeslaw`` and ``bayeslaw.testing``, each
  function's page shows its parameters, and a reference to a name that does not exist still
  fails the build (the resolver of internal paths in ``docs/conf.py`` swallows nothing);
* the API page and a tutorial page, opened in headless Chromium (marker ``browser``), show
  their text and their figures decoded;
* the tutorials' stored, executed copies (``docs/tutorials``) hold the code of
  ``notebooks/`` and their figures; the README's links and the inventories of tests and
  benchmarks are complete.
"""

from __future__ import annotations

import importlib.util
import inspect
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import bayeslaw as bl
import bayeslaw.testing

from .browser import browser, probe
from .browser import chromium as find_chromium
from .conftest import ROOT

DOCS = ROOT / "docs"
#: The docs extra's modules (pyproject.toml, ``docs``).
SPHINX_MODULES = ("sphinx", "pydata_sphinx_theme", "numpydoc", "myst_nb", "sphinx_copybutton")
IN_CI = os.environ.get("CI") == "true"


def _need_sphinx() -> None:
    missing = [m for m in SPHINX_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        message = (f"the docs build needs {', '.join(missing)} (the docs extra: "
                   "pip install -e '.[docs]')")
        if IN_CI:
            pytest.fail(message + "; CI installs it with the test extra")
        pytest.skip(message + "; it runs in CI (CI=true)")


def _sphinx(source: Path, out: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
    return subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         "-d", str(out / "doctrees"), str(source), str(out / "html")],
        capture_output=True, text=True, timeout=600, env=env, cwd=ROOT)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site built as CI builds it: ``python -m sphinx -W docs OUT``."""
    _need_sphinx()
    out = tmp_path_factory.mktemp("site")
    proc = _sphinx(DOCS, out)
    assert proc.returncode == 0, proc.stderr[-6000:]
    assert "WARNING" not in proc.stderr, proc.stderr[-6000:]
    return out / "html"


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


# -- the build -------------------------------------------------------------------------------
def test_api_reference_lists_every_public_name(site):
    public = {"bayeslaw": [n for n in bl.__all__ if n not in {"__version__", "testing",
                                                                "simulate"}],
              "bayeslaw.testing": list(bayeslaw.testing.__all__)}
    for module, names in public.items():
        for name in names:
            page = site / "api" / "generated" / f"{module}.{name}.html"
            assert page.is_file(), f"{module}.{name} has no API page"
            assert f"{module}.{name}" in _text(page.read_text(encoding="utf-8")).replace(
                " . ", ".").replace(". ", "."), page
    index = (site / "api" / "index.html").read_text(encoding="utf-8")
    linked = set(re.findall(r'href="generated/(bayeslaw\.[A-Za-z_]+)\.html', index))
    assert linked == {f"bayeslaw.{n}" for n in public["bayeslaw"]}
    testing_page = (site / "api" / "testing.html").read_text(encoding="utf-8")
    assert set(re.findall(r'href="generated/bayeslaw\.testing\.([A-Za-z_]+)\.html',
                          testing_page)) == set(public["bayeslaw.testing"])


def test_function_pages_show_their_parameters(site):
    for module, name in (("bayeslaw", "fit"), ("bayeslaw", "load"), ("bayeslaw", "predict"),
                         ("bayeslaw.testing", "sbc")):
        func = getattr(sys.modules[module], name)
        html = (site / "api" / "generated" / f"{module}.{name}.html").read_text(encoding="utf-8")
        assert "Parameters" in _text(html), name
        assert ("Returns" in _text(html)) == ("Returns\n" in func.__doc__), name
        params = [p for p in inspect.signature(func).parameters
                  if p not in {"kwargs", "args", "fit_kwargs"}]
        missing = [p for p in params  # an entry may name several ("draws, tune, chains")
                   if not re.search(rf"<strong>[^<]*\b{p}\b[^<]*</strong>", html)]
        assert not missing, f"{module}.{name}'s page lacks the parameters {missing}"


def test_internal_paths_resolve_and_missing_names_fail(tmp_path):
    """A docstring that names an object by its internal path links to its public page; a
    reference to nothing still fails the build, as ``-W`` promises."""
    _need_sphinx()
    source = tmp_path / "src"
    source.mkdir()
    shutil.copy(DOCS / "conf.py", source / "conf.py")
    (source / "_static").mkdir()
    (source / "index.rst").write_text(
        "Probe\n=====\n\n.. autofunction:: bayeslaw.fit\n\n"
        "See :func:`bayeslaw.inference.sampling.fit` and :mod:`bayeslaw.model.arithmetic`.\n",
        encoding="utf-8")
    proc = _sphinx(source, tmp_path / "ok")
    assert proc.returncode == 0, proc.stderr[-3000:]
    html = (tmp_path / "ok" / "html" / "index.html").read_text(encoding="utf-8")
    assert 'href="#bayeslaw.fit"' in html  # the internal path, linked to the public name
    (source / "index.rst").write_text(
        "Probe\n=====\n\nSee :func:`bayeslaw.no_such_function`.\n", encoding="utf-8")
    proc = _sphinx(source, tmp_path / "broken")
    assert proc.returncode != 0
    assert "bayeslaw.no_such_function" in proc.stderr and "not found" in proc.stderr


# -- in a real browser (tests/browser.py) ----------------------------------------------------
def _open(binary: str, page: Path, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """The page's DOM after load, and what the image probe found."""
    return probe(binary, page.read_text(encoding="utf-8"), page.with_name(f"_probe_{page.name}"),
                 tmp_path / "profile")


def _screenshot(chromium: str, page: Path, shot: Path, tmp_path: Path) -> float:
    """Screenshot a page; the share of pixels that are not white."""
    import matplotlib.image as mpimg

    proc = browser(chromium, tmp_path / "profile", f"--screenshot={shot}",
                    "--window-size=1400,2000", page.as_uri())
    assert shot.is_file(), proc.stderr[-2000:]
    pixels = mpimg.imread(shot)[..., :3]
    assert pixels.shape[:2] == (2000, 1400)
    return float((pixels < 0.95).any(axis=-1).mean())


@pytest.mark.browser
def test_api_page_renders_in_chromium(site, tmp_path):
    chromium = find_chromium()
    page = site / "api" / "generated" / "bayeslaw.fit.html"
    dom, _ = _open(chromium, page, tmp_path)
    text = _text(dom)
    assert "bayeslaw.fit" in text.replace(" . ", ".").replace(". ", ".")
    for word in ("Parameters", "Returns", "data", "spec", "seed", "strict", "Fit"):
        assert word in text, word
    assert _screenshot(chromium, page, tmp_path / "api.png", tmp_path) > 0.02


@pytest.mark.browser
def test_tutorial_page_shows_its_figures_in_chromium(site, tmp_path):
    chromium = find_chromium()
    page = site / "tutorials" / "01_quickstart.html"
    dom, probe = _open(chromium, page, tmp_path)
    assert "bl.fit" in _text(dom)
    figures = re.findall(r'<img[^>]+src="(\.\./_images/[^"]+\.png)"', dom)
    assert len(figures) >= 3, "the quickstart's figures are missing from its page"
    assert int(probe["data-images"]) >= len(figures) and probe["data-broken"] == ""
    # the law's formula is typeset by the site's own MathJax (no network: the CDN's script
    # never loaded, and the page showed raw LaTeX)
    assert "mjx-container" in dom, "MathJax did not typeset the quickstart's formulas"
    assert _screenshot(chromium, page, tmp_path / "tutorial.png", tmp_path) > 0.02


# -- what the build renders, checked without it ----------------------------------------------
def _code_cells(path: Path) -> list[dict]:
    return [c for c in json.loads(path.read_text(encoding="utf-8"))["cells"]
            if c["cell_type"] == "code"]


@pytest.mark.parametrize("name", sorted(p.name for p in (ROOT / "notebooks").glob("*.ipynb")))
def test_stored_tutorials_are_the_notebooks_executed(name):
    """``docs/tutorials`` holds each notebook executed in quick mode, with the notebook's own
    code: after editing a notebook, run ``python docs/execute_notebooks.py NAME``."""
    stored = DOCS / "tutorials" / name
    assert stored.is_file(), f"run: python docs/execute_notebooks.py {name}"
    source, executed = _code_cells(ROOT / "notebooks" / name), _code_cells(stored)
    assert ["".join(c["source"]) for c in executed] == ["".join(c["source"]) for c in source], (
        f"docs/tutorials/{name} is stale: run python docs/execute_notebooks.py {name}")
    assert all(c["execution_count"] for c in executed), f"{name}: a cell was not executed"
    errors = [o for c in executed for o in c["outputs"] if o["output_type"] == "error"]
    assert not errors, f"{name}: a cell raised {errors[0]['ename']}"
    images = [o for c in executed for o in c["outputs"] if "image/png" in o.get("data", {})]
    assert images, f"{name} stores no figure"
    assert stored.stat().st_size < 3_000_000, f"{name}: outputs over 3 MB"


def test_readme_is_short_and_its_links_resolve():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 250
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if "://" not in link]
    assert len(local) >= 10
    missing = [link for link in local if not (ROOT / link).exists()]
    assert not missing, f"README.md links to missing files: {missing}"


def test_inventories_name_every_test_and_benchmark():
    tests = (ROOT / "tests" / "README.md").read_text(encoding="utf-8")
    missing = [name for p in sorted((ROOT / "tests").rglob("test_*.py"))
               if f"`{(name := p.relative_to(ROOT / 'tests').as_posix())}`" not in tests]
    assert not missing, f"tests/README.md does not describe {missing}"
    benches = (ROOT / "benchmarks" / "README.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted((ROOT / "benchmarks").glob("*.py"))
               if f"`{p.name}`" not in benches]
    assert not missing, f"benchmarks/README.md does not describe {missing}"
    named = set(re.findall(r"`([a-z][\w-]*_\d{4}-\d{2}-\d{2}[\w-]*\.(?:csv|md))`", benches))
    stored = {p.name for p in (ROOT / "benchmarks" / "results").iterdir()}
    assert len(named) >= 10 and named <= stored, f"missing results files: {named - stored}"

"""Sphinx configuration of bayeslaw's documentation site.

Build it with warnings as errors (what ``tests/test_docs.py`` runs in CI)::

    pip install -e ".[docs]"
    python -m sphinx -W docs docs/_build

The API pages document every public name by the name a user calls (``bayeslaw.fit``,
``bayeslaw.testing.sbc``), never by the module it happens to live in: before autodoc reads
them, each exported object's ``__module__`` is set to the public module, so signatures and
cross-references name ``bayeslaw.LossData`` rather than an internal path.  The tutorials are
rendered from ``docs/tutorials/*.ipynb``, copies of ``notebooks/*.ipynb`` executed once in
quick mode by ``docs/execute_notebooks.py``; the build does not execute them.
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import bayeslaw  # noqa: E402
import bayeslaw.simulate  # noqa: E402
import bayeslaw.testing  # noqa: E402

project = "bayeslaw"
author = "bayeslaw developers"
copyright = "bayeslaw developers, Apache-2.0"  # noqa: A001 - Sphinx's name
version = release = bayeslaw.__version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax copied into the site, so that formulas render without a network (the CDN's
    # script never loads offline, and the notebook pages then showed raw LaTeX)
    "sphinx-mathjax-offline",  # (its module name has hyphens)
    "numpydoc",
    "myst_nb",
    "sphinx_copybutton",
]

source_suffix = {".rst": "restructuredtext", ".md": "myst-nb", ".ipynb": "myst-nb"}
# jupyter_execute: where myst-nb writes a notebook's outputs, beside the build folder (docs/
# when building to docs/_build): a build product, never a source
exclude_patterns = ["_build", "jupyter_execute", "Thumbs.db", ".DS_Store",
                    "**.ipynb_checkpoints", "execute_notebooks.py"]
templates_path = ["_templates"]
html_static_path = ["_static"]

# -- the theme: PyMC / ArviZ's ---------------------------------------------------------------
html_theme = "pydata_sphinx_theme"
html_title = f"bayeslaw {release}"
html_theme_options = {
    "navbar_align": "left",
    "show_toc_level": 2,
    "secondary_sidebar_items": ["page-toc"],
    "footer_start": ["copyright"],
    "footer_end": [],
}
html_sidebars = {"index": []}
html_show_sourcelink = False

# -- the notebooks: rendered with their stored outputs, never executed here -------------------
nb_execution_mode = "off"
nb_merge_streams = True
# the notebooks go from their title (H1) to H3 in places: a matter of style, not content
suppress_warnings = ["myst.header"]
myst_enable_extensions = ["dollarmath", "colon_fence"]
myst_heading_anchors = 3

# -- API reference ----------------------------------------------------------------------------
autosummary_generate = True
autodoc_default_options = {"members": False}
autodoc_typehints = "none"           # types are in each docstring's Parameters / Returns
numpydoc_show_class_members = False  # each class page lists its members itself (template)
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = True
numpydoc_xref_ignore = "all"         # a word of a type field that is no alias stays text
numpydoc_validation_checks: set[str] = set()
#: bayeslaw's own types in the docstrings' type fields link to their pages.
numpydoc_xref_aliases = {name: f"bayeslaw.{name}" for name in (
    "LossData", "ModelSpec", "Fit", "Fits", "Prediction", "Derived", "Comparison",
    "BacktestResult", "Diagnostics", "Thresholds", "SamplerSettings", "Prior")}
numpydoc_xref_aliases["CheckResult"] = "bayeslaw.testing.CheckResult"


def _literal_aliases() -> dict[str, str]:
    """Python's and third-party types (numpydoc links them through intersphinx) as code text.

    The build reads no network (no intersphinx inventories), so ``float``, ``pd.DataFrame``
    and the like are shown as code, not links, rather than left as broken references.
    """
    from numpydoc.xref import DEFAULT_LINKS

    words = set(DEFAULT_LINKS) | {"pd.DataFrame", "pandas.DataFrame", "np.ndarray",
                                  "numpy.ndarray", "Path", "pathlib.Path", "Figure",
                                  "matplotlib.figure.Figure", "Axes", "matplotlib.axes.Axes",
                                  "xarray.Dataset", "az.InferenceData", "InferenceData"}
    return {word: f"``{word}``" for word in words}


numpydoc_xref_aliases = {**_literal_aliases(), **numpydoc_xref_aliases}

# warnings are errors (-W); a cross-reference that resolves nowhere is one
nitpicky = True
nitpick_ignore: list[tuple[str, str]] = []  # none needed: see _resolve_internal below


def _public_modules() -> dict[str, list[str]]:
    """Each public module and the names it documents (``bayeslaw.__all__`` and the others)."""
    simulate = [name for name, obj in vars(bayeslaw.simulate).items()
                if not name.startswith("_") and (inspect.isfunction(obj) or inspect.isclass(obj))
                and obj.__module__ == "bayeslaw.simulate"]
    return {"bayeslaw": [n for n in bayeslaw.__all__ if n not in {"testing", "simulate",
                                                                  "__version__"}],
            "bayeslaw.testing": list(bayeslaw.testing.__all__),
            "bayeslaw.simulate": sorted(simulate)}


def _publish() -> None:
    """Give every exported class and function its public module, as users spell it."""
    for module, names in _public_modules().items():
        namespace = sys.modules[module]
        for name in names:
            obj = getattr(namespace, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                obj.__module__ = module


def _lookup(name: str) -> object | None:
    """The object at a dotted name inside the package (modules imported as needed)."""
    import importlib

    parts = name.split(".")
    if parts[0] != "bayeslaw":
        return None
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            if not hasattr(obj, attr):
                return None
            obj = getattr(obj, attr)
        return obj
    return None


def _find(target: str, module: str | None, cls: str | None) -> str | None:
    """The full name of what a docstring's reference names; None when nothing has that name.

    The name is tried as written, in the reference's class, in its module and in every module
    of the package (``Recalibration``, ``sweep.plot_grid``).
    """
    prefixes = [f"{module}.{cls}." if module and cls else "", f"{module}." if module else "",
                "", "bayeslaw."]
    prefixes += [f"{m}." for m in sorted(sys.modules) if m.startswith("bayeslaw.")]
    return next((p + target for p in prefixes if _lookup(p + target) is not None), None)


def _public_name(full: str) -> str | None:
    """The public name of an object or of the public class it belongs to, else None.

    ``bayeslaw.data.table.LossData.thin`` -> ``bayeslaw.LossData.thin``.
    """
    parts = full.split(".")
    exported = {id(getattr(sys.modules[m], n)): f"{m}.{n}"
                for m, names in _public_modules().items() for n in names}
    exported.update({id(sys.modules[m]): m for m in _public_modules()})
    for cut in range(len(parts), 1, -1):
        public = exported.get(id(_lookup(".".join(parts[:cut]))))
        if public is not None:
            return ".".join([public, *parts[cut:]])
    return None


def _resolve_internal(app, env, node, contnode):
    """Resolve a docstring's reference to an internal path by the object's public name.

    ``bayeslaw.inference.sampling.fit`` links to the page of ``bayeslaw.fit``; a reference to an
    internal object without a public page (an internal module, a helper class) is shown as
    code without a link.  A reference to nothing that exists still warns, and so fails the
    build.
    """
    if node.get("refdomain") != "py":
        return None
    full = _find(node["reftarget"].lstrip("~."), node.get("py:module"), node.get("py:class"))
    if full is None:
        return None
    public = _public_name(full)
    domain = env.get_domain("py")
    for reftype in (node["reftype"], "obj"):
        ref = public and domain.resolve_xref(env, node["refdoc"], app.builder, reftype, public,
                                             node, contnode)
        if ref is not None and ref is not False and ref != "":
            return ref
    return contnode


def setup(app):
    """Publish the exported names and resolve internal references (see above)."""
    app.connect("missing-reference", _resolve_internal)


_publish()

"""Execute the tutorial notebooks in quick mode and store them, outputs included, for the docs.

The docs build renders ``docs/tutorials/*.ipynb`` without executing them (``conf.py``:
``nb_execution_mode = "off"``), so that building the site costs seconds, not the minutes of
MCMC the four notebooks take.  Rerun this after changing a notebook (``tests/test_docs.py``
fails while a stored copy's code differs from ``notebooks/``)::

    python docs/execute_notebooks.py            # all four, about 4 minutes on 2 cores
    python docs/execute_notebooks.py 01_quickstart

Quick mode is the one CI uses (``notebooks/conftest.py``): 100 tuning steps and 100 draws
per chain, curves thinned to 10 points per run, so the outputs show what the code prints and
draws, not estimates to quote.  ``04_real_data`` reads ``../shared/data`` beside the
repository.
"""

from __future__ import annotations

import base64
import io
import os
import re
import sys
import time
from pathlib import Path

import nbformat
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parent.parent
SOURCE = ROOT / "notebooks"
TARGET = ROOT / "docs" / "tutorials"
#: Quick mode, as notebooks/conftest.py sets it for nbmake.
QUICK = {"BAYESLAW_NB_DRAWS": "100", "BAYESLAW_NB_TUNE": "100"}


def _quantized(png: str, colors: int) -> str:
    """A base64 PNG re-encoded with a palette of ``colors``."""
    from PIL import Image

    image = Image.open(io.BytesIO(base64.b64decode(png)))
    buffer = io.BytesIO()
    image.convert("RGB").quantize(colors=colors, method=Image.Quantize.MEDIANCUT).save(
        buffer, "PNG", optimize=True)
    return base64.b64encode(buffer.getvalue()).decode("ascii")


def compress(nb: nbformat.NotebookNode, colors: int = 128) -> None:
    """Re-encode every PNG output with a palette of ``colors``: a third of the size.

    PNGs inside an HTML output (the report displayed inline) are re-encoded too.
    """
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if "image/png" in data:
                data["image/png"] = _quantized(data["image/png"], colors) + "\n"
            if "text/html" in data:
                html = "".join(data["text/html"])
                data["text/html"] = re.sub(
                    r"(data:image/png;base64,)([A-Za-z0-9+/=]+)",
                    lambda m: m.group(1) + _quantized(m.group(2), colors), html)


def execute(path: Path) -> Path:
    """Execute one notebook in quick mode in ``notebooks/`` and write its copy with outputs."""
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3",
                   resources={"metadata": {"path": str(SOURCE)}}).execute()
    for cell in nb.cells:  # no timings or ids that change on every run
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    compress(nb)
    out = TARGET / path.name
    nbformat.write(nb, out)
    return out


def main(names: list[str]) -> None:
    """Execute the named notebooks (all of ``notebooks/*.ipynb`` when none is named)."""
    for key, value in QUICK.items():
        os.environ.setdefault(key, value)
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    TARGET.mkdir(exist_ok=True)
    paths = sorted(SOURCE.glob("*.ipynb"))
    if names:
        paths = [p for p in paths if p.stem in names or p.name in names]
    for path in paths:
        start = time.perf_counter()
        out = execute(path)
        print(f"{path.name}: {time.perf_counter() - start:.0f} s, "
              f"{out.stat().st_size / 1e3:.0f} kB", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

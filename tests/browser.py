"""Headless Chromium for the tests that open a page (marker ``browser``): the report's and
the documentation site's.

``.ci/run`` installs Debian's ``chromium``; without it these tests skip, and fail in CI.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

#: Appended to a copy of a page (beside it, so relative paths resolve; the page itself holds
#: no script): after the load event, <body> lists the number of images and those that failed
#: to decode (naturalWidth 0).
IMAGE_PROBE = """<script>window.addEventListener("load", function () {
  var bad = [], imgs = document.images;
  for (var i = 0; i < imgs.length; i++) {
    if (!imgs[i].complete || imgs[i].naturalWidth === 0) { bad.push(i); }
  }
  document.body.setAttribute("data-images", String(imgs.length));
  document.body.setAttribute("data-broken", bad.join(","));
});</script>
"""


def chromium() -> str:
    """The Chromium binary; skip without one, fail in CI."""
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if os.access("/usr/bin/chromium", os.X_OK) else None)
    if found is None:
        if os.environ.get("CI") == "true":
            pytest.fail("chromium is required in CI (.ci/run installs Debian's package)")
        pytest.skip("no chromium binary")
    return found


def browser(binary: str, profile: Path, *args: str) -> subprocess.CompletedProcess:
    """Run headless Chromium with a new profile and no background networking."""
    return subprocess.run(
        [binary, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
         "--no-first-run", "--disable-background-networking", "--disable-component-update",
         "--disable-sync", "--disable-dev-shm-usage", f"--user-data-dir={profile}", *args],
        capture_output=True, text=True, timeout=180)


def probe(binary: str, html: str, page: Path, profile: Path) -> tuple[str, dict[str, str]]:
    """Write ``html`` with :data:`IMAGE_PROBE` to ``page``, load it: its DOM and the probe's."""
    page.write_text(html.replace("</body>", IMAGE_PROBE + "</body>"), encoding="utf-8")
    proc = browser(binary, profile, "--virtual-time-budget=10000", "--dump-dom", page.as_uri())
    body = re.search(r"<body([^>]*)>", proc.stdout)
    assert body, proc.stderr[-2000:]
    return proc.stdout, dict(re.findall(r'(data-[a-z]+)="([^"]*)"', body.group(1)))

"""Opening a report in headless Chromium (Debian's chromium + chromium-driver, driven by
selenium): the page's console errors and a screenshot of one element."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Without these, Chromium on a machine without network keeps trying to reach Google's
# hosts and its connections are refused, many at a time.
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", "--window-size=1280,1600")


def _scratch() -> str:
    """A short directory of this process's own for Chromium's TMPDIR, removed when the
    process ends. Chromium makes a directory for its singleton socket in TMPDIR and
    leaves it when it quits (about three in /tmp per test session, 109 there after a day's
    runs); a test's tmp_path would hold them, but under pytest-xdist its path is too long
    for the socket's name (about 108 bytes) and Chromium does not start."""
    global _SCRATCH
    if _SCRATCH is None:
        _SCRATCH = tempfile.mkdtemp(prefix="mo-chromium-", dir="/tmp")
        atexit.register(shutil.rmtree, _SCRATCH, True)
    return _SCRATCH


_SCRATCH: str | None = None


def browser_or_skip():
    """A selenium Chrome driver on Debian's Chromium, or skip saying what is missing."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium not installed "
                                    "(make setup installs it)")
    for path, pkg in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not Path(path).is_file() and not shutil.which(Path(path).name):
            pytest.skip(f"{path} missing (apt-get install {pkg}; .ci/run installs it)")
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    env = {**os.environ, "TMPDIR": _scratch()}
    return webdriver.Chrome(service=Service(CHROMEDRIVER, env=env), options=options)


def console_errors(driver) -> list[str]:
    return [e["message"] for e in driver.get_log("browser") if e.get("level") == "SEVERE"]

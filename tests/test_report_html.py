"""verify.html: self-contained, its summary equal to verify.json, and — in a real headless Chromium — loading with
no console error and every figure rendered at a non-zero size. A screenshot of the top of the page is kept in
tests/artefacts/ (.ci/run installs Debian's chromium; without it the browser tests skip and say so)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from checks.runners.cli import main

ARTEFACTS = Path(__file__).parent / "artefacts"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    d = tmp_path_factory.mktemp("html")
    rc = main(["verify", "--quick", "--claims", "flat.near_flattest", "rob.structured", "suite.verdicts",
               "--report-dir", str(d), "--no-progress", "--jobs", "1"])
    assert rc in (0, 1)
    return d, json.loads((d / "verify-quick.json").read_text()), (d / "verify-quick.html").read_text()


def test_the_page_is_self_contained(report):
    _, _, page = report
    assert "<img class='figure'" in page and "data:image/png;base64," in page
    assert not re.search(r"""(src|href)=['"]https?://""", page)   # nothing fetched from the network


def test_summary_rows_equal_the_json(report):
    _, rep, page = report
    ids = re.findall(r"<tr[^>]* data-id='([^']+)'", page)
    assert sorted(ids) == sorted(c["id"] for c in rep["claims"])
    words = dict(re.findall(r"<tr[^>]* data-id='([^']+)'>.*?data-verdict='([^']*)'", page))
    assert words == {c["id"]: c["verdict"] for c in rep["claims"]}
    for c in rep["claims"]:   # each claim links to its module and has its own section
        assert f"id='{c['id']}'" in page and f"href='#{c['id']}'" in page


def _chromium(args, page: Path):
    out = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                          "--v=0", "--virtual-time-budget=5000", *args, page.resolve().as_uri()],
                         capture_output=True, text=True, timeout=120)
    errors = [ln for ln in out.stderr.splitlines() if "CONSOLE" in ln and re.search(r"Uncaught|Error", ln)]
    return out.stdout, errors


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (.ci/run installs Debian's chromium)")
def test_chromium_loads_it_without_console_errors_and_renders_every_figure(report):
    d, _, _ = report
    page = d / "verify-quick.html"
    dom, errors = _chromium(["--dump-dom"], page)
    assert not errors, errors
    n = int(re.search(r'data-figures="(\d+)"', dom).group(1))
    rendered = int(re.search(r'data-figures-rendered="(\d+)"', dom).group(1))
    assert n >= 1 and rendered == n
    ARTEFACTS.mkdir(exist_ok=True)
    shot = ARTEFACTS / "verify_html_top.png"
    _chromium([f"--screenshot={shot}", "--window-size=1280,900"], page)
    assert shot.is_file() and shot.stat().st_size > 5000


@pytest.mark.skipif(CHROMIUM is None, reason="no chromium on this machine (.ci/run installs Debian's chromium)")
def test_the_console_check_sees_a_broken_script(report, tmp_path):
    d, _, page = report
    broken = tmp_path / "broken.html"
    broken.write_text(page.replace("</body>", "<script>undefinedFunction()</script></body>"))
    _, errors = _chromium(["--dump-dom"], broken)
    assert errors

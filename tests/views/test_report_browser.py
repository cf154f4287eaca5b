"""The run report in a real browser: headless Chromium (the Debian package) loads each run kind's page (a plan's too) with
no console error and no failed request, every image decodes, and the top of the page is not blank.

Driven with Playwright's Python API against the system Chromium (`pip install playwright`; no
`playwright install`: the browser is /usr/bin/chromium). Skips, saying why, when either is missing.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import pytest

from registry_copies import snakegate

CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
KINDS = ["succeeded", "failed", "cancelled", "interrupted", "fork", "rerun", "plain", "incomplete", "chat", "mcp",
         "hostile", "plan"]


def _chromium() -> str | None:
    for candidate in (os.environ.get("SNAKEGATE_CHROMIUM"), "/usr/bin/chromium", shutil.which("chromium"),
                      shutil.which("chromium-browser")):
        if candidate and Path(candidate).is_file():
            return candidate
    return None


@pytest.fixture(scope="module")
def browser():
    executable = _chromium()
    if executable is None:
        pytest.skip("Chromium is not installed (apt-get install chromium, as .ci/run does); the report's "
                    "browser check needs it")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.skip("playwright is not installed (pip install -e '.[test]'); it drives the system Chromium")
    profile = tempfile.mkdtemp(prefix="snakegate-chromium-")
    with sync_playwright() as p:
        context = p.chromium.launch_persistent_context(profile, executable_path=executable, headless=True,
                                                       args=CHROMIUM_ARGS, viewport={"width": 1200, "height": 800})
        try:
            yield context
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def run_of_kind(request):
    def pick(kind: str) -> Path:
        value = request.getfixturevalue(f"{kind}_run")
        return value[0] if isinstance(value, tuple) else value
    return pick


def _not_blank(png: bytes) -> float:
    """The share of the screenshot's pixels that are not the background colour."""
    import io

    from PIL import Image
    image = Image.open(io.BytesIO(png)).convert("RGB")
    colours = image.getcolors(maxcolors=1 << 20) or []
    background = max(colours)[0] if colours else 0
    return 1 - background / (image.width * image.height)


@pytest.mark.parametrize("kind", KINDS)
def test_the_report_loads_in_chromium_without_errors_and_every_image_decodes(browser, run_of_kind, kind, tmp_path):
    run = run_of_kind(kind)  # a plan's run is in the plan registry (tests/plan_runs.py), the others in prov_runs'
    page_path = tmp_path / f"{kind}.html"
    proc = snakegate(run.parents[1], "report", run.name, "-o", page_path)
    assert proc.returncode == 0, proc.stderr
    page = browser.new_page()
    problems = []
    page.on("console", lambda m: problems.append(f"console {m.type}: {m.text}") if m.type in ("error", "warning")
            else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.on("requestfailed", lambda r: problems.append(f"request failed: {r.url}"))
    page.on("request", lambda r: problems.append(f"request: {r.url}") if not r.url.startswith(("file:", "data:"))
            else None)
    try:
        page.goto(page_path.as_uri(), wait_until="load")
        images = page.evaluate("Array.from(document.images).map(i => ({ok: i.complete, w: i.naturalWidth}))")
        shot = page.screenshot()  # the top of the page: the viewport
        title = page.title()
    finally:
        page.close()
    assert problems == []
    assert all(i["ok"] and i["w"] > 0 for i in images), images
    made_pngs = [*run.glob("results/**/*.png"), *run.glob("steps/*/results/**/*.png")]  # a plan: every step's
    assert len(images) == len(made_pngs)
    assert run.name in title
    assert _not_blank(shot) > 0.02

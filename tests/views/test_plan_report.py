"""`snakegate report` of a plan's run: one page for the plan — its label, its invocation id and the edges
between its steps, then a section per step with that step's params (sensitive values masked), its outputs
(previews and plots within the page's one budget) and its jobs in the timeline. Escaped and reproducible as
every page is.

The runs are the session's real plan runs (tests/plan_runs.py); the page is read back with test_report's
parser (its visible text and its elements).
"""

from __future__ import annotations

import re

from plan_runs import PLAN_LABEL, PLAN_SECRET
from registry_copies import snakegate
from test_report import Page, report
from snakegate.views.params import MASK


def _jobs(html: str, step: str) -> list[str]:
    """The rules of a step section's jobs table, top to bottom."""
    section = html.split(f'id="step-{step}"')[1].split("</section>")[0]
    return re.findall(r"<td><code>(\w+)</code>", section.split("<h3>Jobs</h3>")[1])


def _section(html: str, ident: str) -> Page:
    """One <section id=...> of the page, parsed."""
    found = re.search(rf'<section id="{re.escape(ident)}"[^>]*>(.*?)</section>', html, re.S)
    assert found, f"no section {ident}"
    return Page(found.group(1))


def test_a_plan_page_has_the_plan_its_edges_and_a_section_per_step(plan_registry, plan_run):
    page, html = report(plan_registry, plan_run)
    plan = _section(html, "plan")
    invocation_id = plan_run.name.rsplit("-", 1)[1]
    assert f"label {PLAN_LABEL}" in plan.text and invocation_id in plan.text
    assert "bench.dataset ← clean.cleaned" in plan.text
    assert [a["href"] for a in plan.all("a")] == ["#step-clean", "#step-bench", "#step-note"]
    sections = [a["id"] for a in page.all("section") if a.get("id", "").startswith("step-")]
    assert sections == ["step-clean", "step-bench", "step-note"]
    assert f"plan {PLAN_LABEL}" in page.text.split("Status and times")[0]  # the page's title names the plan


def test_each_step_section_holds_its_params_outputs_and_jobs(plan_registry, plan_run):
    _page, html = report(plan_registry, plan_run)
    clean, bench = _section(html, "step-clean"), _section(html, "step-bench")
    assert "Step clean · tabular-profile 1.0.0" in clean.text and "feeds bench.dataset ← clean.cleaned" in clean.text
    assert "dataset_file data/examples/tabular-penguins.csv" in clean.text
    assert {a["id"] for a in clean.all("div") if a.get("id")} == {"output-clean.cleaned", "output-clean.profile",
                                                                  "output-clean.plot"}
    assert len(clean.all("img")) == 1 and all(i["src"].startswith("data:image/png;base64,") for i in clean.all("img"))
    assert "first 5 of 138 rows" in clean.text  # the cleaned table's preview
    assert sorted(_jobs(html, "clean")) == ["clean", "load", "plot", "profile"]
    assert "takes bench.dataset ← clean.cleaned" in bench.text and "dataset ← clean.cleaned" in bench.text
    assert "key number value accuracy" in bench.text  # metrics.json's key numbers
    assert _jobs(html, "bench") == ["load", "split", "train", "evaluate"]


def test_a_plan_page_masks_a_steps_sensitive_value(plan_registry, plan_run, plan_fork_run):
    for run in (plan_run, plan_fork_run):
        _page, html = report(plan_registry, run)
        assert PLAN_SECRET not in html and "hmac-sha256" not in html
    note = _section(html, "step-note")
    assert f"token {MASK}" in note.text and "label plan-note" in note.text


def test_a_forks_plan_page_says_which_steps_it_copied_from_its_parent(plan_registry, plan_fork_run, plan_run):
    page, html = report(plan_registry, plan_fork_run)
    assert f"Fork of run {plan_run.name}" in page.text and "changing bench.model to random_forest" in page.text
    for step in ("clean", "note"):
        assert "No job of this step ran in this run: its" in _section(html, f"step-{step}").text
        assert f"copied from run {plan_run.name}" in _section(html, f"step-{step}").text
    assert _jobs(html, "bench") == ["train", "evaluate"]


def test_an_interrupted_plans_page_says_so_and_which_step_was_cut_off(plan_registry, plan_interrupted_run):
    page, html = report(plan_registry, plan_interrupted_run)
    assert "interrupted" in page.text.split("Status and times")[0]
    wait = _section(html, "step-wait")
    assert "takes wait.table ← clean.cleaned" in wait.text and "not present" in wait.text  # done.txt was never made


def test_a_plan_pages_images_share_the_pages_one_budget(plan_registry, plan_run, monkeypatch):
    """Room for one image in all: the first step's plot is embedded, the next step's is listed with its sha256."""
    from snakegate.registry.settings import load_settings
    from snakegate.registry.workflows import Registry
    from snakegate.views import report as page

    plot = plan_run / "steps" / "clean" / "results" / "profile.png"
    monkeypatch.setattr(page, "IMAGES_BYTES", plot.stat().st_size)
    data = page.build(Registry.load(plan_registry), load_settings(plan_registry), plan_run)
    html = Page(page.render(data))
    assert [x["path"] for x in data["left_out"]] == ["steps/bench/results/confusion.png"]
    assert len(html.all("img")) == 1
    assert "steps/bench/results/confusion.png" in html.text and "were used by the images above" in html.text


def test_the_same_plan_run_gives_the_same_page_byte_for_byte(plan_registry, plan_run, tmp_path):
    first = snakegate(plan_registry, "report", plan_run.name, "-o", tmp_path / "a.html")
    second = snakegate(plan_registry, "report", plan_run.name, "-o", tmp_path / "b.html")
    assert first.returncode == second.returncode == 0
    assert (tmp_path / "a.html").read_bytes() == (tmp_path / "b.html").read_bytes()

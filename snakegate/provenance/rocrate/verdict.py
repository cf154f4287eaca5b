"""A run's verdict in its RO-Crate, for a reader of the crate who never opens prov.json.

The PROV record carries the verdict in W3C DQV (provenance/capture.py); the crate says the same in its
metadata, with the DQV terms added to the crate's context:

- each check of the workflow a `Metric` (`#metric-<check>`: name, description = what failing means);
- each check of this run a `QualityMeasurement` that is also a schema.org `PropertyValue` (so a reader that
  knows only schema.org still reads name, value and description): `isMeasurementOf` its metric,
  `computedOn` the output file it read (when the crate holds it), `value` the measured number, `verdict`
  pass|fail|unknown (snakegate's `sg:verdict`), and a description a person reads (`fail: /score = 0.3,
  needs >= 0.4 (param floor)`, then the check's sentence, or why it could not be measured);
- the run's CreateAction names its `verdict` and `hasQualityMeasurement` every measurement, and each
  output File the measurements computed on it; the crate's README.md gets a Verdict section.

A plan's checks are `<step>.<check>` and its outputs `<step>.<output>` (run.json's names). The verdict is read
from run.json defensively (provenance.verdicts); a run without one adds nothing. Only adds entities to the
crate being built.
"""

from __future__ import annotations

from urllib.parse import quote

from snakegate.provenance import verdicts
from snakegate.provenance.vocab import NAMESPACES, SG

DQV = NAMESPACES["dqv"]
TERMS = {"Metric": DQV + "Metric", "QualityMeasurement": DQV + "QualityMeasurement",
         "isMeasurementOf": DQV + "isMeasurementOf", "computedOn": DQV + "computedOn",
         "hasQualityMeasurement": DQV + "hasQualityMeasurement", "verdict": SG + "verdict"}


def add(crate, run_action) -> list[str]:
    """Add the verdict of `crate`'s run (an export._Crate being built) to its metadata; the README's lines
    about it ([] when the run has no verdict)."""
    verdict = verdicts.read(crate.record)
    if verdict is None:
        return []
    crate.crate.metadata.extra_terms.update(TERMS)
    paths = {o.get("name"): o.get("path") for o in crate.record.get("outputs") or [] if isinstance(o, dict)}
    summary = verdicts.summary_text(verdict)
    measurements, on_file = [], {}
    for check in verdict["checks"]:
        slug = quote(check["name"], safe="")
        metric = crate.add(f"#metric-{slug}", {"@type": "Metric", "name": check["name"],
                                               **({"description": check["says"]} if check.get("says") else {})})
        text = f"{check['status']}: {verdicts.measured_text(check)}" + \
            (f". {check['says']}" if check["status"] == "fail" and check.get("says") else "")
        props = {"@type": ["QualityMeasurement", "PropertyValue"], "name": f"check {check['name']}: {check['status']}",
                 "propertyID": check["name"], "verdict": check["status"], "description": text}
        if check.get("value") is not None:
            props["value"] = check["value"]
        measurement = crate.add(f"#check-{slug}", props)
        measurement["isMeasurementOf"] = metric
        file = crate.files.get(paths.get(check.get("output")) or "")
        if file is not None:
            measurement["computedOn"] = file
            on_file.setdefault(file.id, (file, []))[1].append(measurement)
        measurements.append(measurement)
    run_action["verdict"] = verdict["status"]
    run_action["description"] = f"{run_action.get('description') or ''}; verdict {summary}".lstrip("; ")
    if measurements:
        run_action["hasQualityMeasurement"] = measurements
    for file, found in on_file.values():
        file["hasQualityMeasurement"] = found
    lines = ["", "## Verdict", "", f"By its workflow's checks (workflow.yaml `evaluate:`) the run's verdict is "
             f"**{verdict['status']}**: {verdicts.counts_text(verdict)}.", ""]
    for check in verdict["checks"]:
        lines.append(f"- {verdicts.check_text(check)}")
        if check["status"] == "fail" and check.get("says"):
            lines.append(f"  What it means: {check['says']}")
    return lines

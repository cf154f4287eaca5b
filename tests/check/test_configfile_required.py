"""Issue 27 §2: a `configfile:` the workflow ships that lacks a param its contract requires is named.

Snakemake's hello-world (tests/realworkflows) ships config.yaml with its countries; its contract requires the
world cities table too (the file it used to download). On the registry path the configfile is ignored, but a
standalone run started in its folder loads it and is refused by validate(): check says which params it lacks.
"""
from snakegate.check import WorkflowFacts
from snakegate.check.keys import configfile_findings
from snakegate.check.reading import WorkflowSource

SCHEMA = {"type": "object", "required": ["cities", "countries"],
          "properties": {"cities": {"type": "string"}, "countries": {"type": "array"}}}


def _message(keys: dict) -> str:
    source = WorkflowSource(folder="workflows/wf", configfiles=[("workflows/wf/Snakefile", 1, "config.yaml")])
    (found,) = configfile_findings(WorkflowFacts(id="wf", folder="/r/workflows/wf", rel="workflows/wf", schema=SCHEMA,
                                                 source=source, configfile_keys=keys))
    assert found.code == "configfile_ignored" and found.severity == "warning"
    return found.message


def test_a_shipped_configfile_lacking_a_required_param_names_it():
    assert _message({"config.yaml": ["countries"]}).endswith(
        "it lacks the required params `cities`, so a standalone run started in the workflow folder needs them "
        "with --config or --configfile")


def test_a_configfile_the_workflow_does_not_ship_is_not_said_to_lack_anything():
    assert "lacks" not in _message({}) and "lacks" not in _message({"config.yaml": ["cities", "countries"]})

"""Real public Snakemake workflows brought in with `snakegate draft` (issue 15, "done when").

tests/realworkflows/<name>/upstream holds each workflow as fetched (LICENSE and ORIGIN beside it);
tests/realworkflows/registry holds the contributions. Proven here, with the real Snakemake and real tools:
draft reproduces each contribution's copied code from upstream, deterministically; the contribution changes
at most five lines of the workflow's own code, each one a defect the check named; every contribution passes
`snakegate check`; the tutorial (bwa, samtools, bcftools) and ETH NEXUS's basic workflow (numpy, pandas,
matplotlib) pass `snakegate test`, and the .fai bcftools writes beside the genome is reported and never
changes the workflow's content hash. Issue 27 adds workflows of other fields and shapes: CodeRefinery's
word-count (text processing; no config at all, books globbed from the working folder, scripts started from
`shell:` by paths relative to it) and Snakemake's own hello-world (geography: conda envs, a container, a
wrapper, a download, a generic `{prefix}.svg -> {prefix}.pdf` rule) and its C example (a software build: a
Makefile port in src/ beside include/, no config, globals in shell commands, temp() objects, a first rule
that builds rather than collects), proven the same way.
"""
import difflib
import json
import shutil
from pathlib import Path

import pytest
import yaml

from snakegate.registry.workflows import Registry

HERE = Path(__file__).resolve().parents[1] / "realworkflows"
REGISTRY = HERE / "registry"
NAMES = ["basic-snakemake-workflow", "snakemake-c-example", "snakemake-hello-world", "snakemake-tutorial",
         "word-count", "workflow-template"]
CODE_SUFFIXES = ("Snakefile", ".smk", ".py", ".R", ".r")
# Where the Snakefile lives inside upstream/ when not at its top: what `snakegate draft` is pointed at.
DRAFTED_FROM = {"snakemake-c-example": "src"}
# What a contributor may edit freely after drafting; everything else is the workflow's own, copied unchanged.
CONTRACT_FILES = ("workflow.yaml", "schema.json", "SKILL.md", "examples/", "test/")


def upstream_copy(name: str, dest: Path) -> Path:
    folder = dest / name
    shutil.copytree(HERE / name / "upstream", folder)
    if name == "snakemake-tutorial":  # its config names data/...: the generated data stands in for the tutorial's
        (folder / "data").symlink_to(REGISTRY / "data" / "tutorial")
    return folder / DRAFTED_FROM.get(name, "")


def files(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def changed_lines(before: str, after: str) -> int:
    ops = difflib.SequenceMatcher(None, before.splitlines(), after.splitlines()).get_opcodes()
    return sum(max(i2 - i1, j2 - j1) for tag, i1, i2, j1, j2 in ops if tag != "equal")


@pytest.fixture(scope="module")
def drafted(tmp_path_factory):
    """Each upstream drafted afresh into an empty registry: name -> drafted folder."""
    base = tmp_path_factory.mktemp("drafts")
    root = base / "registry"
    (root / "workflows").mkdir(parents=True)
    from snakegate.contribute.draft import draft

    return {name: draft(upstream_copy(name, base), root, name) for name in NAMES}


@pytest.mark.parametrize("name", NAMES)
def test_every_real_workflow_keeps_its_licence_and_origin(name):
    assert (HERE / name / "LICENSE").read_text().strip()
    origin = (HERE / name / "ORIGIN").read_text()
    assert "repository: https://github.com/" in origin and "licence: MIT" in origin


@pytest.mark.parametrize("name", NAMES)
def test_draft_copies_the_workflow_code_unchanged(drafted, name):
    have = files(drafted[name].folder)
    up = files(HERE / name / "upstream" / DRAFTED_FROM.get(name, ""))
    for rel, data in up.items():
        if rel.startswith(("data/", ".test/")) or rel.endswith(("config.yaml",)) and rel not in have:
            continue
        assert have.get(rel) == data, rel


@pytest.mark.parametrize("name", NAMES)
def test_the_contribution_is_the_draft_plus_contract_edits_and_at_most_five_code_lines(drafted, name):
    have = files(drafted[name].folder)
    final = files(REGISTRY / "workflows" / name)
    total = 0
    for rel in sorted(set(have) | set(final)):
        if rel.startswith(CONTRACT_FILES) or have.get(rel) == final.get(rel):
            continue
        assert rel.endswith(CODE_SUFFIXES), f"{rel} differs from the draft but is not contract or code"
        total += changed_lines(have.get(rel, b"").decode(), final.get(rel, b"").decode())
    assert total <= 5, f"{name}: {total} changed lines in the workflow's code"


def _drafted_with_contract_edits(drafted, name: str, cli) -> list[dict]:
    """The draft with the contribution's contract edits and none of its code edits, checked: its findings."""
    root = drafted[name].folder.parents[1]
    shutil.copytree(REGISTRY / "data", root / "data", dirs_exist_ok=True)
    shutil.copy(REGISTRY / "snakegate.toml", root / "snakegate.toml")  # the registry's own types (pdf)
    for part in ("examples", "schema.json", "workflow.yaml"):
        src, dest = REGISTRY / "workflows" / name / part, drafted[name].folder / part
        shutil.copytree(src, dest, dirs_exist_ok=True) if src.is_dir() else shutil.copy(src, dest)
    code, out, err = cli("--registry", root, "check", name, "--json", "--no-hygiene")
    return json.loads(out)["findings"]


def test_the_tutorials_four_code_changes_are_the_defects_check_named(drafted, cli):
    """Drafted as is, the tutorial fails check with exactly the defects its four changed lines fix."""
    findings = _drafted_with_contract_edits(drafted, "snakemake-tutorial", cli)
    errors = {(f["code"], f["rule"]) for f in findings if f["severity"] == "error"}
    assert ("config_not_validated", None) in errors
    assert ("hidden_input", "bwa_map") in errors
    final = (REGISTRY / "workflows/snakemake-tutorial/Snakefile").read_text()
    assert 'validate(config, "schema.json")' in final and final.count('config["genome"]') == 2


def test_the_basic_workflows_three_code_changes_are_the_defects_check_named(drafted, cli):
    """Drafted as is, it does not validate its config (an error) and draws its data without a seed (named as a
    warning for a community workflow: every run would give other numbers); its three changed lines fix both."""
    findings = _drafted_with_contract_edits(drafted, "basic-snakemake-workflow", cli)
    errors = {f["code"] for f in findings if f["severity"] == "error"}
    assert errors == {"config_not_validated"}
    (seed,) = [f for f in findings if f["code"] == "unseeded_random"]
    assert seed["file"] == "workflows/basic-snakemake-workflow/scripts/generate_data.py" and seed["rule"] == "generate_data"
    assert "np.random.normal" in seed["message"] and seed["severity"] == "warning"
    (ignored,) = [f for f in findings if f["code"] == "configfile_ignored"]
    assert "its keys `report` are not params of the contract" in ignored["message"]
    folder = REGISTRY / "workflows/basic-snakemake-workflow"
    assert 'validate(config, "schema.json")' in (folder / "Snakefile").read_text()
    assert "\nnp.random.seed(42)\n" in (folder / "scripts/generate_data.py").read_text()


def test_the_basic_workflow_passes_test_offline_with_its_seeded_data_byte_for_byte(cli):
    wf = Registry.load(REGISTRY).get("basic-snakemake-workflow")
    before = wf.content_hash()
    code, out, err = cli("--registry", REGISTRY, "test", "basic-snakemake-workflow")
    assert code == 0, out + err
    assert "ok    basic-snakemake-workflow/basic" in out
    for name, path in (("data", "results/data/alpha.csv"), ("data", "results/data/beta.csv"),
                       ("summary", "results/summary.csv")):
        assert f"identical        {name} ({path})\n" in out  # byte for byte: nothing after the path
    assert "summary_png (results/summary.png): exists and is not empty" in out
    assert "differs" not in out and "wrote beside its inputs" not in out
    assert wf.content_hash() == before


def test_draft_is_deterministic_and_never_overwrites(tmp_path):
    from snakegate.contribute.draft import draft
    from snakegate.errors import UserError

    upstream = upstream_copy("workflow-template", tmp_path)
    first, second = tmp_path / "one", tmp_path / "two"
    for root in (first, second):
        (root / "workflows").mkdir(parents=True)
        draft(upstream, root, "workflow-template")
    made = files(first / "workflows" / "workflow-template")
    assert made == files(second / "workflows" / "workflow-template")
    with pytest.raises(UserError, match="already exists; nothing was written"):
        draft(upstream, first, "workflow-template")
    assert files(first / "workflows" / "workflow-template") == made


def test_draft_reads_the_standard_layout_schema_and_sample_sheet(drafted):
    folder = drafted["workflow-template"].folder
    schema = json.loads((folder / "schema.json").read_text())
    sheet = schema["properties"]["sample_sheet"]
    assert sheet["x-artifact"] == "tsv-table" and set(sheet["x-sample-sheet"]["required"]) >= {"sample", "read1"}
    assert schema["additionalProperties"] is False
    assert schema["properties"]["simulate_reads"]["additionalProperties"] is False
    assert schema["properties"]["simulate_reads"]["default"] == {"read_length": 100, "read_number": 10000}
    manifest = (folder / "workflow.yaml").read_text()
    assert "simulate_reads:" in manifest and "read1: fastq.gz" in manifest and "multiqc_report:" in manifest
    assert any("rules.multiqc.input._1" in d for d in drafted["workflow-template"].decide)


def test_every_real_contribution_passes_check(cli):
    code, out, err = cli("--registry", REGISTRY, "check", "--json")
    report = json.loads(out)
    assert [f for f in report["findings"] if f["severity"] == "error"] == []
    assert code == 0 and report["workflows"] == NAMES
    named = {(f["workflow"], f["code"]) for f in report["findings"]}
    # what the template does that no check can prove is named, as warnings for a community workflow
    assert {("workflow-template", "wrapper_unchecked"), ("workflow-template", "download"),
            ("workflow-template", "configfile_ignored")} <= named


def test_the_tutorial_passes_test_and_its_fai_beside_the_genome_is_reported(cli):
    wf = Registry.load(REGISTRY).get("snakemake-tutorial")
    before = wf.content_hash()
    code, out, err = cli("--registry", REGISTRY, "test", "snakemake-tutorial")
    assert code == 0, out + err
    assert "ok    snakemake-tutorial/basic" in out
    assert "identical        calls (calls/all.vcf): identical apart from the ignored lines" in out
    assert "exists and is not empty" in out
    assert "wrote beside its inputs" in out and "genome.fa.fai (created; removed again)" in out
    assert not (REGISTRY / "data" / "tutorial" / "genome.fa.fai").exists()
    assert wf.content_hash() == before


def test_a_declared_output_pattern_expands_over_the_params_in_check_and_run_targets(tmp_path, cli):
    """outputs.<name>.path may be a {param} pattern: the check proves each expanded path is produced."""
    from snakegate.contract.outputs import expand

    params = {"samples": {"A": "a.fq", "B": "b.fq"}, "genome": "g.fa"}
    assert expand("sorted_reads/{samples}.bam", params) == ["sorted_reads/A.bam", "sorted_reads/B.bam"]
    root = tmp_path / "registry"
    shutil.copytree(REGISTRY, root, ignore=shutil.ignore_patterns("workflow-template"))
    manifest = root / "workflows/snakemake-tutorial/workflow.yaml"
    text = manifest.read_text().replace("outputs:\n", "outputs:\n  sorted:\n    path: sorted_reads/{samples}.bam\n"
                                        "    type: bam\n    description: One sorted alignment per sample.\n", 1)
    manifest.write_text(text)
    code, out, err = cli("--registry", root, "check", "snakemake-tutorial", "--json", "--no-hygiene")
    assert code == 0, out
    manifest.write_text(text.replace("sorted_reads/{samples}.bam", "sorted/{samples}.bam"))
    code, out, err = cli("--registry", root, "check", "snakemake-tutorial", "--json", "--no-hygiene")
    missing = [f["message"] for f in json.loads(out)["findings"] if f["code"] == "output_not_produced"]
    assert code == 1 and any("(sorted/A.bam) is not produced" in m for m in missing)


def _draft_by_cli(cli, tmp_path, name: str, wf_id: str):
    """`snakegate --registry <empty registry> draft <upstream copy> --id <wf_id>`: (exit code, stdout, folder)."""
    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    upstream = upstream_copy(name, tmp_path)
    code, out, err = cli("--registry", root, "draft", upstream, "--id", wf_id)
    assert "Traceback" not in out + err
    return code, out, root / "workflows" / wf_id


def _objects(schema: dict, where: str = "$"):
    """Every (where, node) in a JSON Schema that lists properties, the top included."""
    yield where, schema
    for key, sub in (schema.get("properties") or {}).items():
        if isinstance(sub.get("properties"), dict):
            yield from _objects(sub, f"{where}.{key}")


def test_snakegate_draft_turns_a_real_workflow_folder_into_a_contribution(tmp_path, cli):
    code, out, folder = _draft_by_cli(cli, tmp_path, "basic-snakemake-workflow", "basic")
    assert code == 0, out
    assert out.startswith("drafted workflows/basic (16 files)\nstill to decide:\n")
    upstream = HERE / "basic-snakemake-workflow" / "upstream"
    for rel in ("Snakefile", "scripts/generate_data.py", "scripts/plot_data.py", "scripts/aggregate_data.py"):
        assert (folder / rel).read_bytes() == (upstream / rel).read_bytes(), rel
    manifest = yaml.safe_load((folder / "workflow.yaml").read_text())
    assert manifest["id"] == "basic" and manifest["trust"] == "community"
    assert manifest["title"] == "Basic Snakemake Workflow"  # their README's heading
    assert manifest["rules"]["plot_data"] == {"input": {"_1": "csv-table"}, "output": {"_1": "png"}}
    assert manifest["outputs"]["summary"] == {"path": "results/summary.csv", "type": "csv-table",
                                              "description": "TODO: describe what summary.csv holds"}
    schema = json.loads((folder / "schema.json").read_text())
    for where, node in _objects(schema):
        assert node["additionalProperties"] is False, where
    # their config's comments above each key became its description, named for review
    assert {key: sub["description"] for key, sub in schema["properties"].items()} == {
        "samples": "Data generation parameters", "generate_data": "Rule params", "report": "Report params"}
    their = yaml.safe_load((upstream / "config" / "config.yaml").read_text())
    example = yaml.safe_load((folder / "examples" / "config.yaml").read_text())
    assert example["workflow"] == "basic"
    assert example["params"]["samples"] == their["samples"] and example["params"]["generate_data"] == {"n": 100}
    skill = (folder / "SKILL.md").read_text()
    assert skill.startswith("# Basic Snakemake Workflow (basic)\n") and "## Parameters" in skill and "## When the gate refuses" in skill
    assert "- `samples`: Data generation parameters" in skill and "- `generate_data`:" in skill
    decide = out.split("still to decide:\n", 1)[1]
    assert ("  - schema.json: the descriptions of samples, generate_data, report, report.toc are their config's "
            "comments; check each describes its param") in decide
    assert ("  - workflow.yaml: outputs.sample.path results/plots/{sample}.png has wildcards; make each a {param} "
            "placeholder") in decide
    assert "`snakegate check basic` and `snakegate test basic`" in decide


def test_draft_infers_the_schema_from_config_yaml_when_the_workflow_has_none(tmp_path, cli):
    """basic-snakemake-workflow has config/config.yaml and no config.schema.yaml: types from the values,
    their values as defaults (a nested object's default gathered from its properties)."""
    code, out, folder = _draft_by_cli(cli, tmp_path, "basic-snakemake-workflow", "basic")
    assert code == 0, out
    props = json.loads((folder / "schema.json").read_text())["properties"]
    assert props["samples"]["type"] == "array" and props["samples"]["items"] == {"type": "string"}
    assert props["samples"]["default"] == ["sample1", "sample2", "sample3"]
    n = props["generate_data"]["properties"]["n"]
    assert (props["generate_data"]["type"], n["type"], n["default"]) == ("object", "integer", 100)
    assert props["generate_data"]["default"] == {"n": 100}
    assert props["generate_data"]["additionalProperties"] is False  # closed: a misspelt `nn` is refused
    image = props["report"]["properties"]["image"]["properties"]
    assert image["link"] == {"type": "boolean", "description": "TODO: describe `link`", "default": False}
    assert image["width"]["type"] == "integer" and image["suffix"]["default"] == ["jpg", "png"]
    assert "schema.json: inferred from config values only; add ranges, enums and required params" in out


def _not_a_workflow(tmp_path: Path, kind: str) -> Path:
    if kind == "a file":
        (tmp_path / "notes.txt").write_text("x")
        return tmp_path / "notes.txt"
    if kind == "a Snakefile that does not parse":
        (tmp_path / "bad").mkdir()
        (tmp_path / "bad" / "Snakefile").write_text('rule a:\n    output "x"\n')
        return tmp_path / "bad"
    return tmp_path / "nowhere"


@pytest.mark.parametrize("kind, message", [
    ("a missing folder", "nowhere holds no Snakefile (nor workflow/Snakefile): point `snakegate draft` at the folder"),
    ("a file", "notes.txt holds no Snakefile"),
    ("a Snakefile that does not parse", "bad/Snakefile:2: the workflow does not parse: Colon expected after keyword "
                                        "output.; fix it first"),
])
def test_draft_of_a_path_that_is_no_workflow_is_a_clear_refusal_without_a_traceback(tmp_path, snakegate_cmd, kind,
                                                                                     message):
    import subprocess

    root = tmp_path / "registry"
    (root / "workflows").mkdir(parents=True)
    proc = subprocess.run([*snakegate_cmd, "--registry", str(root), "draft", str(_not_a_workflow(tmp_path, kind)),
                           "--id", "x"], capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0 and message in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stdout + proc.stderr
    assert list((root / "workflows").iterdir()) == []


def _check_with_snakefile(drafted, name: str, cli, edit) -> list[dict]:
    """Check the draft (with the contribution's contract edits) after `edit(Snakefile text)`: its findings."""
    snakefile = drafted[name].folder / "Snakefile"
    original = snakefile.read_text()
    snakefile.write_text(edit(original))
    try:
        root = drafted[name].folder.parents[1]
        code, out, err = cli("--registry", root, "check", name, "--json", "--no-hygiene")
        return json.loads(out)["findings"]
    finally:
        snakefile.write_text(original)


def test_the_word_counts_five_code_changes_are_the_defects_check_named(drafted, cli):
    """Drafted as is, word-count validates nothing and never reads the `books` its contract declares (it globs
    data/*.txt in the working folder); once the books come from the params, check names the scripts its shell
    commands start by a path relative to the working folder (the registry root on the registry path), not to
    the Snakefile. The five changed lines fix exactly these."""
    findings = _drafted_with_contract_edits(drafted, "word-count", cli)
    errors = {(f["code"], f["rule"]) for f in findings if f["severity"] == "error"}
    assert {("config_not_validated", None), ("unused_param", None), ("working_folder_glob", None)} <= errors
    (glob,) = [f for f in findings if f["code"] == "working_folder_glob"]
    assert (glob["file"], glob["line"]) == ("workflows/word-count/Snakefile", 2) and "`data/{book}.txt`" in glob["message"]
    assert {f["message"].split("`")[1] for f in findings if f["code"] == "artifact_not_consumed"} == {
        "books.isles", "books.abyss"}
    books_read = _check_with_snakefile(drafted, "word-count", cli, lambda text: text.replace(
        "DATA = glob_wildcards('data/{book}.txt').book", 'snakemake.utils.validate(config, "schema.json")\n'
        'DATA = list(config["books"])').replace("book='data/{file}.txt'",
                                                'book=lambda wildcards: config["books"][wildcards.file]'))
    hidden = [(f["rule"], f["message"]) for f in books_read if f["severity"] == "error"]
    assert len(hidden) == 1 and hidden[0][0] == "count_words" and "reads code/count.py" in hidden[0][1]
    assert hidden[0][1].endswith("names more files no rule makes: `make_plot`: code/plot.py")  # not only the first
    final = (REGISTRY / "workflows/word-count/Snakefile").read_text()
    assert final.count("workflow.source_path('code/") == 2 and 'config["books"]' in final
    assert 'snakemake.utils.validate(config, "schema.json")' in final


def test_word_count_passes_test_offline_on_its_generated_books(cli):
    wf = Registry.load(REGISTRY).get("word-count")
    before = wf.content_hash()
    code, out, err = cli("--registry", REGISTRY, "test", "word-count")
    assert code == 0, out + err
    assert "ok    word-count/basic" in out
    for book in ("isles", "abyss"):
        assert f"identical        counts (statistics/{book}.data)\n" in out
        assert f"plot (plot/{book}.png): exists and is not empty" in out
    assert "differs" not in out and "wrote beside its inputs" not in out
    assert wf.content_hash() == before


def test_draft_of_word_count_names_the_glob_of_the_working_folder_and_the_scripts_found_from_it(tmp_path, cli):
    """Its drafted contract is empty and its outputs' wildcards come from a glob: draft says where the inputs
    really come from, and that the scripts it names as inputs are looked up in the working folder."""
    code, out, folder = _draft_by_cli(cli, tmp_path, "word-count", "word-count")
    assert code == 0, out
    decide = out.split("still to decide:\n", 1)[1]
    assert ("  - Snakefile:2: the glob of `data/{book}.txt` lists the workflow's inputs in the working folder "
            "(the registry root on the registry path, so no param names them)") in decide
    for line, rule, script in ((10, "count_words", "code/count.py"), (18, "make_plot", "code/plot.py")):
        assert (f"  - Snakefile:{line}: rule `{rule}` names its input script, {script}, a file of the workflow, "
                f"relative to the working folder") in decide
        assert f"name it workflow.source_path('{script}') (check: hidden_input)" in decide
    assert "give rules.count_words.input.script its artifact type" not in decide


def test_the_hello_worlds_two_code_changes_are_the_defects_check_named(drafted, cli):
    """Drafted as is, it does not validate its config and takes its one input from a curl download (named for a
    community workflow as a warning: its data comes from the network, unseen by the gate); its two changed lines
    validate and read the table from the `cities` param. What no check can prove offline stays named."""
    findings = _drafted_with_contract_edits(drafted, "snakemake-hello-world", cli)
    errors = {f["code"] for f in findings if f["severity"] == "error"}
    assert errors == {"config_not_validated", "unused_param", "artifact_not_consumed"}
    (unread,) = [f for f in findings if f["code"] == "artifact_not_consumed"]
    assert "`cities`" in unread["message"]
    (download,) = [f for f in findings if f["code"] == "download"]
    assert download["rule"] == "download_data" and "`curl`" in download["message"]
    final = (REGISTRY / "workflows/snakemake-hello-world/Snakefile").read_text()
    assert 'snakemake.utils.validate(config, "schema.json")' in final and 'config["cities"]' in final
    code, out, err = cli("--registry", REGISTRY, "check", "snakemake-hello-world", "--json")
    report = json.loads(out)
    assert code == 0 and not [f for f in report["findings"] if f["severity"] == "error"]
    named = {f["code"] for f in report["findings"]}
    assert {"wrapper_unchecked", "download", "configfile_ignored", "tool_missing"} <= named
    (ignored,) = [f for f in report["findings"] if f["code"] == "configfile_ignored"]
    assert "it lacks the required params `cities`" in ignored["message"]  # a standalone run in its folder
    # download_data is no job of any run now, yet its declared output `_1` is its real first output
    assert "io_name_unknown" not in named


def test_the_c_examples_two_code_changes_are_the_defects_check_named(drafted, cli):
    """Drafted from upstream/src, it validates nothing and compiles `{name}.c` found from the working folder
    (the registry root on the registry path): check names both; the sources are found beside the Snakefile
    once named from workflow.basedir."""
    findings = _drafted_with_contract_edits(drafted, "snakemake-c-example", cli)
    errors = {(f["code"], f["rule"]) for f in findings if f["severity"] == "error"}
    assert errors == {("config_not_validated", None), ("hidden_input", "c_to_o")}
    (hidden,) = [f for f in findings if f["code"] == "hidden_input"]
    assert "reads hello.c" in hidden["message"]
    final = (REGISTRY / "workflows/snakemake-c-example/Snakefile").read_text()
    assert "join(workflow.basedir, '{name}.c')" in final and 'snakemake.utils.validate(config, "schema.json")' in final


def test_draft_of_the_c_example_takes_the_built_program_as_its_output_and_no_placeholder_as_a_tool(tmp_path, cli):
    """Its first rule builds `hello` rather than collecting targets, and its shell commands start with {CC}:
    the draft declares `hello` as the output and asks about {CC} instead of listing a tool named X."""
    code, out, folder = _draft_by_cli(cli, tmp_path, "snakemake-c-example", "c")
    assert code == 0, out
    manifest = yaml.safe_load((folder / "workflow.yaml").read_text())
    assert manifest["outputs"]["hello"]["path"] == "hello" and manifest["tools"] == []
    assert ("  - workflow.yaml: rule `c_to_o` starts its shell command with {CC}, a value of the Snakefile: if it "
            "names a program, list that under tools\n") in out


def test_the_c_example_builds_offline_with_gcc(cli):
    wf = Registry.load(REGISTRY).get("snakemake-c-example")
    before = wf.content_hash()
    code, out, err = cli("--registry", REGISTRY, "test", "snakemake-c-example")
    assert code == 0, out + err
    assert "ok    snakemake-c-example/basic" in out and "hello (hello): exists and is not empty" in out
    assert "wrote beside its inputs" not in out
    assert wf.content_hash() == before

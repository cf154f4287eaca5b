"""Reading a Snakefile whose `conda:`, `script:` or `wrapper:` is a variable or an expression, not a literal,
records the expression's text instead of crashing the whole read (which `snakegate check` reported as a
crash finding against a workflow that is fine)."""
from snakegate.check.reading import read_workflow


def test_a_conda_env_named_by_a_variable_is_read_as_its_expression(tmp_path):
    (tmp_path / "Snakefile").write_text('ENV = "envs/x.yaml"\n\nrule a:\n    output: "o.txt"\n    conda: ENV\n'
                                        '    shell: "touch {output}"\n')
    rules = {r.name: r for r in read_workflow(tmp_path).rules}
    assert rules["a"].conda == "ENV"
    assert rules["a"].shell == ["touch {output}"]


def test_a_script_path_built_by_an_f_string_is_read_as_its_expression(tmp_path):
    (tmp_path / "Snakefile").write_text('NAME = "x"\n\nrule b:\n    output: "o.txt"\n    script: f"scripts/{NAME}.py"\n')
    rules = {r.name: r for r in read_workflow(tmp_path).rules}
    assert "NAME" in rules["b"].script

"""How the suite runs (tests/suite_runner.py): in parallel by default and serially on request, tests that share a
fixture wider than a function on one worker, and a fast loop that refuses a test starting Snakemake unmarked.

Each test runs a small pytest session of its own (pytester) with the plugin loaded, as the README's commands do.
"""

from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent
CONFTEST = 'pytest_plugins = ["suite_runner"]\n'


def groups(items) -> dict[str, str | None]:
    def group(item):
        marks = [m.args[0] for m in item.iter_markers("xdist_group")]
        return marks[0] if marks else None

    return {item.name: group(item) for item in items}


def test_tests_sharing_a_session_or_module_fixture_run_on_one_worker_and_the_rest_anywhere(pytester, monkeypatch):
    monkeypatch.syspath_prepend(str(TESTS))
    pytester.makeconftest(CONFTEST + "import pytest\n\n"
                          "@pytest.fixture(scope='session')\ndef runs():\n    return 1\n\n"
                          "@pytest.fixture(scope='session')\ndef reads_runs(runs):\n    return runs\n")
    pytester.makepyfile(
        test_a="import pytest\n\n@pytest.fixture(scope='module')\ndef table():\n    return 2\n\n"
               "def test_one(runs): pass\n\ndef test_alone(): pass\n\n"
               "def test_table(table): pass\n\ndef test_table_too(table): pass\n",
        test_b="def test_two(reads_runs): pass\n")
    items, _ = pytester.inline_genitems("-p", "no:xdist")
    assert groups(items) == {"test_one": "runs", "test_two": "runs",  # one session fixture, directly or not
                             "test_alone": None,
                             "test_table": "test_a.py", "test_table_too": "test_a.py"}  # one module's fixture


def test_the_test_command_runs_on_workers_and_builds_a_shared_session_fixture_once(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)  # this test may itself run on a worker: its runs must not inherit it
    pytester.makeconftest(CONFTEST + "import os, pathlib, pytest\n\n"
                          "@pytest.fixture(scope='session')\ndef runs():\n"
                          "    with open(pathlib.Path(__file__).parent / 'built.txt', 'a') as f:\n"
                          "        f.write(os.environ.get('PYTEST_XDIST_WORKER', 'none') + '\\n')\n")
    pytester.makepyfile(**{f"test_{m}": "".join(f"def test_{m}{i}(runs):\n    pass\n\n" for i in range(3))
                           + "".join(f"def test_{m}_alone{i}():\n    pass\n\n" for i in range(4)) for m in "ab"})
    parallel = pytester.runpytest_subprocess("-q")
    parallel.assert_outcomes(passed=14)
    built = (pytester.path / "built.txt").read_text().split()
    assert len(built) == 1 and built[0].startswith("gw"), built  # on a worker, and once for six tests on two
    (pytester.path / "built.txt").unlink()
    serial = pytester.runpytest_subprocess("-q", "-p", "no:xdist")
    serial.assert_outcomes(passed=14)
    assert (pytester.path / "built.txt").read_text().split() == ["none"]


def test_a_parametrized_session_fixture_is_built_once_per_param_on_one_worker_each(pytester, monkeypatch):
    # tests/curated_kinds.py's shape: one value per workflow, read by tests in two modules, one of them with a
    # second param of its own. A group name xdist cannot read as one (ending in "]") spread every test over the
    # workers, and each built the fixture again.
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)
    pytester.makeconftest(CONFTEST + "import os, pathlib, pytest\n\n"
                          "made = set()  # as curated_kinds.py: a value made once per process\n\n"
                          "@pytest.fixture(scope='session', params=['p', 'q'])\ndef each(request):\n"
                          "    if request.param not in made:\n"
                          "        made.add(request.param)\n"
                          "        with open(pathlib.Path(__file__).parent / 'built.txt', 'a') as f:\n"
                          "            f.write(request.param + ' ' + os.environ.get('PYTEST_XDIST_WORKER', 'none') + '\\n')\n"
                          "    return request.param\n")
    pytester.makepyfile(
        test_a="import pytest\n\n@pytest.mark.parametrize('kind,each', [(k, w) for w in 'pq' for k in 'xyz'], "
               "indirect=['each'])\ndef test_kinds(kind, each):\n    pass\n",
        test_b="import pytest\n\n@pytest.mark.parametrize('each', ['p', 'q'], indirect=True)\n"
               "def test_once(each):\n    pass\n\n" + "".join(f"def test_alone{i}():\n    pass\n\n" for i in range(4)))
    pytester.runpytest_subprocess("-q").assert_outcomes(passed=12)
    built = sorted((pytester.path / "built.txt").read_text().splitlines())
    assert [line.split()[0] for line in built] == ["p", "q"], built  # each param on one worker only


def test_what_a_module_builds_on_a_parametrized_fixture_is_grouped_per_param_and_by_its_own_module(pytester,
                                                                                                   monkeypatch):
    # tests/provenance/test_crate_every_kind.py's shape: a module's session fixture (`judged`) built on the
    # per-workflow runs, and another module's session fixture of the same name built on other runs. Keyed by
    # its name alone, `judged` tied every workflow's runs, and the other module's runs, into one group: all of
    # them on one worker, one after another.
    monkeypatch.syspath_prepend(str(TESTS))
    pytester.makeconftest(CONFTEST + "import pytest\n\n"
                          "@pytest.fixture(scope='session', params=['p', 'q'])\ndef each(request):\n"
                          "    return request.param\n\n"
                          "@pytest.fixture(scope='session')\ndef others():\n    return 0\n")
    pytester.makepyfile(
        test_a="import pytest\n\n@pytest.fixture(scope='session')\ndef judged(each):\n    return each\n\n"
               "@pytest.mark.parametrize('each', ['p', 'q'], indirect=True)\n"
               "def test_kind(each, judged):\n    pass\n",
        test_b="import pytest\n\n@pytest.fixture(scope='session')\ndef judged(others):\n    return others\n\n"
               "def test_other(judged):\n    pass\n")
    items, _ = pytester.inline_genitems("-p", "no:xdist")
    assert groups(items) == {"test_kind[p]": "each:p", "test_kind[q]": "each:q", "test_other": "test_b.py::judged"}


def test_the_fast_loop_fails_a_test_that_starts_snakemake_unmarked_and_names_where_to_mark_it(pytester,
                                                                                               monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_a="import subprocess, sys\n\n"
                               "def test_runs_snakemake():\n"
                               "    subprocess.run([sys.executable, '-m', 'snakemake', '--version'], check=True)\n\n"
                               "def test_runs_git():\n"
                               "    subprocess.run(['git', '--version'], check=True)\n")
    fast = pytester.runpytest_subprocess("-q", "-p", "no:xdist", "-m", "not slow")
    fast.assert_outcomes(passed=1, failed=1)
    fast.stdout.fnmatch_lines(["*test_runs_snakemake is not marked slow but started: * -m snakemake --version*",
                               "*SLOW_PATHS*tests/suite_runner.py*"])
    whole = pytester.runpytest_subprocess("-q", "-p", "no:xdist")  # outside the fast loop nothing is refused
    whole.assert_outcomes(passed=2)


def test_test_modules_rewritten_while_collecting_are_kept_even_where_bytecode_writing_is_off(pytester, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(TESTS))
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    pytester.makeconftest(CONFTEST)
    pytester.makepyfile(test_a="import importlib, sys\n\n"
                               "def test_a_test_still_writes_no_bytecode():\n"
                               "    assert sys.dont_write_bytecode\n"
                               "    sys.path.insert(0, '.')\n"
                               "    importlib.import_module('helper')\n")
    pytester.makepyfile(helper="VALUE = 1\n")
    pytester.runpytest_subprocess("-q", "-p", "no:xdist").assert_outcomes(passed=1)
    cached = sorted(p.name.split(".")[0] for p in (pytester.path / "__pycache__").glob("*.pyc"))
    assert cached == ["test_a"], cached  # the rewritten test module, and nothing the test imported itself

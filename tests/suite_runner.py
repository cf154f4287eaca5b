"""How the test suite runs: on every core by default, which tests are `slow`, which start first.

A pytest plugin (tests/conftest.py loads it through `pytest_plugins`):

- Parallel by default. `python -m pytest` runs as `-n auto --dist loadgroup --no-loadscope-reorder`
  (pytest-xdist) unless the command line chose (`-n N`, `-n 0`, `--dist MODE`), xdist is switched off
  (`-p no:xdist`, the serial run), or one process is wanted (`--pdb`, `--trace`, `-s`). This lives here and
  not in pyproject's `addopts` because `-p no:xdist` fails on an `-n` it no longer knows. `auto` is one
  worker more than the cores: the Slurm tests spend minutes waiting on the scheduler, not computing.
- One worker per shared fixture. Tests that use the same fixture wider than a function (a module's runs, the
  session's runs of every kind in prov_runs.py) form one xdist group, so each such fixture is built once,
  on one worker, instead of once on every worker that happens to get one of its tests. A parametrized one
  (curated_kinds.py: one workflow's runs per param), and any fixture built on it, makes a group per param;
  same-named session fixtures of two test modules are two fixtures.
- Long first. Under xdist the groups start first, the ones in FIRST before all (the waiting Slurm cluster,
  then the biggest groups), so the many small independent tests fill the gaps at the end. A serial run
  keeps the collection order.
- `slow`: a test that starts a Snakemake run, a terminal (tmux), a browser or a Slurm cluster, or needs a
  fixture that does: every test under SLOW_PATHS and every test using a fixture in SLOW_FIXTURES. The fast
  loop is `python -m pytest -m "not slow"`. There, a test that starts one of these anyway fails, naming the
  command it started and the lists to add it to, so the fast loop stays fast as tests are added.

- Bytecode first. Before any test, the controller writes snakegate's bytecode (compile_bytecode), so the
  suite's many Python processes load it instead of compiling the sources each time; and every process keeps
  the test modules pytest rewrites as it collects them (pytest_collection here), so the next run reads them.

It changes no test's behaviour: only where and in which order tests run, the marker, and the bytecode cache.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# Tests that start a Snakemake run, a terminal, a browser or Slurm: folders (ending in /), modules, or
# module::test (every parametrization of it), relative to tests/.
SLOW_PATHS: tuple[str, ...] = (
    "workflows/",                      # every curated workflow run for real, standalone and through snakegate
    "run/",                            # runs: faults, signals, job gate, pinning, staging, Slurm
    "views/",                          # reports of real runs, in text and in Chromium
    "agent/mcp/",                      # the MCP server as a process of its own, and its runs
    "plan/",                           # plans gated with their DAGs and run
    "tui/test_run_flow.py", "tui/test_run_flow_openai.py", "tui/test_terminal.py",
    "tui/test_chat_snapshots.py::test_run_panel_after_a_failed_run",
    "tui/test_used_draft_chat.py", "tui/test_newcomer_journey.py",
    "tui/test_approver_first_run.py", "tui/test_fork_draft_reads_as_parent.py",
    "agent/test_flow.py", "agent/test_damaged_runs_chat.py",
    "agent/test_ask.py::test_ask_yes_runs_the_draft_with_the_typist_as_approver",
    "agent/test_audit.py::test_a_run_records_the_hash_of_the_transcript_up_to_its_approval",
    "agent/test_controller.py::test_execute_with_the_ui_approval_runs_snakemake_and_records_the_origin",
    "commands/test_damaged_runs.py",
    "config/test_hostile.py::test_hostile_config_is_refused_by_plain_snakemake_before_any_job",
    "config/test_hostile.py::test_snakegate_run_refuses_an_alias_bomb_and_leaves_no_run",
    "config/test_hostile.py::test_yte_config_is_refused_by_validate_and_run_without_evaluating_it",
    "config/test_hostile.py::test_plain_snakemake_stops_a_yte_config_and_says_why",
    "config/test_size_refusals.py",
    "contribute/test_declarations_held.py", "contribute/test_testcases.py",
    "contribute/test_case_targets_and_profile.py",  # snakegate test with a profile and case targets, for real
    "contribute/test_draft_default_target.py::test_draft_picks_the_rule_snakemake_itself_builds_by_default",
    "provenance/test_secret_hashes.py", "provenance/test_pinned_snapshot.py",
    "provenance/test_reviewer_questions.py::test_the_same_config_in_two_clones_is_two_runs",
    "provenance/test_prov_o.py::test_every_file_of_every_job_is_used_and_generated_in_a_role",
    "test_layout.py::test_a_run_recorded_before_the_layout_move_still_verifies_reruns_and_forks",
    "test_suite_runner.py::test_the_test_command_runs_on_workers_and_builds_a_shared_session_fixture_once",
    "test_suite_runner.py::test_the_fast_loop_fails_a_test_that_starts_snakemake_unmarked_and_names_where_to_mark_it",
    "agent/actions/test_verdict_run_actions.py",
    "agent/guided/test_follow_ups.py",
    "tui/test_verdict_screens.py",
    "agent/test_refine_chat.py",
    "refine/",
    "provenance/test_verdict_dqv.py",
    "provenance/test_plan_rocrate.py::test_the_crate_of_a_plan_run_passes_the_provenance_run_crate_profile_at_required",
    "provenance/test_no_host_paths.py",  # its own registry with record_hostname = false, and two runs
    # plans, verdicts, refinement, results, own registries, soundness: found by the fast loop's guard
    "agent/guided/test_guided_plans.py::test_a_chain_request_proposes_the_chain_asks_each_step_and_runs_the_gated_plan_once_approved",
    "agent/guided/test_guided_show_verdict.py",
    "agent/test_alloy_dialogue.py",
    "agent/test_assess_run.py::test_an_assessment_quoting_the_record_is_kept_beside_it_and_shown_labelled_and_the_run_still_verifies",
    "agent/test_bench_repro.py",
    "agent/test_recovery.py::test_the_recovery_runs_as_a_new_node_linked_to_the_failing_check_in_run_json_and_prov",
    "agent/test_run_summary.py::test_each_plan_steps_sensitive_value_is_masked_by_its_own_contract",
    "check/test_broken.py::test_dynamic_config_access_alone_is_a_warning_and_exit_0",
    "check/test_preflight_purity.py::test_check_refuses_the_attrgetter_bypass",
    "check/test_preflights.py::test_check_fails_a_preflight_that_opens_a_file",
    "check/test_preflights.py::test_check_passes_the_curated_preflights",
    "check/test_preflights.py::test_check_reports_an_example_the_preflight_refuses",
    "check/test_realworkflows.py::test_draft_of_a_path_that_is_no_workflow_is_a_clear_refusal_without_a_traceback",
    "check/test_realworkflows.py::test_the_basic_workflow_passes_test_offline_with_its_seeded_data_byte_for_byte",
    "check/test_realworkflows.py::test_the_tutorial_passes_test_and_its_fai_beside_the_genome_is_reported",
    "check/test_realworkflows.py::test_word_count_passes_test_offline_on_its_generated_books",
    "check/test_realworkflows.py::test_the_c_example_builds_offline_with_gcc",
    "check/test_shell_quoting.py::test_an_unquoted_label_really_runs_a_command_and_the_quoted_one_does_not",
    "check/test_shell_quoting.py::test_community_workflow_gets_the_same_finding_as_a_warning",
    "check/test_shell_quoting.py::test_curated_workflow_pasting_a_free_text_param_into_shell_fails_check_naming_rule_and_fix",
    "check/test_shell_quoting.py::test_quoted_or_restricted_param_is_not_flagged",
    "check/test_validate.py::test_a_standalone_run_with_a_bad_param_stops_before_any_job",
    "check/test_validate.py::test_a_standalone_run_with_an_unknown_param_stops_before_any_job",
    "check/test_validate.py::test_validate_finds_schema_json_when_the_workflow_is_a_module",
    "check/test_validate.py::test_validate_refuses_bad_params_when_the_workflow_is_a_module",
    "commands/test_cli_columns.py::test_cores_all_is_taken_as_snakemake_takes_it",
    "commands/test_run_progress.py::test_run_progress_names_each_rule_once_and_no_bare_count",
    "commands/test_run_progress.py::test_run_ends_with_one_summary_line_that_fits_80_columns_then_outputs_one_per_line",
    "commands/test_fork_set_list.py",
    "commands/test_cli_registry.py::test_no_user_mistake_prints_a_traceback",
    "commands/test_init_plan.py",
    "commands/test_plan_run_damaged.py",
    "commands/test_plan_run_interrupted.py",
    "commands/test_plan_run_views.py",
    "commands/test_runs_glance.py",
    "commands/test_verdict_cli.py",
    "config/test_hostile.py::test_yte_example_is_refused_by_check_without_evaluating_it",
    "config/test_roundtrip.py::test_columns_named_no_and_on_pass_validate_and_run_as_written",
    "contract/test_resources.py::test_a_default_param_sizes_the_rule_too",
    "contract/test_resources.py::test_a_run_gets_the_contracts_threads_memory_and_runtime_from_its_params",
    "contract/test_resources.py::test_every_rule_of_a_curated_workflow_declares_its_memory_and_runtime",
    "contract/test_resources.py::test_the_profiles_default_resources_do_not_override_the_contract",
    "contract/test_resources.py::test_the_users_set_threads_and_set_resources_still_win",
    "contribute/test_plan_verdict_cases.py::test_a_plan_whose_run_gets_the_verdict_its_file_expects_passes",
    "contribute/test_plan_verdict_cases.py::test_without_a_verdict_file_a_plan_must_pass_every_check",
    "contribute/test_verdict_cases.py::test_a_case_whose_run_gets_another_verdict_fails_naming_the_check_and_its_value",
    "contribute/test_verdict_cases.py::test_a_check_whose_threshold_fails_a_good_case_fails_the_registry_ci",
    "contribute/test_verdict_cases.py::test_the_curated_cases_get_the_verdicts_they_expect",
    "contribute/test_verdict_cases.py::test_without_a_verdict_file_a_case_is_expected_to_pass_every_check",
    "gate/test_cohort.py",
    "gate/test_invocation_id.py::test_example_id_is_the_same_in_another_process_and_directory",
    "gate/test_preflight.py::test_a_broken_preflight_is_refused_by_the_cli_too",
    "gate/test_preflight.py::test_plain_snakemake_with_the_top_level_snakefile_refuses_at_parse_time",
    "gate/test_preflight.py::test_snakegate_run_refuses_before_making_a_run_folder",
    "gate/test_sandbox.py::test_hostile_preflight_cannot_read_the_key_from_the_cli_process_environment",
    "gate/test_sandbox.py::test_snakefile_top_level_runs_without_the_key_in_the_dag_step_and_in_check",
    "gate/test_sheets.py::test_relative_sheet_paths_resolve_against_the_registry_root_under_snakegate_test",
    "gate/test_soundness.py",
    "gate/test_tools.py::test_check_warns_about_a_missing_tool_and_still_passes",
    "gate/test_tools.py::test_test_command_skips_without_the_tool_failing_because_nothing_proved_the_case_and_runs_with_it",
    "gate/test_tools.py::test_validate_json_and_run_refuse_with_tool_missing",
    "provenance/test_plan_rocrate.py::test_a_plan_forks_crate_carries_the_parent_jobs_of_the_steps_it_copied",
    "provenance/test_plan_rocrate.py::test_an_edge_is_a_parameter_connection_from_the_upstream_output_to_the_consuming_input",
    "provenance/test_plan_rocrate.py::test_every_file_in_a_plan_crate_carries_its_sha256_and_format",
    "provenance/test_plan_rocrate.py::test_every_job_is_a_create_action_of_its_rule_and_every_step_one_of_its_workflow",
    "provenance/test_plan_rocrate.py::test_no_sensitive_value_of_a_step_reaches_the_crate",
    "provenance/test_plan_rocrate.py::test_the_plan_is_the_main_workflow_and_each_steps_workflow_a_part_of_it",
    "provenance/test_prov_o.py::test_a_hostname_opt_out_in_snakegate_toml_reaches_the_record",
    "provenance/test_verdict_crate.py::test_a_plans_crate_names_each_check_after_its_step",
    "provenance/test_verdict_crate.py::test_the_crate_names_each_check_as_a_measurement_of_the_file_it_read",
    "provenance/test_verdict_crate.py::test_the_crates_readme_has_a_verdict_section",
    "registry/test_own_registry.py::test_an_installed_snakegate_checks_validates_and_runs_a_workflow_added_to_the_new_registry",
    "registry/test_own_registry.py::test_plain_snakemake_from_the_new_registry_root_runs_through_the_installed_gate",
    "registry/test_own_registry.py::test_snakegate_new_makes_a_registry_that_imports_the_installed_snakegate_not_a_checkout",
    "registry/test_own_registry.py::test_snakegate_new_with_examples_brings_the_curated_workflows_and_their_data",
    "registry/test_own_registry.py::test_the_new_registry_runs_on_slurm_with_the_profile_it_was_given",
    "registry/test_own_registry.py::test_the_registry_types_in_snakegate_toml_are_the_ones_the_installed_snakegate_lists",
    "registry/test_own_registry.py::test_the_readmes_main_job_runs_from_a_source_checkout_with_snakegate_installed_from_it",
    "tui/test_plan_history.py",
    "tui/test_chat_app.py::test_a_draft_runs_once_and_a_repeat_needs_a_confirmation_that_says_so",
    "tui/test_chat_command.py::test_a_model_without_a_server_url_ends_the_chat_with_exit_2_naming_the_fix",
    "tui/test_chat_command.py::test_chat_starts_in_a_terminal_and_quits_with_ctrl_q",
    "tui/test_chat_command.py::test_ctrl_q_during_a_model_request_ends_the_process_at_once",
    "tui/test_chat_command.py::test_quitting_during_a_run_ends_the_chat_at_once_and_the_run_records_itself",
    "tui/test_plan_draft.py::test_a_guided_plan_shows_steps_and_edges_at_80x24_and_ctrl_r_runs_it_once",
    "tui/test_refine_panel.py",
)

# Fixtures whose setup starts a Snakemake run: a name (wherever it is defined) or module::name.
SLOW_FIXTURES = frozenset({
    "prov_registry",                      # prov_runs.py and views/report_runs.py: the session's runs of every kind
    "curated_test_run",                   # curated_tests.py: `snakegate test` of every curated workflow
    "curated_kinds",                      # curated_kinds.py: every kind of run of a curated workflow
    "ran",                                # agent/conftest.py: a succeeded and a failed run
    "science",                            # science_runs.py: surrogate-design, pump-probe and leaky runs
    "judged_registry",                    # verdict_view_runs.py: runs with verdicts of every kind
    "provenance/test_provjson.py::curated_runs",
    "check/test_broken.py::broken_report",
})

# Groups (named by a shared fixture or a module, as in group_of) that start before the others, in this order.
FIRST: tuple[str, ...] = (
    "tests/run/test_slurm.py",              # minutes of waiting on the scheduler: overlaps everything else
    "prov_registry",                        # the session's runs of every kind and the ~120 tests that read them
    *(f"curated_kinds:{wf}" for wf in ("variant-calling", "pump-probe", "classifier-benchmark",
                                         "variant-annotation", "surrogate-design", "pl-power-series",
                                         "tabular-profile")),  # 9 runs of one curated workflow each
    "curated_test_run",                     # `snakegate test` of every curated workflow
    "tests/plan/test_plan_run.py",          # plans run four ways
)

# What a test started that makes it slow: Snakemake (directly, or `snakegate run/test/...` in a process of its
# own), a terminal, a browser, a Slurm daemon or client.
SPAWNS_SLOW = re.compile(r"-m snakemake\b|(^|[\s/])snakegate(\.cli)?(\s|$)|snakegate\.run\b|\btmux\b|chrom|"
                         r"playwright|\b(sbatch|srun|squeue|scancel|scontrol|sinfo|slurmctld|slurmd|munged)\b")
# ... but not the gate's sandbox workers (a warm pool the gate asks for DAGs and preflights: no run).
SPAWNS_FAST = re.compile(r"snakegate\.gate\.sandbox_worker")


# ---- parallel by default ---------------------------------------------------------------------------

@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config: pytest.Config) -> None:
    opt = config.option
    if not hasattr(opt, "numprocesses") or hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        return  # xdist is off, or this is one of its workers (which must never start workers of its own)
    one_process = opt.usepdb or getattr(opt, "trace", False) or opt.capture == "no" or opt.collectonly
    if opt.numprocesses is None and opt.dist == "no" and not getattr(opt, "tx", None) and not one_process:
        opt.numprocesses = "auto"
        opt.dist = "loadgroup"
        opt.loadscopereorder = False  # our order: FIRST, then the other groups, then single tests


@pytest.hookimpl(optionalhook=True)  # an xdist hook: unknown under -p no:xdist
def pytest_configure_node(node) -> None:
    """Workers rebuild their options from the command line, which may not name the --dist chosen above:
    hand it to them (pytest_configure reads it there)."""
    node.workerinput["suite_runner_dist"] = node.config.option.dist


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one worker more than the cores this process may use (the Slurm group mostly waits)."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return cores + 1


# ---- groups, order and the slow marker -------------------------------------------------------------

def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # the controller (or a run without xdist), once, before any test
        compile_bytecode(config)
    if getattr(config, "workerinput", {}).get("suite_runner_dist") == "loadgroup":
        config.option.loadgroup = True  # xdist's worker then puts each test's group into its id
    config.addinivalue_line("markers", "slow: starts a Snakemake run, a terminal, a browser or Slurm "
                                       "(the fast loop: -m 'not slow'); set by tests/suite_runner.py")
    if not config.pluginmanager.hasplugin("xdist"):  # xdist declares it; without xdist it is inert
        config.addinivalue_line("markers", "xdist_group(name): run on the same xdist worker as the group")


def compile_bytecode(config: pytest.Config) -> None:
    """Write snakegate's and the test helpers' bytecode (__pycache__/, git-ignored) before the suite starts.

    The suite starts a thousand and more Python processes that import snakegate (the CLI, Snakemake's
    parse-time gate, the sandbox worker, the MCP server, each job's gate). Where PYTHONDONTWRITEBYTECODE is
    set (it is on the machines this suite was timed on), none of them writes the bytecode it compiles, so
    every one compiled snakegate's sources again: about 0.15 s of CPU for the modules a run imports, each time.
    compileall writes the caches once; Python reads them whatever the variable says, and recompiles a
    module whose source changed since, as always. Nothing is written outside the checkout's own folders."""
    import compileall

    package = config.rootpath / "snakegate"
    if package.is_dir():
        compileall.compile_dir(package, quiet=2, workers=1)
    # the helpers beside the tests only: tests/ also holds workflows (realworkflows/, fixtures) that tests copy
    # and hash, which must not gain a __pycache__
    compileall.compile_dir(TESTS, maxlevels=0, quiet=2, workers=1)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session: pytest.Session):
    """Keep the rewritten test modules. pytest rewrites each test module's asserts as it imports it and caches
    the result in __pycache__/ (git-ignored), unless bytecode writing is off. Where PYTHONDONTWRITEBYTECODE is
    set, every process (the serial run, each xdist worker) rewrote all 250 test modules on every run: 9 s of
    CPU to collect instead of 4 s, some 15 of the fast loop's 215 CPU-s on 2 cores. Writing is on while
    collecting only, when nothing but the test modules and what they import at their top (already compiled)
    loads, and off again afterwards: no test, and nothing it starts, writes bytecode it would not have."""
    saved = sys.dont_write_bytecode
    sys.dont_write_bytecode = False
    try:
        yield
    finally:
        sys.dont_write_bytecode = saved


def _relpath(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def _ours(config: pytest.Config, func) -> bool:
    """Is this fixture the project's (defined under the root folder), not pytest's or a plugin's?"""
    code = getattr(func, "__code__", None)
    source = Path(code.co_filename) if code is not None else None
    return source is not None and source.is_relative_to(config.rootpath) and "site-packages" not in source.parts


def _params_below(item: pytest.Item, name: str) -> list[str]:
    """The values of this test's parametrized fixtures that the fixture `name` is, or depends on (directly or
    through other fixtures): pytest makes a fixture that depends on a parametrized one once per param too."""
    callspec = getattr(item, "callspec", None)
    if callspec is None:
        return []
    found, seen, stack = [], set(), [name]
    while stack:
        current = stack.pop()
        if current in seen or current not in item._fixtureinfo.name2fixturedefs:
            continue
        seen.add(current)
        fixturedef = item._fixtureinfo.name2fixturedefs[current][-1]
        if fixturedef.params is not None and current in callspec.params:
            found.append(str(callspec.params[current]))
        stack.extend(fixturedef.argnames)
    return sorted(found)


def _shared_fixtures(item: pytest.Item) -> list[str]:
    """Keys of the project fixtures wider than a function this test uses: a session fixture by its name (and,
    when a test module defines it, that module's: two modules' same-named fixtures are two fixtures), a module
    (or class) fixture by the module, since its value lives as long as the module's tests run."""
    keys = []
    for name, defs in item._fixtureinfo.name2fixturedefs.items():
        fixturedef = defs[-1]
        if fixturedef.scope == "function" or not _ours(item.config, fixturedef.func):
            continue
        if fixturedef.scope in ("session", "package"):
            key = f"{fixturedef.baseid}::{name}" if fixturedef.baseid.endswith(".py") else name
        else:
            key = _relpath(item)
        # a parametrized fixture is one value per param, and so is every fixture built on one: one group each
        # (tests/curated_kinds.py: a workflow's runs, and what a module makes of them), so the params spread
        # over the workers instead of queueing on one
        # (no brackets in a group name: xdist takes a node id ending in "]" for a parametrized test's own)
        for param in _params_below(item, name):
            key = f"{key}:{param}"
        keys.append(key)
        if name == "cluster":  # one Slurm test cluster on a machine at a time: every test that starts one, one worker
            keys.append("tests/run/test_slurm.py")
    return keys


def group_of(items: list[pytest.Item]) -> dict[pytest.Item, str]:
    """item -> group name for every test that shares a wider fixture with another (union-find over the
    fixtures): tests connected through any chain of shared fixtures run on one worker."""
    parent: dict[str, str] = {}

    def find(key: str) -> str:
        while parent.setdefault(key, key) != key:
            parent[key] = parent[parent[key]]
            key = parent[key]
        return key

    keys = {item: _shared_fixtures(item) for item in items}
    for item_keys in keys.values():
        for other in item_keys:
            parent[find(other)] = find(item_keys[0])
    members: dict[str, list[str]] = {}
    for key in parent:
        members.setdefault(find(key), []).append(key)
    # a group is named by its FIRST entry if it holds one, else by its first key in collection order
    name_of_root = {root: next((f for f in FIRST if f in keys_), keys_[0]) for root, keys_ in members.items()}
    return {item: name_of_root[find(k[0])] for item, k in keys.items() if k}


def is_slow(item: pytest.Item) -> bool:
    nodeid, module = item.nodeid, _relpath(item)
    for path in SLOW_PATHS:
        path = f"tests/{path}"
        if nodeid == path or nodeid.startswith((path + "::", path + "[")) or (path.endswith("/") and nodeid.startswith(path)):
            return True
    for fixture in SLOW_FIXTURES:
        where, _, name = fixture.rpartition("::")
        if name in item.fixturenames and (not where or module == f"tests/{where}"):
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before xdist reads the xdist_group marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    groups = group_of(items)
    for item in items:
        if is_slow(item):
            item.add_marker(pytest.mark.slow)
        if item in groups:
            item.add_marker(pytest.mark.xdist_group(groups[item]))
    if not hasattr(config, "workerinput"):
        return  # serial: the collection order
    first = {name: i for i, name in enumerate(FIRST)}
    index = {item: i for i, item in enumerate(items)}
    group_start = {}
    for item in items:
        if item in groups:
            group_start.setdefault(groups[item], index[item])

    def rank(item):
        group = groups.get(item)
        if group is None:
            return (2, 0 if is_slow(item) else 1, index[item])
        return (0, first.get(group, len(first)), group_start[group], index[item])

    items.sort(key=rank)


# ---- the fast loop's guard -------------------------------------------------------------------------

_started: list[str] | None = None  # argv of the processes the running test started (only in the fast loop)
_popen_init = subprocess.Popen.__init__


def _recording_popen_init(self, args, *more, **kwargs):
    if _started is not None:
        _started.append(args if isinstance(args, str) else " ".join(map(str, args)))
    _popen_init(self, args, *more, **kwargs)


def _fast_loop(config: pytest.Config) -> bool:
    return "not slow" in (config.option.markexpr or "")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem):
    global _started
    guarded = _fast_loop(item.config)
    if guarded:
        subprocess.Popen.__init__ = _recording_popen_init
        _started = []
    try:
        yield
    finally:
        if guarded:
            subprocess.Popen.__init__ = _popen_init
            _started = None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call):
    outcome = yield
    report = outcome.get_result()
    if _started is None or call.when != "call" or report.failed:
        return
    slow = [argv for argv in _started if SPAWNS_SLOW.search(argv) and not SPAWNS_FAST.search(argv)]
    if slow:
        report.outcome = "failed"
        report.longrepr = (f"{item.nodeid} is not marked slow but started: {slow[0][:200]}\n"
                           "add it (or its module) to SLOW_PATHS, or the fixture that starts it to SLOW_FIXTURES, "
                           "in tests/suite_runner.py")

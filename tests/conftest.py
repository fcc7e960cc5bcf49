"""Fixtures and hooks only (the slow tier's marks, servers, models); helpers the tests import are in
``helpers.py`` (``from helpers import write_jsonl``), fakes in ``fakes.py``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # tests/helpers.py, tiny_model.py, fakes.py

os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

# Tiers: `-m "not slow"` is the quick tier (~1 min on an idle 2-core machine); plain pytest runs everything.
# A test is slow when it is e2e, when it uses a fixture below (its setup costs seconds, and a session or module
# fixture costs them in whichever tier first uses it), or when it is listed in SLOW_TESTS.
# "file::name" is a fixture of that test file only (a plain `model` or `nlp` could be anything elsewhere).
SLOW_FIXTURES = {
    "tiny_model_dir",  # builds and saves a tiny random model (~6 s)
    "tiny_server",  # a real `transformers serve` on it (~15 s to start under load)
    "says_server",  # the same with the model that always says REPLY (~20 s under load)
    "embedded_server",  # llama.cpp or transformers serving the packaged SmolLM2
    "test_train.py::trained",  # a LoRA fine-tuning run (~13 s)
    "test_keywords.py::nlp",  # loads the spaCy pipeline (~7 s)
    "evaluated_review_work",  # runs the evaluate stage with the real embedder (~10 s)
    "grounded_review_work",  # the same, on two papers with components
}
# Not listed: test_coverage.py's `model` (MiniLM, ~7 s). Most of that is importing sentence-transformers, which
# the next quick test to touch the embedder would pay instead, so marking it moves the cost, not removes it.

# Tests over ~3 s with no such fixture (measured: the quick tier run alone on an idle 2-core machine, with
# --durations=0; seconds are setup + call + teardown, over all parameters). Most run the CLI in a subprocess,
# and importing sciqag_dataset.cli alone takes ~2.7 s there. A parametrized test is listed once, without [...].
SLOW_TESTS = {
    "tests/test_bench_tools.py::test_a_script_at_another_checkout_imports_it_in_child_processes_too",  # 5 s
    "tests/test_gpu_bench.py::test_each_setting_trains_beside_plain_trl_on_the_same_examples",  # 6-24 s (two runs)
    "tests/test_packaging.py::test_the_checkouts_own_folder_finds_the_subpackages_beside_it",  # 4 s (a child imports)
    "tests/test_gpu_bench.py::test_an_input_embedding_is_no_matrix_product_unless_it_is_the_output_layer_too",  # noqa: E501 5 s (PEFT)
    "tests/test_gpu_bench.py::test_model_flops_per_token_match_what_torch_counts_in_a_training_step",  # noqa: E501 5 s (PEFT)
    "tests/test_packaging.py::test_a_config_with_a_plugins_options_travels_to_a_fresh_process",  # 8 s
    "tests/test_packaging.py::test_a_config_naming_a_built_in_metrics_option_loads_in_a_fresh_process",  # 4 s
    "tests/config/test_options.py::test_bad_config_files_are_refused_naming_the_option",  # 37 s (10 cases)
    "tests/config/test_options.py::test_a_mistyped_path_is_refused_before_anything_is_written",  # 26 s
    "tests/config/test_options.py::test_train_without_a_base_model_is_refused",  # 19 s
    "tests/config/test_options.py::test_a_filter_on_a_score_no_pair_has_is_refused_and_a_filter_can_be_cleared",  # noqa: E501 19 s
    "tests/config/test_options.py::test_bad_values_are_refused_before_any_work",  # 13 s (5 cases)
    "tests/core/test_processes.py::test_kill_9_of_the_cli_leaves_no_worker_behind",  # 11 s
    "tests/config/test_options.py::test_an_output_folder_that_cannot_be_written_is_refused",  # 9 s
    "tests/config/test_options.py::test_train_refuses_an_output_folder_of_the_users",  # 9 s
    "tests/core/test_remote.py::test_a_download_counts_in_the_file_time_limit_and_the_other_files_are_read",  # 8 s
    "tests/builders/test_grobid.py::test_a_busy_grobid_is_asked_again_and_a_dead_one_fails_the_paper_not_the_run",  # noqa: E501 6 s
    "tests/evaluation/benchmark/test_benchmark.py::test_bertscore_runs_offline_on_the_packaged_model",  # 6 s
    "tests/evaluation/benchmark/test_item_analysis.py::test_four_models_item_analysis_in_results_and_card_filter_drops_flagged",  # noqa: E501 3 s
    "tests/orchestration/test_plan.py::test_plan_counts_every_llm_stage_without_asking_a_model_or_writing_the_work_dir",  # noqa: E501 26 s
    "tests/orchestration/test_plan.py::test_the_plan_predicts_the_runs_requests_and_prompt_tokens",  # noqa: E501 minutes: a real embedded run
    "tests/orchestration/test_plan.py::test_a_recorded_plan_ranges_the_paced_requests_and_the_card_compares_it_with_what_was_sent",  # noqa: E501 3 minutes: a real embedded run
    "tests/orchestration/test_plan.py::test_the_plan_walks_the_runs_steps_and_lists_a_plugin_stage_it_cannot_plan",  # noqa: E501 10 s
    "tests/orchestration/test_plan.py::test_the_plan_counts_the_component_requests_the_run_then_sends",  # noqa: E501 6 s (plan and run)
    "tests/evaluation/benchmark/test_item_analysis.py::test_scores_per_kind_of_question_in_the_leaderboard_its_table_and_the_predictions",  # noqa: E501 6 s (two benchmark runs)
    "tests/evaluation/benchmark/test_item_analysis.py::test_a_question_a_small_model_answers_with_its_terms_masked_is_flagged_general_knowledge",  # noqa: E501 3 s (two benchmark runs)
    "tests/evaluation/benchmark/test_item_analysis.py::test_embedded_model_its_transformers_twin_and_fakes_flag_the_planted_items_and_the_card_shows_them",  # noqa: E501 25-55 s (llama.cpp and `transformers serve` answer)
    "tests/test_packaging.py::test_wheel_carries_its_data_and_works_outside_the_repo",  # 5 s
    "tests/builders/test_pdf.py::test_reading_with_the_layout_model_writes_nothing_in_the_users_home",  # 8 s
    "tests/builders/test_pdf_layout_classes.py::test_an_abstract_set_smaller_on_a_first_page_of_front_matter_is_kept",  # noqa: E501 8 s (four pages, each backend)
    "tests/core/test_remote.py::test_a_reply_without_end_stops_at_the_size_limit_and_leaves_no_copy",  # 5 s
    "tests/builders/test_bad_inputs.py::test_special_files_are_skipped_without_blocking",  # 5 s
    "tests/hub/test_card.py::test_every_plot_in_the_card_has_its_caption",  # 4 s
    "tests/llm/test_credentials.py::test_local_servers_start_without_the_keys_of_this_process",  # 4 s
    "tests/llm/test_credentials.py::test_the_general_knowledge_key_goes_to_its_endpoint_only_and_is_never_written_or_logged",  # noqa: E501 5.5 s (CLI subprocess)
    "tests/config/test_options.py::test_run_takes_its_config_as_a_flag_too",  # 4 s
    "tests/llm/test_dead_server.py::test_after_a_fallback_the_cache_answers_what_the_fallback_answered_before",  # 4 s
    "tests/builders/test_keywords.py::test_run_keywords_clear_setup_errors",  # 4 s (loads spaCy itself)
    "tests/llm/test_dead_server.py::test_a_server_that_dies_mid_run_is_restarted_then_replaced_and_no_paper_fails",  # noqa: E501 3 s
    "tests/evaluation/test_plots.py::test_write_plots_titles_each_paper_and_writes_captions_for_the_card",  # 3 s
    "tests/cli/test_cli_style.py::test_ingest_takes_the_work_dir_first_like_every_stage",  # 3 s
    "tests/cli/test_cli_style.py::test_a_stage_takes_its_work_dir_from_the_config_as_run_does",  # 3 s
    "tests/orchestration/test_scale.py::test_a_plain_run_imports_no_datatrove",  # 3 s
    "tests/test_architecture.py::test_the_documented_pipeline_stage_runs_in_sciqag_run_after_what_it_reads_and_resumes",  # noqa: E501 7 s (two CLI runs)
    "tests/config/test_options.py::test_a_missing_input_is_a_user_error",  # 3 s
    "tests/config/test_options.py::test_every_wrong_key_of_a_config_is_named_with_the_nearest_key",  # 4 CLI runs
    "tests/config/test_options.py::test_a_mistyped_flag_is_one_line_with_the_nearest_flag",  # 3 CLI runs
    # CLI subprocess tests at 3-4.5 s in some quiet runs and under 3 s in others: listed by their mean over three
    "tests/cli/test_cli_style.py::test_the_old_ingest_spelling_still_works_with_a_note",  # 3.8 s
    "tests/cli/test_cli_style.py::test_ingest_without_papers_is_a_one_line_error",  # 3.6 s
    "tests/cli/test_cli_style.py::test_a_stage_without_work_or_config_is_a_one_line_error",  # 3.5 s
    "tests/config/test_options.py::test_a_file_that_cannot_be_read_is_not_promised_to_a_rerun",  # 3.4 s
    "tests/llm/test_credentials.py::test_an_unset_key_variable_is_an_error_naming_it",  # 3.3 s
    "tests/evaluation/test_evaluate_stage.py::test_no_llm_metrics_merge_summary_plots_and_resume",  # 3.2 s
    "tests/evaluation/test_grounding.py::test_offsets_slice_to_their_quotes_and_invented_answers_are_ungrounded",  # noqa: E501 9 s (MiniLM)
    "tests/evaluation/test_duplicates.py::test_paraphrase_within_a_paper_and_copy_across_papers",  # noqa: E501 30 s (evaluates, CLI)
    "tests/core/test_work_lock.py::test_a_second_run_on_a_busy_work_dir_is_refused_and_one_with_wait_runs_after",  # noqa: E501 7 s
    "tests/core/test_work_lock.py::test_shard_runs_of_generate_run_side_by_side_and_leave_no_shard_in_the_config",  # noqa: E501 6 s
    "tests/evaluation/test_agreement_inputs.py::test_review_states_the_number_of_pairs_it_really_reviews",  # noqa: E501 6.5 s (CLI, server)
    "tests/evaluation/test_custom_metric.py::test_a_plugin_option_and_rule_are_keys_of_the_config_file_like_a_built_in_metrics",  # noqa: E501 14 s
    # evaluates with a plugin metric, filters twice and publishes, through the CLI
    "tests/evaluation/test_custom_metric.py::test_plugin_metric_reaches_evaluated_rows_published_config_card_and_filter",  # noqa: E501 60 s
    "tests/evaluation/test_filter_rules.py::test_filter_and_publish_judge_questions_as_they_stand_and_the_card_counts_what_is_published",  # noqa: E501 13 s
}


@pytest.hookimpl(tryfirst=True)  # before -k / -m deselect anything: every test of a collected file is seen
def pytest_collection_modifyitems(config, items):
    for item in items:
        fixtures = {*item.fixturenames, *(f"{item.path.name}::{name}" for name in item.fixturenames)}
        listed = item.nodeid.partition("[")[0] in SLOW_TESTS
        if item.get_closest_marker("e2e") or fixtures & SLOW_FIXTURES or listed:
            item.add_marker(pytest.mark.slow)
    # a renamed or removed test must leave the table, or its new name would run in the quick tier unmarked
    files = {item.nodeid.partition("::")[0] for item in items}
    if any("::" in arg for arg in config.args):  # tests picked by id: their files' other tests are not collected
        files = set()
    stale = {t for t in SLOW_TESTS if t.partition("::")[0] in files} - {i.nodeid.partition("[")[0] for i in items}
    stale |= {t for t in SLOW_TESTS if not (Path(__file__).parent.parent / t.partition("::")[0]).exists()}
    if stale:
        raise pytest.UsageError(f"tests/conftest.py SLOW_TESTS names tests that do not exist: {sorted(stale)}")


@pytest.fixture(scope="session")
def tiny_model_dir(tmp_path_factory) -> Path:
    from tiny_model import build_tiny_model

    return build_tiny_model(tmp_path_factory.mktemp("tiny-model"))


@pytest.fixture(scope="session")
def tiny_server(tiny_model_dir, tmp_path_factory):
    """A real `transformers serve` with the tiny model, shared by the session."""
    from sciqag_dataset.llm.server import LocalServer

    log = tmp_path_factory.mktemp("serve") / "server.log"
    with LocalServer(tiny_model_dir, log_path=log) as server:
        yield server


@pytest.fixture(scope="session")
def says_server(tmp_path_factory):
    """A real `transformers serve` whose tiny model answers every chat prompt with ``tiny_model.REPLY`` and
    stops: complete replies (``finish_reason == "stop"``), so they are cached; a raw completion of a prompt
    ending in "." is an empty reply; a small ``max_tokens`` gives a reply cut at the limit."""
    from tiny_model import REPLY, build_tiny_model

    from sciqag_dataset.llm.server import LocalServer

    model = build_tiny_model(tmp_path_factory.mktemp("says-model"), says=REPLY)
    with LocalServer(model, log_path=tmp_path_factory.mktemp("says-serve") / "server.log") as server:
        yield server


@pytest.fixture(scope="session")
def paper_host(tmp_path_factory):
    """A real HTTP file server (the standard library's, as `python -m http.server` runs it) with a copy of the
    sample papers under ``/papers/``: remote input through fsspec's HTTP filesystem, across processes. Yields
    (base URL, the served folder)."""
    import functools
    import http.server
    import shutil
    import threading

    from sciqag_dataset.orchestration.pipeline import sample_papers

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *args):
            pass

    root = tmp_path_factory.mktemp("paper-host")
    shutil.copytree(sample_papers()[0], root / "papers")
    handler = functools.partial(Quiet, directory=str(root))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", root / "papers"
    httpd.shutdown()


@pytest.fixture(scope="session")
def evaluated_review_work(tmp_path_factory) -> Path:
    """Four papers, 20 pairs, evaluated (RACAR by a scripted judge, real coverage): built once per session."""
    from review_samples import evaluated_work

    return evaluated_work(tmp_path_factory.mktemp("review-template"))


@pytest.fixture
def review_work(evaluated_review_work, tmp_path) -> Path:
    """A fresh copy of the evaluated review work directory for one test to change."""
    import shutil

    return Path(shutil.copytree(evaluated_review_work, tmp_path / "work"))


@pytest.fixture(scope="session")
def grounded_review_work(tmp_path_factory) -> Path:
    """Two papers, 10 pairs, some asked from a table, an equation and a figure, evaluated: built once."""
    from review_samples import grounded_work

    return grounded_work(tmp_path_factory.mktemp("grounded-review"))


@pytest.fixture
def served(review_work):
    """A real `sciqag review` process over an evaluated work directory; yields (work, base URL with token)."""
    yield from _serve(review_work)


@pytest.fixture
def served_grounded(grounded_review_work, tmp_path):
    """`sciqag review` over a copy of the grounded work directory; yields (work, base URL with token)."""
    import shutil

    yield from _serve(Path(shutil.copytree(grounded_review_work, tmp_path / "work")))


def _serve(work: Path):
    import re
    import subprocess
    import time

    proc = subprocess.Popen(
        [sys.executable, "-m", "sciqag_dataset.cli", "review", str(work), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        url = None
        deadline = time.monotonic() + 60
        while url is None and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line and proc.poll() is not None:
                break
            url = (re.search(r"http://127\.0\.0\.1:\d+/\?token=\S+", line) or [None])[0]
        assert url, "`sciqag review` printed no URL"
        yield work, url
    finally:
        proc.terminate()
        proc.wait(timeout=10)

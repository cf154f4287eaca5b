"""The `wheel` marker: tests that build snakegate's wheel and use it from a fresh environment
(`python -m pytest -m wheel`; .ci/run runs them with the rest)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "wheel: builds the wheel, installs it into a fresh venv and uses it "
                                       "from a registry made by `snakegate new` (a few minutes)")

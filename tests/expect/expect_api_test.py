"""``mlsmoke.expect.check(loader, suite)`` in a project's own tests."""

from __future__ import annotations

import expect_loaders as loaders
import pytest

import mlsmoke.expect
from mlsmoke.errors import ConfigError
from mlsmoke.expect import suite_file
from mlsmoke.expect.api import observe
from mlsmoke.expect.record import infer
from mlsmoke.expect.suite_file import Suite


@pytest.fixture
def suite_path(tmp_path):
    path = tmp_path / "expectations.json"
    observed = observe(loaders.token_windows(), None, 4, 0)
    suite_file.write(Suite(path, infer(observed), 2.0))
    return path


def test_check_passes_on_the_recorded_loader_and_raises_on_a_bug(suite_path):
    assert mlsmoke.expect.check(loaders.token_windows(seed=4), suite_path) == []
    with pytest.raises(AssertionError) as raised:
        mlsmoke.expect.check(loaders.token_windows(shift=0), str(suite_path))
    assert "likely: the shift was lost" in str(raised.value)


def test_check_takes_a_loader_a_factory_or_a_data_module(tmp_path):
    path = tmp_path / "expectations.json"
    suite_file.write(Suite(path, infer(observe(loaders.images(), None, 4, 0)), 2.0))

    class DataModule:
        def prepare_data(self):
            pass

        def setup(self, stage):
            assert stage == "fit"

        def train_dataloader(self):
            return loaders.images(seed=2)

    for loader in (loaders.images(seed=1), lambda: loaders.images(), DataModule()):
        assert mlsmoke.expect.check(loader, path) == []


def test_a_bad_suite_raises_config_error(tmp_path):
    path = tmp_path / "expectations.json"
    path.write_text("{\n")
    with pytest.raises(ConfigError, match=r"expectations.json:2: not valid JSON"):
        mlsmoke.expect.check(loaders.images(), path)

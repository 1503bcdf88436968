from __future__ import annotations

from pathlib import Path

import pytest

from mlsmoke import config, project_root
from mlsmoke.config import Key
from mlsmoke.errors import ConfigError

SCHEMA = {
    "exclude": Key(config.string_list, default=[]),
    "steps": Key(config.positive_int, default=10),
    "lr": Key(config.positive_number, default=0.1),
    "device": Key(config.one_of("auto", "cpu"), default="auto"),
    "strict": Key(config.boolean, default=False),
    "python": Key(config.string),
}


def write_pyproject(root: Path, text: str) -> Path:
    (root / "pyproject.toml").write_text(text)
    return root


def test_validate_fills_defaults_and_keeps_given_values() -> None:
    parsed = config.validate({"steps": 3, "exclude": "a/*"}, SCHEMA, "tool.mlsmoke.x")
    assert parsed == {
        "exclude": ["a/*"],
        "steps": 3,
        "lr": 0.1,
        "device": "auto",
        "strict": False,
        "python": None,
    }


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"stepz": 1}, "tool.mlsmoke.x.stepz: unknown key; expected one of: exclude,"),
        ({"steps": 0}, "tool.mlsmoke.x.steps: expected a positive integer, got 0"),
        (
            {"steps": True},
            "tool.mlsmoke.x.steps: expected a positive integer, got True",
        ),
        ({"lr": "fast"}, "tool.mlsmoke.x.lr: expected a positive number, got 'fast'"),
        (
            {"lr": float("inf")},
            "tool.mlsmoke.x.lr: expected a positive, finite number, got inf",
        ),
        (
            {"lr": float("nan")},
            "tool.mlsmoke.x.lr: expected a positive, finite number, got nan",
        ),
        ({"exclude": [1]}, "tool.mlsmoke.x.exclude: expected an array of strings"),
        ({"device": "tpu"}, "tool.mlsmoke.x.device: expected one of 'auto', 'cpu'"),
        (
            {"strict": "yes"},
            "tool.mlsmoke.x.strict: expected true or false, got a string",
        ),
        ({"python": 3}, "tool.mlsmoke.x.python: expected a string, got an integer"),
    ],
)
def test_validate_names_the_key_path(table: dict, message: str) -> None:
    with pytest.raises(ConfigError, match="^" + message.replace("(", r"\(")):
        config.validate(table, SCHEMA, "tool.mlsmoke.x")


def test_hook_table_reads_the_tool_section(tmp_path: Path) -> None:
    write_pyproject(tmp_path, '[tool.mlsmoke.strict-mode]\nexclude = ["x"]\n')
    assert config.hook_table(tmp_path, "strict-mode") == {"exclude": ["x"]}
    assert config.hook_table(tmp_path, "doctest") == {}


def test_missing_pyproject_is_an_empty_configuration(tmp_path: Path) -> None:
    assert config.tool_table(tmp_path) == {}


def test_malformed_toml_names_the_file(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "[tool.mlsmoke\n")
    with pytest.raises(ConfigError, match=r"pyproject\.toml: not valid TOML"):
        config.tool_table(tmp_path)


@pytest.mark.parametrize(
    ("content", "where"),
    [
        (b"\xff[tool.mlsmoke]\n", "byte 0xff at offset 0 (line 1, column 1)"),
        (b'[tool.mlsmoke]\npython = "caf\xe9"\n', "offset 28 (line 2, column 14)"),
        (b"# \xe2\x82\n", "byte 0xe2 at offset 2 (line 1, column 3)"),  # cut short
    ],
)
def test_a_byte_that_is_not_utf8_names_the_file_and_the_offset(
    tmp_path: Path, content: bytes, where: str
) -> None:
    (tmp_path / "pyproject.toml").write_bytes(content)
    with pytest.raises(ConfigError) as raised:
        config.tool_table(tmp_path)
    message = str(raised.value)
    assert message.startswith(f"{tmp_path / 'pyproject.toml'}: not UTF-8: ")
    assert where in message


def test_a_hook_section_that_is_not_a_table_names_its_key(tmp_path: Path) -> None:
    write_pyproject(tmp_path, '[tool.mlsmoke]\nstrict-mode = "on"\n')
    with pytest.raises(ConfigError, match="tool.mlsmoke.strict-mode: expected a table"):
        config.hook_table(tmp_path, "strict-mode")


@pytest.mark.parametrize(
    "text",
    ['[tool.mlsmoke.strict_mode]\nexclude = ["x"]\n', '[tool.mlsmoke]\npyton = "p"\n'],
)
def test_a_misspelt_table_or_key_of_the_tool_section_is_named(
    tmp_path: Path, text: str
) -> None:
    write_pyproject(tmp_path, text)
    with pytest.raises(
        ConfigError, match=r"tool\.mlsmoke\.(strict_mode|pyton): unknown"
    ):
        config.hook_table(tmp_path, "strict-mode")


def test_project_root_is_the_nearest_pyproject_below_the_git_root(
    tmp_path: Path,
) -> None:
    (tmp_path / ".git").mkdir()
    write_pyproject(tmp_path, "")
    nested = tmp_path / "src" / "pkg"
    nested.mkdir(parents=True)
    assert project_root.find_project_root(nested) == tmp_path.resolve()


def test_project_root_search_stops_at_the_git_root(tmp_path: Path) -> None:
    write_pyproject(tmp_path, "")
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    inner = repo / "sub"
    inner.mkdir()
    assert project_root.find_project_root(inner) == inner.resolve()


@pytest.mark.parametrize(
    "value", [0, -1, float("nan"), float("inf"), 1e300, 86400.001, True, "60"]
)
def test_a_timeout_is_seconds_up_to_a_day(value: object) -> None:
    with pytest.raises(ConfigError) as raised:
        config.timeout_seconds(value, "tool.mlsmoke.x.timeout")
    assert str(raised.value) == (
        "tool.mlsmoke.x.timeout: expected a finite number of seconds, above 0 and"
        f" up to 86400 (a day), got {value!r}"
    )
    assert config.timeout_seconds(86400, "t") == 86400.0


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_a_finite_number_is_neither_nan_nor_infinite(value: float) -> None:
    with pytest.raises(ConfigError, match="^t: expected a finite number, got "):
        config.finite_number(value, "t")
    assert config.finite_number(-2, "t") == -2.0


def test_the_project_config_is_the_root_pyproject_however_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path)
    root = project_root.find_project_root()
    assert project_root.is_project_config("pyproject.toml", root)
    assert project_root.is_project_config("./pyproject.toml", root)
    assert project_root.is_project_config(str(tmp_path / "pyproject.toml"), root)
    assert not project_root.is_project_config("sub/pyproject.toml", root)
    assert not project_root.is_project_config("setup.toml", root)

"""The args init proposes for a training script's tiny run, read from plain source: a
nanoGPT configurator's globals, argparse options, a config dataclass."""

from __future__ import annotations

import textwrap

import pytest

from mlsmoke.adopt.script_args import propose

BUDGET = 300


def args_of(text: str, budget: int = BUDGET) -> list[str]:
    proposal = propose("train.py", textwrap.dedent(text), budget)
    return proposal.args


CONFIGURATOR = """\
    import torch
    out_dir = "out"
    eval_interval = 2000
    eval_iters = 200
    wandb_log = False
    gradient_accumulation_steps = 5 * 8
    batch_size = 12
    block_size = 1024
    n_layer = 12
    n_head = 12
    n_embd = 768
    dropout = 0.0
    learning_rate = 6e-4
    warmup_iters = 2000
    device = "cuda"
    dtype = "bfloat16" if torch.cuda.is_available() else "float16"
    compile = True
    exec(open("configurator.py").read())
    later = 1
    """


def test_a_configurator_gets_its_own_globals_at_a_tiny_size():
    proposal = propose("train.py", textwrap.dedent(CONFIGURATOR), BUDGET)
    assert proposal.style == "configurator"
    assert proposal.args == [
        "--out_dir={out_dir}",
        "--eval_iters=1",
        "--gradient_accumulation_steps=2",  # 5 * 8 is not a literal: still proposed
        "--batch_size=4",
        "--block_size=16",
        "--n_layer=2",
        "--n_head=2",
        "--n_embd=32",
        "--warmup_iters=10",
        "--device=cpu",
        "--dtype=float32",
        "--compile=False",
    ]  # wandb_log is already off; nothing after the exec is a setting
    assert proposal.notes == []


def test_only_names_the_script_defines_and_only_where_the_default_differs():
    assert args_of("""\
        batch_size = 4
        device = "cpu"
        seq_len = 256
        exec(open("configurator.py").read())
        """) == ["--seq_len=16"]


def test_a_float_default_keeps_its_type_for_the_configurators_check():
    assert args_of("""\
        n_layer = 6.0
        exec(open("configurator.py").read())
        """) == ["--n_layer=2.0"]


@pytest.mark.parametrize(
    ("warmup", "budget", "expected"),
    [(2000, 300, ["--warmup_iters=10"]), (30, 300, []),
     (31, 300, ["--warmup_iters=10"]), (100, 3000, []),
     (400, 3000, ["--warmup_iters=100"])],
)  # fmt: skip
def test_a_warmup_is_shortened_when_it_would_fill_the_gates_budget(
    warmup, budget, expected
):
    text = f'warmup_iters = {warmup}\nexec(open("configurator.py").read())\n'
    assert args_of(text, budget) == expected


def test_the_width_stays_when_heads_are_set_elsewhere():
    text = """\
        n_embd = 768
        exec(open("configurator.py").read())
        model = GPT(n_embd=n_embd, n_head=12)
        """
    assert args_of(text) == []
    assert args_of(text.replace("n_head=12", "bias=False")) == ["--n_embd=32"]


ARGPARSE = """\
    import argparse
    parser = argparse.ArgumentParser()
    parser.add_argument("data", help="a dataset directory")
    parser.add_argument("--batch-size", "-b", type=int, default=64)
    parser.add_argument("--lr", type=float, default=0.1)
    parser.add_argument("--no-cuda", action="store_true", default=False)
    parser.add_argument("--compile", action=argparse.BooleanOptionalAction)
    parser.add_argument("--amp", type=bool, default=True)
    parser.add_argument("--log", default="info")
    parser.add_argument("--dtype", choices=["bfloat16", "float16"], default="bfloat16")
    parser.add_argument("--workers", dest="num_workers", type=int, default=8)
    parser.add_argument("--output_dir", default=None)
    parser.add_argument("--save-model", action="store_true")
    parser.add_argument("--depth", type=int, required=True)
    args = parser.parse_args()
    """


def test_argparse_options_by_their_dest_flags_and_choices():
    proposal = propose("train.py", textwrap.dedent(ARGPARSE), BUDGET)
    assert proposal.style == "argparse"
    assert proposal.args == [
        "--batch-size=4",
        "--no-cuda",
        "--no-compile",
        "--workers=0",
        "--output_dir={out_dir}",
        "--depth=2",
    ]  # type=bool, a --log level and a dtype not among its choices are left alone
    assert proposal.notes == [
        "train.py: data is required; add it to args",
        "train.py: --depth is required; add it to args",
    ]


def test_a_store_false_switch_is_given_to_turn_its_setting_off():
    text = """\
        parser.add_argument("--no-wandb", dest="wandb", action="store_false")
        parser.add_argument("--device", default="cuda")
        """
    assert args_of(text) == ["--no-wandb", "--device=cpu"]


DATACLASS = """\
    from dataclasses import dataclass, field

    @dataclass
    class TrainConfig:
        batch_size: int = 32
        num_layers: int = 6
        compile: bool = True
        output_dir: str = field(default="runs")
        lr: float = 3e-4

    cfg = {parse}(TrainConfig)
    """


@pytest.mark.parametrize(
    ("parse", "expected"),
    [
        (
            "HfArgumentParser",
            ["--batch_size=4", "--num_layers=2", "--compile=False",
             "--output_dir={out_dir}"],
        ),
        (
            "tyro.cli",
            ["--batch-size=4", "--num-layers=2", "--no-compile",
             "--output-dir={out_dir}"],
        ),
    ],
)  # fmt: skip
def test_a_config_dataclass_parsed_from_the_command_line(parse, expected):
    text = DATACLASS.format(parse=parse)
    if parse == "HfArgumentParser":
        text = text.replace("cfg = HfArgumentParser(TrainConfig)",
                            "cfg = HfArgumentParser((TrainConfig,)).parse_args_into_dataclasses()")  # fmt: skip # noqa: E501
    proposal = propose("train.py", textwrap.dedent(text), BUDGET)
    assert proposal.style == "dataclass"
    assert proposal.args == expected


def test_a_script_without_settings_says_which_args_to_fill():
    proposal = propose("train.py", "import torch\nmodel = torch.nn.Linear(2, 2)\n", 300)
    assert proposal.style is None and proposal.args == [] and not proposal.globals
    assert "set args or globals in [tool.mlsmoke.overfit]" in proposal.notes[0]


def test_a_script_that_reads_no_settings_gets_globals_for_its_literal_sizes():
    source = textwrap.dedent("""\
        import logging
        import torch
        batch_size = 64
        n_embd = 384.0
        device = 'cuda' if torch.cuda.is_available() else 'cpu'
        dtype = torch.float16
        log = logging.getLogger(__name__)
        out_dir = 'out'
        eval_iters = 1
        """)
    proposal = propose("train.py", source, 300)
    assert proposal.style == "module-level" and proposal.args == []
    # a value that is no literal (a dtype, a logger) is left as the script makes it
    assert proposal.globals == {"batch_size": 4, "n_embd": 32.0, "device": "cpu",
                                "out_dir": "{out_dir}"}  # fmt: skip
    assert proposal.notes == []


def test_what_a_tiny_run_needs_and_the_script_does_not_define_is_named():
    proposal = propose(
        "train.py", 'batch_size = 8\nexec(open("configurator.py").read())\n', 300
    )
    assert proposal.args == ["--batch_size=4"]
    assert proposal.notes == [
        "train.py has no setting for the device, the model's size, the output"
        " directory; if its run needs one, add it to args in [tool.mlsmoke.overfit]"
    ]


CONFIG_OBJECT = """\
    import sys

    def get_config():
        C = CN()
        C.system = CN()
        C.system.work_dir = "./out/adder"
        C.data = Dataset.get_default_config()
        C.trainer = Trainer.get_default_config()
        C.trainer.num_workers = 4
        C.trainer.learning_rate = 5e-4
        return C

    def get_default_config():
        C = CN()
        C.ndigit = 2
        return C

    if __name__ == "__main__":
        config = get_config()
        config.merge_from_args(sys.argv[1:])
    """


def test_a_config_object_set_from_the_command_line_gets_dotted_literals():
    proposal = propose("projects/adder/adder.py", textwrap.dedent(CONFIG_OBJECT), 300)
    assert proposal.style == "config object"
    # A string is a Python literal, as the object's own literal_eval reads it back.
    assert proposal.args == ["--system.work_dir='{out_dir}'", "--trainer.num_workers=0"]


def test_a_config_object_the_command_line_never_reaches_proposes_nothing():
    text = CONFIG_OBJECT.replace("config.merge_from_args(sys.argv[1:])", "pass")
    assert propose("adder.py", textwrap.dedent(text), 300).args == []


WORD_MODEL = """\
import argparse
import torch
parser = argparse.ArgumentParser()
parser.add_argument('--emsize', type=int, default=200)
parser.add_argument('--nhid', type=int, default=200)
parser.add_argument('--nlayers', type=int, default=2)
parser.add_argument('--lr', type=float, default=20)
parser.add_argument('--save', type=str, default='model.pt')
parser.add_argument('--dry-run', action='store_true')
parser.add_argument('--use-optimizer', action='store_true')
args = parser.parse_args()
model = torch.nn.LSTM(args.emsize, args.nhid, args.nlayers)
if args.use_optimizer:
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr)
"""


def test_the_switch_an_optimizer_is_built_under_is_given_with_a_note():
    proposal = propose("main.py", WORD_MODEL, BUDGET)
    assert proposal.args == ["--use-optimizer", "--emsize=32", "--nhid=32",
                             "--save={out_dir}/model.pt"]  # fmt: skip
    assert proposal.notes[0] == (
        "main.py builds its optimizer only with --use-optimizer; without, it updates"
        " its weights by hand, which the gate (watching torch.optim's updates) cannot"
        " see: the gate runs it with them"
    )
    # a checkpoint file's setting counts as the output directory
    assert not any("output directory" in note for note in proposal.notes)

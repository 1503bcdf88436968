"""The training script init gives the gate's script mode, found in plain source: it
builds an optimizer, calls backward() and step() in a loop, and runs as a script."""

from __future__ import annotations

import textwrap

import pytest

from mlsmoke.adopt.script_candidates import choose, may_be_script


def source(text: str) -> str:
    return textwrap.dedent(text)


NANOGPT = source("""\
    import torch
    from model import GPT
    batch_size = 8
    exec(open("configurator.py").read())

    def get_batch(split):
        x = torch.randint(0, 10, (batch_size, 8))
        return x, x

    model = GPT()
    optimizer = model.configure_optimizers(0.1, 6e-4, (0.9, 0.95), "cpu")
    while True:
        X, Y = get_batch("train")
        logits, loss = model(X, Y)
        scaler.scale(loss).backward()
        scaler.step(optimizer)
    """)

ARGPARSE = source("""\
    import argparse
    import torch

    def train_one_epoch(model, loader, optimizer):
        for data, target in loader:
            optimizer.zero_grad()
            model(data).sum().backward()
            optimizer.step()

    def main():
        args = argparse.ArgumentParser().parse_args()
        model = torch.nn.Linear(2, 2)
        optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
        for epoch in range(3):
            train_one_epoch(model, loader, optimizer)

    if __name__ == "__main__":
        main()
    """)


def test_a_nanogpt_script_is_found_with_its_get_batch_to_pin():
    found = choose({"train.py": NANOGPT})
    assert found is not None
    assert found.path == "train.py"
    assert found.pin == "train:get_batch"
    assert "configure_optimizers (line 11)" in found.why and "line 12" in found.why


def test_an_argparse_script_under_a_main_guard_pins_its_first_loader():
    found = choose({"src/fit.py": ARGPARSE})
    assert found is not None and found.path == "src/fit.py"
    assert found.pin is None
    assert "torch.optim.SGD" in found.why


@pytest.mark.parametrize(
    "text",
    [
        pytest.param(ARGPARSE.replace('if __name__ == "__main__":\n', "if 0:\n")
                     .replace("    main()\n", "    pass\n"), id="not-a-script"),
        pytest.param(ARGPARSE.replace("torch.optim.SGD", "make_optimizer"),
                     id="no-optimizer"),
        pytest.param(ARGPARSE.replace(".backward()", ".detach()"), id="no-backward"),
        pytest.param(ARGPARSE.replace("torch.optim.SGD", "torch.optim.lr_scheduler"
                                      ".StepLR"), id="a-scheduler-is-not-one"),
        pytest.param("def broken(:\n", id="syntax-error"),
    ],
)  # fmt: skip
def test_what_is_not_a_training_script(text):
    assert choose({"train.py": text}) is None


def test_an_optimizer_imported_from_torch_optim_counts():
    text = ARGPARSE.replace(
        "import torch\n", "import torch\nfrom torch.optim import AdamW\n"
    )
    text = text.replace("torch.optim.SGD", "AdamW")
    found = choose({"train.py": text})
    assert found is not None and "AdamW" in found.why


@pytest.mark.parametrize(
    ("path", "script"),
    [
        ("train.py", True),
        ("src/pkg/train_gpt.py", True),
        ("benchmarks/train.py", False),
        ("examples/mnist/train.py", False),
        ("tests/train.py", False),
        ("pkg/tests/helpers.py", False),
        ("docs/conf.py", False),
        ("test_train.py", False),
        ("train_test.py", False),
        ("conftest.py", False),
        ("README.md", False),
    ],
)
def test_benchmarks_examples_docs_and_tests_are_not_scripts(path, script):
    assert may_be_script(path) is script
    assert (choose({path: ARGPARSE}) is not None) is script


def test_train_star_first_then_the_shallowest_then_by_name():
    sources = {
        "a/b/run.py": ARGPARSE,
        "main.py": ARGPARSE,
        "pkg/train_lm.py": ARGPARSE,
        "pkg/deep/train.py": ARGPARSE,
    }
    assert choose(sources).path == "pkg/train_lm.py"
    del sources["pkg/train_lm.py"], sources["pkg/deep/train.py"]
    assert choose(sources).path == "main.py"


@pytest.mark.parametrize(
    ("change", "pin"),
    [
        (("", ""), "train:get_batch"),
        (('X, Y = get_batch("train")', "X, Y = next(it)"), None),  # never called
        (("return x, x", "yield x, x"), None),  # a generator
    ],
)
def test_the_pin_is_a_get_batch_the_script_calls_and_that_returns(change, pin):
    text = NANOGPT.replace(*change) if change[0] else NANOGPT
    assert choose({"train.py": text}).pin == pin


TRAINER = source("""\
    import torch

    class Trainer:
        def __init__(self, config, model, dataset):
            self.model = model

        def run(self):
            self.optimizer = self.model.configure_optimizers(self.config)
            while True:
                logits, loss = self.model(x, y)
                loss.backward()
                self.optimizer.step()
    """)

PROJECT = source("""\
    import sys
    from lib.model import GPT
    from lib.trainer import Trainer

    if __name__ == "__main__":
        model = GPT(config)
        trainer = Trainer(config, model, dataset)
        trainer.run()
    """)


def test_a_script_that_trains_through_a_library_trainer_is_found():
    found = choose({"lib/trainer.py": TRAINER, "projects/adder/adder.py": PROJECT})
    assert found is not None and found.path == "projects/adder/adder.py"
    assert found.why.startswith("calls Trainer.run of lib/trainer.py, which builds")
    assert "configure_optimizers (line 8)" in found.why


@pytest.mark.parametrize(
    "change",
    [
        pytest.param(("trainer.run()", "trainer.evaluate()"), id="another-method"),
        pytest.param(("Trainer(config", "Runner(config"), id="another-class"),
        pytest.param(('if __name__ == "__main__":', "def unused():"), id="no-main"),
    ],
)
def test_a_script_that_does_not_run_the_trainer_is_not_one(change):
    project = PROJECT.replace(*change)
    assert choose({"lib/trainer.py": TRAINER, "projects/p.py": project}) is None


def test_a_scripts_own_function_is_not_a_library_routine_of_that_name():
    library = source("""\
        import torch

        def main():
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            for x, y in loader:
                model(x, y).backward()
                optimizer.step()
        """)
    evaluate = source("""\
        def main():
            print("evaluating")

        if __name__ == "__main__":
            main()
        """)
    assert choose({"lib/fit.py": library, "evaluate.py": evaluate}) is None
    calls_it = "from lib.fit import main\n\nif __name__ == '__main__':\n    main()\n"
    found = choose({"lib/fit.py": library, "run.py": calls_it})
    assert found is not None and found.why.startswith("calls main of lib/fit.py")

"""A script that trains through a library's trainer is found as a training script:
it builds transformers' or Lightning's ``Trainer`` and calls its training method."""

from __future__ import annotations

import ast
import textwrap

import pytest

from mlsmoke.adopt import script_candidates
from mlsmoke.adopt.library_trainers import trains_through

HF = """\
from transformers import Trainer, TrainingArguments

def main():
    trainer = Trainer(model=model, args=TrainingArguments("out"))
    trainer.train()

if __name__ == "__main__":
    main()
"""


def why(source: str) -> str | None:
    return trains_through(ast.parse(textwrap.dedent(source)))


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        pytest.param(HF, "builds transformers.Trainer (line 4) and calls its train()"
                     " (line 5)", id="transformers"),
        pytest.param("import transformers\ntransformers.Trainer(model=m).train()\n",
                     "builds transformers.Trainer (line 2)", id="chained"),
        pytest.param("from transformers import Seq2SeqTrainer as T\nt = T(m)\n"
                     "t.train()\n", "builds transformers.Seq2SeqTrainer", id="alias"),
        pytest.param("import lightning as L\ntrainer = L.Trainer(max_epochs=3)\n"
                     "trainer.fit(model, loader)\n",
                     "builds lightning.Trainer (line 2) and calls its fit()",
                     id="lightning"),
        pytest.param("import pytorch_lightning as pl\npl.Trainer().fit(model)\n",
                     "builds pytorch_lightning.Trainer", id="pytorch-lightning"),
        pytest.param("from trl import SFTTrainer\nSFTTrainer(model=m).train()\n",
                     "builds trl.SFTTrainer", id="trl"),
    ],
)  # fmt: skip
def test_a_library_trainer_that_trains_is_found(source, expected):
    found = why(source)
    assert found is not None and found.startswith(expected), found


@pytest.mark.parametrize(
    "source",
    [
        pytest.param(HF.replace("trainer.train()", "trainer.evaluate()"),
                     id="evaluates-only"),
        pytest.param("import lightning as L\nL.Trainer().test(model)\n",
                     id="lightning-test-only"),
        pytest.param("class Trainer:\n    def train(self): ...\nTrainer().train()\n",
                     id="own-class"),
        pytest.param("from transformers import TrainingArguments\n"
                     "TrainingArguments('out').train()\n", id="not-a-trainer"),
        pytest.param("import lightning as L\nL.Trainer().train()\n",
                     id="lightning-has-no-train"),
    ],
)  # fmt: skip
def test_what_does_not_train_through_a_library_trainer_is_not_found(source):
    assert why(source) is None


def test_the_script_that_trains_through_a_trainer_is_the_training_script():
    found = script_candidates.choose({"train.py": HF, "model.py": "import torch\n"})
    assert found is not None and found.path == "train.py"
    assert found.why.startswith("builds transformers.Trainer")


def test_a_trainer_script_without_a_main_guard_or_top_level_run_is_no_script():
    library = (
        "from transformers import Trainer\n\ndef fit(m):\n    Trainer(m).train()\n"
    )
    assert script_candidates.choose({"train.py": library}) is None

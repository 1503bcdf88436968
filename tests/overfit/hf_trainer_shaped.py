"""A repository shaped like a Hugging Face fine-tuning script, written for real: an
argparse ``train.py`` whose ``main()`` builds a small ``BertForSequenceClassification``
from a ``BertConfig`` (dropout on, as its defaults have it), random token data, and
trains with ``Trainer(...).train()`` for a few epochs under ``TrainingArguments``:
the Trainer counts its own steps and decays the lr to 0 at the last one, long before
the gate's max-steps. Nothing is downloaded."""

from __future__ import annotations

from pathlib import Path

TRAIN = '''\
"""Fine-tune a small text classifier with the Hugging Face Trainer."""
import argparse

import torch
from transformers import (BertConfig, BertForSequenceClassification, Trainer,
                          TrainingArguments)


class RandomTexts(torch.utils.data.Dataset):
    def __init__(self, n, seq=8, vocab=100, labels=3, seed=0):
        g = torch.Generator().manual_seed(seed)
        self.ids = torch.randint(0, vocab, (n, seq), generator=g)
        self.labels = torch.randint(0, labels, (n,), generator=g)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        ids = self.ids[i]
        return {"input_ids": ids, "attention_mask": torch.ones_like(ids),
                "labels": self.labels[i]}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--output-dir", default="out")
    parser.add_argument("--learning-rate", type=float, default=2e-3)
    parser.add_argument("--epochs", type=float, default=2)
    parser.add_argument("--batch-size", type=int, default=16)
    args = parser.parse_args()
    config = BertConfig(vocab_size=100, hidden_size=32, num_hidden_layers=1,
                        num_attention_heads=2, intermediate_size=64, num_labels=3)
    model = BertForSequenceClassification(config)
    training = TrainingArguments(output_dir=args.output_dir,
                                 learning_rate=args.learning_rate,
                                 num_train_epochs=args.epochs,
                                 per_device_train_batch_size=args.batch_size,
                                 report_to=[], save_strategy="no", logging_steps=10,
                                 disable_tqdm=True)
    trainer = Trainer(model=model, args=training, train_dataset=RandomTexts(64))
    trainer.train()
    trainer.save_model(args.output_dir)


if __name__ == "__main__":
    main()
'''

PYPROJECT = """\
[project]
name = "classifier"
version = "0.1.0"
dependencies = ["torch", "transformers"]
"""

# The trainer's own run: 2 epochs of 64 examples in batches of 16.
OWN_STEPS = 8


def write_hf_trainer_repo(root: Path, args: list[str] | None = None) -> Path:
    """The repository at ``root`` (a git repository); with ``args``, its gate in
    script mode is configured with them."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "train.py").write_text(TRAIN)
    config = PYPROJECT
    if args is not None:
        quoted = ", ".join(f'"{arg}"' for arg in args)
        config += f'\n[tool.mlsmoke.overfit]\nscript = "train.py"\nargs = [{quoted}]\n'
    (root / "pyproject.toml").write_text(config)
    return root

"""Text data as a transformers user has it: a tokenizer, a small labelled dataset, and
the library's own collators.

The tokenizer is built here from a vocabulary written below (a ``tokenizers``
WordLevel model wrapped in ``PreTrainedTokenizerFast``), so that nothing is
downloaded. Sentences are drawn from the vocabulary under a fixed seed; their lengths
differ, so that a batch needs padding as real text does.
"""

from __future__ import annotations

import random
from functools import lru_cache
from typing import Any

from tokenizers import Tokenizer, models, pre_tokenizers, processors
from transformers import (
    DataCollatorForLanguageModeling,
    DataCollatorWithPadding,
    PreTrainedTokenizerFast,
)

SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = (
    "the a cat dog bird fish sat ran flew swam on under over near mat log tree "
    "pond red blue green small big quick slow happy sad and or but not very "
    "today yesterday here there it they we you"
).split()
VOCAB = {token: index for index, token in enumerate(SPECIAL + WORDS)}
VOCAB_SIZE = len(VOCAB)
EXAMPLES = 12
LABELS = 3
MAX_POSITIONS = 32


@lru_cache(maxsize=1)
def tokenizer() -> PreTrainedTokenizerFast:
    """A BERT-style tokenizer ([CLS] text [SEP]) over VOCAB, built in memory."""
    backend = Tokenizer(models.WordLevel(VOCAB, unk_token="[UNK]"))
    backend.pre_tokenizer = pre_tokenizers.Whitespace()
    backend.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]",
        pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", VOCAB["[CLS]"]), ("[SEP]", VOCAB["[SEP]"])],
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token="[PAD]",
        unk_token="[UNK]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        mask_token="[MASK]",
        model_max_length=MAX_POSITIONS,
    )


def sentences(count: int = EXAMPLES, shortest: int = 4, longest: int = 9) -> list[str]:
    rng = random.Random(0)
    return [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(shortest, longest)))
        for _ in range(count)
    ]


def labels(count: int = EXAMPLES, classes: int = LABELS) -> list[int]:
    return [index % classes for index in range(count)]


def raw_dataset() -> list[dict[str, Any]]:
    """Rows as a dataset holds them before tokenization: text and label."""
    return [
        {"text": text, "label": label} for text, label in zip(sentences(), labels())
    ]


def tokenized_dataset(rows: list[dict[str, Any]] | None = None) -> list[dict]:
    """Each row tokenized on its own (``dataset.map(tokenize)``): ragged lists."""
    rows = raw_dataset() if rows is None else rows
    encode = tokenizer()
    return [
        {**dict(encode(row["text"], truncation=True)), "label": row["label"]}
        for row in rows
    ]


def classification_batch() -> Any:
    """The recipe done right: tokenized rows padded by DataCollatorWithPadding."""
    return DataCollatorWithPadding(tokenizer())(tokenized_dataset())


def lm_sentences(count: int = 8) -> list[str]:
    """Each starts with its own word, so the rest is predictable from the start."""
    rng = random.Random(1)
    return [" ".join(rng.sample(WORDS, rng.randint(5, 9))) for _ in range(count)]


def lm_rows(texts: list[str] | None = None) -> list[dict[str, Any]]:
    encode = tokenizer()
    texts = lm_sentences() if texts is None else texts
    return [
        {"input_ids": encode(t, add_special_tokens=False)["input_ids"]} for t in texts
    ]


def lm_batch() -> Any:
    """Causal LM: DataCollatorForLanguageModeling(mlm=False) pads and sets labels."""
    return DataCollatorForLanguageModeling(tokenizer(), mlm=False)(lm_rows())


def seq2seq_batch() -> dict[str, Any]:
    """Encoder-decoder: copy each sentence (input text -> the same text reversed)."""
    encode = tokenizer()
    texts = sentences(8)
    targets = [" ".join(reversed(text.split())) for text in texts]
    batch = encode(texts, padding=True, return_tensors="pt")
    target_ids = encode(targets, padding=True, return_tensors="pt")["input_ids"]
    target_ids[target_ids == encode.pad_token_id] = -100
    batch["labels"] = target_ids
    batch.pop("token_type_ids", None)
    return dict(batch)

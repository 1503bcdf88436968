"""The library catalog: transformers and Lightning models that must memorize, and real
bugs in their pipelines that must fail with the right code (or warn).

The cases share the Case of the hand-written catalog, so one runner, one test and one
benchmark read both. Every model is built from a config object and every batch by the
libraries' own tokenizer and collators (``text.py``, ``models.py``).
"""

from __future__ import annotations

from typing import Any

import torch
from torch.nn import functional as F
from transformers import BertForMaskedLM, DataCollatorForLanguageModeling
from transformers import default_data_collator

from ..cases import Case
from . import bugs, models, text

BERT = "BERT classifier"
GPT2 = "GPT-2 causal LM"
SEQ2SEQ = "encoder-decoder (T5, BART)"
VISION = "vision (ViT, ResNet)"
AUDIO = "audio (HuBERT)"
LIGHTNING = "LightningModule"


def max_length_batch() -> Any:
    """Rows padded by the tokenizer to one length, stacked by default_data_collator."""
    encode = text.tokenizer()
    rows = [
        {**dict(encode(row["text"], padding="max_length", max_length=16)), **row}
        for row in text.raw_dataset()
    ]
    return default_data_collator(
        [{k: v for k, v in r.items() if k != "text"} for r in rows]
    )


def masked_lm_batch() -> Any:
    rows = [{"input_ids": row["input_ids"]} for row in text.tokenized_dataset()]
    return DataCollatorForLanguageModeling(text.tokenizer(), mlm_probability=0.3)(rows)


def masked_lm() -> BertForMaskedLM:
    return BertForMaskedLM(models.bert_config())


def shifted_cross_entropy(model: torch.nn.Module, batch: dict) -> torch.Tensor:
    logits = model(input_ids=batch["input_ids"]).logits[:, :-1]
    targets = batch["labels"][:, 1:]
    return F.cross_entropy(logits.flatten(0, 1), targets.flatten(), ignore_index=-100)


def cross_entropy_plus_kl(model: torch.nn.Module, batch: dict) -> torch.Tensor:
    """Distillation: cross-entropy plus KL to a soft teacher distribution."""
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    logits = model(**inputs).logits
    teacher = F.one_hot(batch["labels"], text.LABELS).float() * 4.0 + 1.0
    soft = F.log_softmax(teacher, -1)
    log_probs = F.log_softmax(logits, -1)
    kl = F.kl_div(log_probs, soft, log_target=True, reduction="batchmean")
    return F.cross_entropy(logits, batch["labels"]) + 2.0 * kl


def project_adamw(params: Any) -> torch.optim.Optimizer:
    return torch.optim.AdamW(params, lr=3e-3, weight_decay=0.01)


CORRECT = [
    Case("hf-hubert-audio", AUDIO, models.hubert_classifier, models.audio_batch),
    Case(
        "hf-bert-gradient-checkpointing",
        BERT,
        models.bert_checkpointed,
        text.classification_batch,
    ),
    Case(
        "hf-bert-padding-collator",
        BERT,
        models.bert_classifier,
        text.classification_batch,
    ),
    Case("hf-bert-max-length", BERT, models.bert_classifier, max_length_batch),
    Case("hf-bert-masked-lm", BERT, masked_lm, masked_lm_batch),
    Case(
        "hf-bert-project-adamw",
        BERT,
        models.bert_classifier,
        text.classification_batch,
        optimizer=project_adamw,
    ),
    Case(
        "hf-bert-ce-plus-kl",
        BERT,
        models.bert_classifier,
        text.classification_batch,
        loss=cross_entropy_plus_kl,
    ),
    Case("hf-gpt2-lm-collator", GPT2, models.gpt2_lm, text.lm_batch),
    Case(
        "hf-gpt2-shifted-loss",
        GPT2,
        models.gpt2_lm,
        text.lm_batch,
        loss=shifted_cross_entropy,
    ),
    Case("hf-t5", SEQ2SEQ, models.t5_seq2seq, text.seq2seq_batch),
    Case("hf-bart", SEQ2SEQ, models.bart_seq2seq, text.seq2seq_batch),
    Case("hf-vit", VISION, models.vit_classifier, models.image_batch),
    Case("hf-resnet", VISION, models.resnet_classifier, models.image_batch),
    Case(
        "pl-text-datamodule",
        LIGHTNING,
        models.TextClassifier,
        models.TextDataModule,
    ),
    Case(
        "pl-vit-dataloader",
        LIGHTNING,
        models.ImageClassifier,
        models.image_loader,
    ),
]

BUGS = [
    # what the batch holds, whatever words the library's check uses
    Case(
        "hf-bert-float-labels",
        BERT,
        models.bert_classifier,
        bugs.float_labels,
        "data-error",
        says="holds labels as float32 where the step takes int64",
        bug="class indices as floats (the head switches to a multi-label loss)",
    ),
    Case(
        "hf-bert-ids-and-embeddings",
        BERT,
        models.bert_classifier,
        bugs.ids_and_embeddings,
        "data-error",
        says="rejects the batch's input_ids, inputs_embeds",
        bug="input_ids and inputs_embeds both in the batch",
    ),
    Case(
        "hf-bert-position-ids-past-the-table",
        BERT,
        models.bert_classifier,
        bugs.positions_past_the_table,
        "data-error",
        says="batch field position_ids holds ids up to",
        bug="position ids beyond max_position_embeddings",
    ),
    Case(
        "hf-resnet-uint8-pixels",
        VISION,
        models.resnet_classifier,
        bugs.uint8_pixels,
        "data-error",
        says="holds pixel_values as uint8 where the step takes float32",
        bug="uint8 pixels given to a float model",
    ),
    Case(
        "hf-bert-loss-from-item",
        BERT,
        models.bert_classifier,
        text.classification_batch,
        "no-gradient",
        loss=bugs.loss_rebuilt_from_item,
        says="rebuilt from a number",
        bug="the loss rebuilt as torch.tensor(loss.item(), requires_grad=True)",
    ),
    Case(
        "lightning-uncollated-loader",
        LIGHTNING,
        models.ImageClassifier,
        bugs.uncollated_image_loader,
        "data-error",
        says="separate samples, never collated",
        bug="a collate_fn that returns the samples unstacked",
    ),
    Case(
        "hf-bert-attention-mask-zeros",
        BERT,
        models.bert_classifier,
        bugs.attention_masked_out,
        "not-learning",
        says="batch field attention_mask is all 0",
        bug="an attention mask of zeros: every position hidden",
    ),
    Case(
        "hf-vit-dropout-0.9",
        VISION,
        lambda: models.vit_classifier(hidden_dropout_prob=0.9),
        models.image_batch,
        "not-learning",
        warnings=frozenset({"dropout-active"}),
        says="with every dropout at p = 0 the batch is memorized",
        bug="dropout 0.9: every step trains another random sub-network",
    ),
    Case(
        "hf-hubert-softmax-twice",
        AUDIO,
        models.hubert_classifier,
        models.audio_batch,
        "not-learning",
        loss=bugs.cross_entropy_of_softmax,
        bug="softmax before cross_entropy, in a speech classifier",
    ),
    # the field guide's BERT scenario, one bug at a time
    Case(
        "hf-bert-raw-text",
        BERT,
        models.bert_classifier,
        bugs.raw_text_to_collator,
        "data-error",
        bug="the dataset still holds raw text (collator raises)",
    ),
    Case(
        "hf-bert-unpadded",
        BERT,
        models.bert_classifier,
        bugs.unpadded_examples,
        "data-error",
        bug="examples not padded: default_data_collator on ragged rows",
    ),
    Case(
        "hf-bert-num-labels",
        BERT,
        lambda: models.bert_classifier(num_labels=2),
        text.classification_batch,
        "label-range-error",
        bug="num_labels=2 for labels 0..2",
    ),
    # inputs that are not tensors, or not there
    Case(
        "hf-bert-text-dropped",
        BERT,
        models.bert_classifier,
        bugs.text_dropped_by_collator,
        "data-error",
        bug="default_data_collator drops the text: no input_ids reach the model",
    ),
    Case(
        "hf-bert-token-lists",
        BERT,
        models.bert_classifier,
        bugs.token_lists_without_tensors,
        "data-error",
        bug="tokenizer without return_tensors: fields are lists",
    ),
    Case(
        "hf-t5-no-labels",
        SEQ2SEQ,
        models.t5_seq2seq,
        bugs.seq2seq_without_labels,
        "data-error",
        bug="labels dropped from the batch: no decoder input",
    ),
    Case(
        "hf-gpt2-strings",
        GPT2,
        models.gpt2_lm,
        bugs.strings_as_input_ids,
        "data-error",
        bug="input_ids hold the raw strings",
    ),
    Case(
        "hf-bert-label-key",
        BERT,
        models.bert_classifier,
        bugs.misnamed_labels,
        "data-error",
        bug="batch key 'label' for forward(labels=...): no loss",
    ),
    Case(
        "pl-ragged-loader",
        LIGHTNING,
        models.TextClassifier,
        bugs.ragged_loader,
        "data-error",
        bug="DataLoader's default collate over ragged token lists",
    ),
    # shapes checked by the libraries
    Case(
        "hf-vit-image-size",
        VISION,
        models.vit_classifier,
        lambda: models.image_batch(size=32),
        "shape-error",
        bug="32x32 images for a ViT configured for 16x16",
    ),
    Case(
        "hf-resnet-channels",
        VISION,
        models.resnet_classifier,
        lambda: models.image_batch(channels=1),
        "shape-error",
        bug="grayscale images for a 3-channel ResNet",
    ),
    Case(
        "hf-bert-too-long",
        BERT,
        models.bert_classifier,
        bugs.too_long_sequences,
        "shape-error",
        bug="sequences longer than max_position_embeddings",
    ),
    Case(
        "hf-bert-pairwise-table",
        BERT,
        bugs.BertWithPairwiseBias,
        text.classification_batch,
        "out-of-memory",
        bug="a bias table sized by a constant",
    ),
    # numbers
    Case(
        "hf-vit-nan-pixels",
        VISION,
        models.vit_classifier,
        bugs.nan_pixels,
        "non-finite",
        bug="a blank image normalized by its std: NaN pixels",
    ),
    # objectives
    Case(
        "hf-vit-nll-on-logits",
        VISION,
        models.vit_classifier,
        models.image_batch,
        "wrong-objective",
        loss=bugs.nll_on_logits,
        warnings=frozenset({"init-loss"}),  # nll_loss on raw logits, named
        bug="nll_loss on logits (log_softmax forgotten)",
    ),
    Case(
        "hf-bert-log-likelihood",
        BERT,
        models.bert_classifier,
        text.classification_batch,
        "wrong-objective",
        loss=bugs.log_likelihood,
        options={"target_ratio": 0.05},
        warnings=frozenset({"init-loss"}),  # a cross-entropy up to its sign
        bug="the log-likelihood, not its negative: negative at init, target-ratio set",
    ),
    Case(
        "hf-gpt2-negated-loss",
        GPT2,
        models.gpt2_lm,
        text.lm_batch,
        "wrong-objective",
        loss=bugs.negated_loss,
        warnings=frozenset({"init-loss"}),  # a cross-entropy up to its sign
        bug="loss = -outputs.loss",
    ),
    Case(
        "hf-bert-double-softmax",
        BERT,
        models.bert_classifier,
        text.classification_batch,
        "not-learning",
        loss=bugs.cross_entropy_of_softmax,
        bug="softmax before cross_entropy: a floor above the target",
    ),
    # learning rate
    Case(
        "hf-gpt2-lr-0.1",
        GPT2,
        models.gpt2_lm,
        text.lm_batch,
        "lr-too-high",
        options={"lr": 0.1},
        bug="Adam at lr 0.1: the loss oscillates",
    ),
    Case(
        "hf-vit-lr-1e-7",
        VISION,
        models.vit_classifier,
        models.image_batch,
        "lr-too-low",
        options={"lr": 1e-7},
        bug="Adam at lr 1e-7",
    ),
    Case(
        "hf-bert-warmup-lr-0",
        BERT,
        models.bert_classifier,
        text.classification_batch,
        "lr-too-low",
        optimizer=bugs.warmup_by_integer_division,
        bug="LambdaLR warmup by integer division: lr 0",
    ),
    Case(
        "pl-warmup-lr-0",
        LIGHTNING,
        bugs.WarmupStuckAtZero,
        models.TextDataModule,
        "lr-too-low",
        bug="configure_optimizers: a warmup LambdaLR stuck at 0",
    ),
    # gradients and bookkeeping
    Case(
        "hf-gpt2-frozen-by-name",
        GPT2,
        bugs.gpt2_classifier_frozen_by_name,
        text.classification_batch,
        "no-gradient",
        bug="freezing all but 'classifier'; GPT-2's head is 'score'",
    ),
    Case(
        "pl-detached-loss",
        LIGHTNING,
        bugs.DetachedTextClassifier,
        models.TextDataModule,
        "no-gradient",
        bug="training_step returns loss.detach()",
    ),
    Case(
        "hf-bert-optimizer-other-model",
        BERT,
        models.bert_classifier,
        text.classification_batch,
        "optimizer-mismatch",
        optimizer=bugs.optimizer_over_another_model,
        bug="the optimizer built over another model's parameters",
    ),
    Case(
        "hf-bert-head-in-list",
        BERT,
        bugs.FrozenBertWithListedHead,
        text.classification_batch,
        "unregistered-parameters",
        warnings=frozenset({"unregistered-parameters"}),
        bug="frozen backbone, new head kept in a plain list",
    ),
    Case(
        "hf-gpt2-whole-dataset",
        GPT2,
        models.gpt2_lm,
        bugs.many_sentences,
        "too-slow",
        options={"max_steps": 40},
        bug="64 random sentences as the batch, for a budget of 40 steps",
    ),
    # determinism
    Case(
        "hf-bert-masking-in-eval",
        BERT,
        bugs.BertWithTokenMasking,
        text.classification_batch,
        "nondeterministic-batch",
        bug="random token masking in forward, also in eval mode",
    ),
]

WARNINGS = [
    Case(
        "hf-vit-init-range",
        VISION,
        lambda: models.vit_classifier(initializer_range=1.0),
        models.image_batch,
        warnings=frozenset({"init-loss"}),
        bug="initializer_range 1.0 for 0.02",
    ),
    Case(
        "hf-bert-sorted-labels",
        BERT,
        models.bert_classifier,
        bugs.sorted_by_label,
        warnings=frozenset({"degenerate-batch"}),
        bug="one class in the batch",
    ),
    Case(
        "hf-gpt2-ids-mixed",
        GPT2,
        bugs.GPT2WithIdsMixed,
        text.lm_batch,
        # the reshape also puts later tokens of a row before earlier ones
        warnings=frozenset({"batch-mixing", "reads-future-tokens"}),
        bug="input_ids reshaped time-major: samples mix before the embedding",
    ),
    Case(
        "hf-gpt2-loss-on-wrong-axis",
        GPT2,
        bugs.GPT2WithLossOnWrongAxis,
        text.lm_batch,
        warnings=frozenset({"loss-mixes-samples"}),
        bug="logits flattened time-major against batch-major targets",
    ),
    Case(
        "hf-gpt2-4d-padding-mask",
        GPT2,
        bugs.GPT2WithPaddingMask4D,
        text.lm_batch,
        warnings=frozenset({"reads-future-tokens"}),
        bug="a 4D padding mask replaces the causal mask: each token sees the next",
    ),
    Case(
        "hf-vit-batch-statistics",
        VISION,
        bugs.ViTWithBatchStatistics,
        models.image_batch,
        warnings=frozenset({"batch-mixing"}),
        bug="pixels standardized over the batch dimension in forward",
    ),
    Case(
        "hf-bert-dropout",
        BERT,
        lambda: models.bert_classifier(hidden_dropout_prob=0.1),
        text.classification_batch,
        warnings=frozenset({"dropout-active"}),
        bug="BERT's default dropout 0.1 on",
    ),
    Case(
        "hf-bert-listed-adapters",
        BERT,
        bugs.BertWithListedAdapters,
        text.classification_batch,
        warnings=frozenset({"unregistered-parameters"}),
        bug="adapters kept in a plain list: never trained",
    ),
    Case(
        "hf-bert-mean-pooled",
        BERT,
        models.MeanPooledBert,
        text.classification_batch,
        warnings=frozenset({"dead-weights"}),
        bug="a sentence embedding averages BERT's states: its pooler is never called",
    ),
    Case(
        "hf-bert-first-layer-frozen",
        BERT,
        models.bert_first_layer_frozen,
        text.classification_batch,
        warnings=frozenset({"frozen-parameters"}),
        bug="an experiment's freeze of the first encoder layer, left in",
    ),
]

CASES = CORRECT + BUGS + WARNINGS

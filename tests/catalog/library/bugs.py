"""Real bugs in transformers and Lightning code: the factories, losses and optimizers
that carry them. Each says what is wrong in a comment that starts with ``bug:``."""

from __future__ import annotations

import random
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, TensorDataset
from transformers import (
    BertModel,
    DataCollatorForLanguageModeling,
    DataCollatorWithPadding,
    GPT2Config,
    GPT2ForSequenceClassification,
    default_data_collator,
)

from . import models, text

# --- the data pipeline ---------------------------------------------------------------


def raw_text_to_collator() -> Any:
    # bug: the dataset still holds raw text; the tokenizer was never mapped over it
    return DataCollatorWithPadding(text.tokenizer())(text.raw_dataset())


def unpadded_examples() -> Any:
    # bug: examples of different lengths, collated without padding
    return default_data_collator(text.tokenized_dataset())


def text_dropped_by_collator() -> Any:
    # bug: default_data_collator silently drops string fields: only labels are left
    return default_data_collator(text.raw_dataset())


def token_lists_without_tensors() -> Any:
    # bug: tokenizer called without return_tensors="pt": the fields are Python lists
    batch = dict(text.tokenizer()(text.sentences(), padding=True))
    batch["labels"] = text.labels()
    return batch


def strings_as_input_ids() -> dict[str, Any]:
    # bug: the text column mapped to input_ids unchanged
    return {"input_ids": text.lm_sentences(), "labels": text.lm_batch()["labels"]}


def misnamed_labels() -> dict[str, Any]:
    batch = dict(text.tokenizer()(text.sentences(), padding=True, return_tensors="pt"))
    batch["label"] = torch.tensor(text.labels())  # bug: forward takes `labels`
    return batch


def ragged_loader() -> DataLoader:
    # bug: DataLoader's default collate over token lists of different lengths
    return DataLoader(text.tokenized_dataset(), batch_size=text.EXAMPLES)


def too_long_sequences() -> Any:
    # bug: truncation forgotten; sentences longer than max_position_embeddings
    long_texts = [" ".join([sentence] * 6) for sentence in text.sentences()]
    rows = [
        {**dict(text.tokenizer()(t)), "label": label}
        for t, label in zip(long_texts, text.labels())
    ]
    return DataCollatorWithPadding(text.tokenizer())(rows)


def nan_pixels() -> dict[str, Any]:
    batch = models.image_batch()
    # bug: a blank image normalized by its own std (0): 0 / 0
    blank = batch["pixel_values"][3] * 0
    batch["pixel_values"][3] = (blank - blank.mean()) / blank.std()
    return batch


def seq2seq_without_labels() -> dict[str, Any]:
    # bug: the target column dropped with the other unused columns: no labels
    return {k: v for k, v in text.seq2seq_batch().items() if k != "labels"}


def sorted_by_label() -> Any:
    # bug: the dataset sorted by label, so the first batch holds one class
    rows = [row for row in text.tokenized_dataset() if row["label"] == 0]
    return DataCollatorWithPadding(text.tokenizer())(rows * 3)


# --- models --------------------------------------------------------------------------


class BertWithPairwiseBias(nn.Module):
    """A classifier adding a relative-position bias table to BERT's output."""

    def __init__(self) -> None:
        super().__init__()
        self.classifier = models.bert_classifier()

    def forward(self, input_ids, attention_mask, labels, token_type_ids=None) -> Any:
        # bug: the bias table sized by a constant (max positions squared, squared)
        table = torch.zeros(300_000, 300_000)
        out = self.classifier(input_ids=input_ids, attention_mask=attention_mask)
        return F.cross_entropy(out.logits + table[0, 0], labels)


def gpt2_classifier_frozen_by_name() -> GPT2ForSequenceClassification:
    config = GPT2Config(
        vocab_size=text.VOCAB_SIZE,
        n_positions=text.MAX_POSITIONS,
        n_embd=models.HIDDEN,
        n_layer=models.LAYERS,
        n_head=models.HEADS,
        num_labels=text.LABELS,
        pad_token_id=0,
        bos_token_id=text.VOCAB["[CLS]"],
        eos_token_id=text.VOCAB["[SEP]"],
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
    )
    model = GPT2ForSequenceClassification(config)
    for name, parameter in model.named_parameters():
        # bug: freeze the backbone, train the head; GPT-2's head is `score`
        parameter.requires_grad = "classifier" in name
    return model


class FrozenBertWithListedHead(nn.Module):
    """A frozen pretrained backbone and a new head to train."""

    def __init__(self) -> None:
        super().__init__()
        self.bert = BertModel(models.bert_config(), add_pooling_layer=False)
        self.bert.requires_grad_(False)
        # bug: a plain list: the head is not registered, the optimizer never sees it
        self.head = [nn.Linear(models.HIDDEN, models.HIDDEN), nn.Linear(32, 3)]

    def forward(self, input_ids, attention_mask, labels, token_type_ids=None) -> Any:
        hidden = self.bert(input_ids, attention_mask).last_hidden_state[:, 0]
        logits = self.head[1](torch.tanh(self.head[0](hidden)))
        return F.cross_entropy(logits, labels)


class BertWithListedAdapters(nn.Module):
    """BERT with bottleneck adapters on its pooled output."""

    def __init__(self) -> None:
        super().__init__()
        self.bert = models.bert_classifier()
        # bug: a plain list, so the adapters stay at their random init
        self.adapters = [nn.Linear(text.LABELS, text.LABELS) for _ in range(2)]

    def forward(self, input_ids, attention_mask, labels, token_type_ids=None) -> Any:
        logits = self.bert(input_ids=input_ids, attention_mask=attention_mask).logits
        for adapter in self.adapters:
            logits = logits + adapter(logits)
        return F.cross_entropy(logits, labels)


class GPT2WithIdsMixed(nn.Module):
    """A wrapper that lays the ids out time-major for a sequence-first encoder."""

    def __init__(self) -> None:
        super().__init__()
        self.lm = models.gpt2_lm()

    def forward(self, input_ids, attention_mask, labels) -> Any:
        batch, length = input_ids.shape
        # bug: view where transpose was meant; tokens of other samples mix in
        ids = input_ids.reshape(length, batch).t().contiguous()
        return self.lm(input_ids=ids, labels=labels)


class GPT2WithLossOnWrongAxis(nn.Module):
    """A wrapper that computes the next-token loss itself, logits time-major."""

    def __init__(self) -> None:
        super().__init__()
        self.lm = models.gpt2_lm()

    def forward(self, input_ids, attention_mask, labels) -> Any:
        logits = self.lm(input_ids=input_ids, attention_mask=attention_mask).logits
        shifted = logits[:, :-1]  # (B, T-1, V)
        # bug: transposed before flattening; the targets stay batch-major
        flat = shifted.transpose(0, 1).reshape(-1, shifted.size(-1))
        loss = F.cross_entropy(flat, labels[:, 1:].reshape(-1), ignore_index=-100)
        return {"loss": loss, "logits": logits}


class GPT2WithPaddingMask4D(nn.Module):
    """A wrapper that passes GPT-2 its padding mask as a 4D attention mask."""

    def __init__(self) -> None:
        super().__init__()
        self.lm = models.gpt2_lm()

    def forward(self, input_ids, attention_mask, labels) -> Any:
        batch, length = input_ids.shape
        # bug: a 4D mask is used as given and replaces the causal one: every
        # position attends to the whole row, the next token included
        mask = attention_mask[:, None, None, :].expand(batch, 1, length, length)
        return self.lm(input_ids=input_ids, attention_mask=mask.bool(), labels=labels)


class ViTWithBatchStatistics(nn.Module):
    """A ViT that standardizes its pixels on the fly."""

    def __init__(self) -> None:
        super().__init__()
        self.vit = models.vit_classifier()

    def forward(self, pixel_values, labels) -> Any:
        # bug: statistics over the batch dimension: each image depends on the others
        pixels = (pixel_values - pixel_values.mean(0)) / pixel_values.std(0)
        return self.vit(pixel_values=pixels, labels=labels)


class BertWithTokenMasking(nn.Module):
    """A classifier that masks random tokens as a regularizer."""

    def __init__(self) -> None:
        super().__init__()
        self.bert = models.bert_classifier()

    def forward(self, input_ids, attention_mask, labels, token_type_ids=None) -> Any:
        # bug: masks in eval mode too (no check of self.training), at every call;
        # a masked token is hidden from attention as well
        masked = torch.rand(input_ids.shape) < 0.85
        ids = input_ids.masked_fill(masked, text.VOCAB["[MASK]"])
        attention_mask = attention_mask.masked_fill(masked, 0)
        return self.bert(input_ids=ids, attention_mask=attention_mask, labels=labels)


class DetachedTextClassifier(models.TextClassifier):
    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        loss = self(**batch).loss
        self.log("train_loss", loss.detach())
        return loss.detach()  # bug: detached along with the logged value


class WarmupStuckAtZero(models.TextClassifier):
    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.AdamW(self.parameters(), lr=self.lr)
        warmup = 1000  # steps, as for the full training run
        # bug: integer division: the factor is 0 until the warmup ends
        schedule = torch.optim.lr_scheduler.LambdaLR(
            optimizer, lambda step: min(1.0, step // warmup)
        )
        scheduler = {"scheduler": schedule, "interval": "step"}
        return {"optimizer": optimizer, "lr_scheduler": scheduler}


# --- losses and optimizers -----------------------------------------------------------


def nll_on_logits(model: nn.Module, batch: dict) -> torch.Tensor:
    logits = model(pixel_values=batch["pixel_values"]).logits
    return F.nll_loss(logits, batch["labels"])  # bug: log_softmax forgotten


def log_likelihood(model: nn.Module, batch: dict) -> torch.Tensor:
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    log_probs = model(**inputs).logits.log_softmax(-1)
    # bug: the mean log-likelihood returned as the loss, without its minus
    return log_probs.gather(1, batch["labels"][:, None]).mean()


def negated_loss(model: nn.Module, batch: dict) -> torch.Tensor:
    return -model(**batch).loss  # bug: the sign of a log-likelihood kept


def cross_entropy_of_softmax(model: nn.Module, batch: dict) -> torch.Tensor:
    inputs = {k: v for k, v in batch.items() if k != "labels"}
    probabilities = model(**inputs).logits.softmax(-1)
    # bug: cross_entropy applies log_softmax itself: softmax twice
    return F.cross_entropy(probabilities, batch["labels"])


def optimizer_over_another_model(params: Any) -> torch.optim.Optimizer:
    # bug: the parameters of a second model, built for the optimizer by mistake
    return torch.optim.AdamW(models.bert_classifier().parameters(), lr=5e-3)


def warmup_by_integer_division(params: Any) -> torch.optim.Optimizer:
    optimizer = torch.optim.AdamW(params, lr=5e-3)
    # bug: step // 1000 is 0 for the first 1000 steps: the lr is 0
    torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: min(1.0, step // 1000))
    return optimizer


def many_sentences() -> Any:
    # bug: the gate's batch is the whole training set, not a handful of examples
    rng = random.Random(2)
    texts = [" ".join(rng.choices(text.WORDS, k=16)) for _ in range(64)]
    return DataCollatorForLanguageModeling(text.tokenizer(), mlm=False)(
        text.lm_rows(texts)
    )


# --- the batch's values, whatever the library's wording -------------------------------


def float_labels() -> dict[str, Any]:
    batch = text.classification_batch()
    batch["labels"] = batch["labels"].float()  # bug: class indices as floats
    return batch


def ids_and_embeddings() -> dict[str, Any]:
    batch = dict(text.classification_batch())
    ids = batch["input_ids"]
    # bug: precomputed embeddings kept beside the ids they came from
    batch["inputs_embeds"] = torch.zeros(*ids.shape, models.HIDDEN)
    return batch


def positions_past_the_table() -> dict[str, Any]:
    batch = dict(text.classification_batch())
    ids = batch["input_ids"]
    # bug: position ids counted from the document's start, not the window's
    offset = text.MAX_POSITIONS + 4
    batch["position_ids"] = torch.arange(ids.shape[1]).expand_as(ids) + offset
    return batch


def uint8_pixels() -> dict[str, Any]:
    batch = models.image_batch()
    pixels = batch["pixel_values"]
    scaled = (pixels - pixels.min()) / (pixels.max() - pixels.min()) * 255
    batch["pixel_values"] = scaled.to(torch.uint8)  # bug: ToTensor()'s /255 skipped
    return batch


def loss_rebuilt_from_item(model: nn.Module, batch: dict) -> torch.Tensor:
    loss = model(**batch).loss
    # bug: a number made a tensor again; it depends on no parameter
    return torch.tensor(loss.item(), requires_grad=True)


def attention_masked_out() -> dict[str, Any]:
    batch = dict(text.classification_batch())
    # bug: the mask built inverted (1 for padding), then cut to the padding: all 0
    batch["attention_mask"] = torch.zeros_like(batch["attention_mask"])
    return batch


def uncollated_image_loader() -> DataLoader:
    dataset = TensorDataset(models.images(), torch.arange(models.IMAGES) % text.LABELS)
    # bug: a collate_fn that returns the list of samples as it gets them
    return DataLoader(dataset, batch_size=models.IMAGES, collate_fn=lambda b: b)

"""Tiny models from transformers config objects (no downloaded weights), image data,
and Lightning modules as a Lightning user writes them.

Every model has hidden size 32 and 2 layers, and dropout off unless a case turns it
on, so that each memorizes its batch on 2 CPU cores in a few seconds.
"""

from __future__ import annotations

from typing import Any

import lightning as L
import torch
from torch.utils.data import DataLoader, TensorDataset
from transformers import (
    BartConfig,
    BartForConditionalGeneration,
    BertConfig,
    BertForSequenceClassification,
    BertModel,
    DataCollatorWithPadding,
    GPT2Config,
    GPT2LMHeadModel,
    HubertConfig,
    HubertForSequenceClassification,
    ResNetConfig,
    ResNetForImageClassification,
    T5Config,
    T5ForConditionalGeneration,
    ViTConfig,
    ViTForImageClassification,
)

from . import text

HIDDEN, LAYERS, HEADS = 32, 2, 2
IMAGE, CHANNELS, IMAGES = 16, 3, 12


def bert_config(**overrides: Any) -> BertConfig:
    settings = dict(
        vocab_size=text.VOCAB_SIZE,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        max_position_embeddings=text.MAX_POSITIONS,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=text.LABELS,
        # from scratch at hidden 32, the default 0.02 leaves every [CLS] alike
        initializer_range=0.1,
    )
    return BertConfig(**{**settings, **overrides})


def bert_classifier(**overrides: Any) -> BertForSequenceClassification:
    return BertForSequenceClassification(bert_config(**overrides))


def bert_first_layer_frozen() -> BertForSequenceClassification:
    model = bert_classifier()
    model.bert.encoder.layer[0].requires_grad_(False)  # bug: a freeze left in
    return model


def bert_checkpointed() -> BertForSequenceClassification:
    """Recomputes each layer's activations in backward to save memory."""
    model = bert_classifier()
    model.gradient_checkpointing_enable()
    return model


class MeanPooledBert(torch.nn.Module):
    """A sentence-embedding classifier: BERT's token states averaged over the mask.
    BertModel builds a pooler by default, which this forward skips by design."""

    def __init__(self) -> None:
        super().__init__()
        self.encoder = BertModel(bert_config())
        self.head = torch.nn.Linear(HIDDEN, text.LABELS)

    def forward(self, input_ids, attention_mask, labels, token_type_ids=None):
        states = self.encoder(
            input_ids=input_ids,
            attention_mask=attention_mask,
            token_type_ids=token_type_ids,
        ).last_hidden_state  # (B, T, H)
        mask = attention_mask.unsqueeze(-1).to(states.dtype)
        pooled = (states * mask).sum(1) / mask.sum(1)  # (B, H)
        return torch.nn.functional.cross_entropy(self.head(pooled), labels)


def gpt2_lm(**overrides: Any) -> GPT2LMHeadModel:
    settings = dict(
        vocab_size=text.VOCAB_SIZE,
        n_positions=text.MAX_POSITIONS,
        n_embd=HIDDEN,
        n_layer=LAYERS,
        n_head=HEADS,
        resid_pdrop=0.0,
        embd_pdrop=0.0,
        attn_pdrop=0.0,
        pad_token_id=0,
        bos_token_id=text.VOCAB["[CLS]"],
        eos_token_id=text.VOCAB["[SEP]"],
    )
    return GPT2LMHeadModel(GPT2Config(**{**settings, **overrides}))


def t5_seq2seq(**overrides: Any) -> T5ForConditionalGeneration:
    settings = dict(
        vocab_size=text.VOCAB_SIZE,
        d_model=HIDDEN,
        d_kv=HIDDEN // HEADS,
        d_ff=2 * HIDDEN,
        num_layers=1,  # one encoder and one decoder layer: two layers in all
        num_heads=HEADS,
        dropout_rate=0.0,
        pad_token_id=0,
        decoder_start_token_id=0,
        eos_token_id=text.VOCAB["[SEP]"],
    )
    return T5ForConditionalGeneration(T5Config(**{**settings, **overrides}))


def bart_seq2seq(**overrides: Any) -> BartForConditionalGeneration:
    settings = dict(
        vocab_size=text.VOCAB_SIZE,
        d_model=HIDDEN,
        encoder_layers=1,  # one encoder and one decoder layer: two layers in all
        decoder_layers=1,
        encoder_attention_heads=HEADS,
        decoder_attention_heads=HEADS,
        encoder_ffn_dim=2 * HIDDEN,
        decoder_ffn_dim=2 * HIDDEN,
        max_position_embeddings=text.MAX_POSITIONS,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        pad_token_id=0,
        bos_token_id=text.VOCAB["[CLS]"],
        eos_token_id=text.VOCAB["[SEP]"],
        decoder_start_token_id=text.VOCAB["[SEP]"],
    )
    return BartForConditionalGeneration(BartConfig(**{**settings, **overrides}))


def vit_classifier(**overrides: Any) -> ViTForImageClassification:
    settings = dict(
        image_size=IMAGE,
        patch_size=4,
        num_channels=CHANNELS,
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        hidden_dropout_prob=0.0,
        attention_probs_dropout_prob=0.0,
        num_labels=text.LABELS,
    )
    return ViTForImageClassification(ViTConfig(**{**settings, **overrides}))


def resnet_classifier(**overrides: Any) -> ResNetForImageClassification:
    settings = dict(
        num_channels=CHANNELS,
        embedding_size=16,
        hidden_sizes=[16, 32],
        depths=[1, 1],
        layer_type="basic",
        num_labels=text.LABELS,
    )
    return ResNetForImageClassification(ResNetConfig(**{**settings, **overrides}))


def images(size: int = IMAGE, channels: int = CHANNELS) -> torch.Tensor:
    g = torch.Generator().manual_seed(0)
    return torch.randn(IMAGES, channels, size, size, generator=g)


def image_batch(size: int = IMAGE, channels: int = CHANNELS) -> dict[str, Any]:
    labels = torch.arange(IMAGES) % text.LABELS
    return {"pixel_values": images(size, channels), "labels": labels}


# --- audio -------------------------------------------------------------------------

WAVES, WAVE_SAMPLES = 8, 400


def hubert_classifier(**overrides: Any) -> HubertForSequenceClassification:
    """A speech classifier whose feature encoder marks its input view requires_grad
    (as the wav2vec2 family does): an input, not a parameter."""
    settings = dict(
        hidden_size=HIDDEN,
        num_hidden_layers=LAYERS,
        num_attention_heads=HEADS,
        intermediate_size=2 * HIDDEN,
        conv_dim=(16, 16),
        conv_stride=(5, 4),
        conv_kernel=(10, 4),
        num_conv_pos_embeddings=8,
        num_conv_pos_embedding_groups=2,
        hidden_dropout=0.0,
        activation_dropout=0.0,
        attention_dropout=0.0,
        feat_proj_dropout=0.0,
        final_dropout=0.0,
        layerdrop=0.0,
        mask_time_prob=0.0,
        num_labels=text.LABELS,
        classifier_proj_size=16,
    )
    return HubertForSequenceClassification(HubertConfig(**{**settings, **overrides}))


def audio_batch() -> dict[str, Any]:
    g = torch.Generator().manual_seed(0)
    waves = torch.randn(WAVES, WAVE_SAMPLES, generator=g)
    return {"input_values": waves, "labels": torch.arange(WAVES) % text.LABELS}


# --- Lightning ----------------------------------------------------------------------


class TextClassifier(L.LightningModule):
    """A LightningModule over a transformers classifier; ``training_step`` gives the
    loss and ``configure_optimizers`` the recipe."""

    def __init__(self, model: torch.nn.Module | None = None, lr: float = 5e-3):
        super().__init__()
        self.model = model if model is not None else bert_classifier()
        self.lr = lr

    def forward(self, **batch: Any) -> Any:
        return self.model(**batch)

    def training_step(self, batch: Any, batch_idx: int) -> torch.Tensor:
        loss = self(**batch).loss
        self.log("train_loss", loss)
        return loss

    def configure_optimizers(self) -> Any:
        return torch.optim.AdamW(self.parameters(), lr=self.lr, weight_decay=0.0)


class ImageClassifier(L.LightningModule):
    """A LightningModule over a ViT; batches are ``(images, labels)`` tuples."""

    def __init__(self, lr: float = 5e-3):
        super().__init__()
        self.model = vit_classifier()
        self.lr = lr

    def training_step(self, batch: Any, batch_idx: int) -> dict[str, torch.Tensor]:
        images, labels = batch
        loss = self.model(pixel_values=images, labels=labels).loss
        return {"loss": loss}

    def configure_optimizers(self) -> Any:
        optimizer = torch.optim.Adam(self.parameters(), lr=self.lr)
        return {"optimizer": optimizer}


class TextDataModule(L.LightningDataModule):
    def __init__(self, rows: list[dict] | None = None, collate: Any = None):
        super().__init__()
        self.rows, self.collate = rows, collate

    def setup(self, stage: str) -> None:
        if self.rows is None:
            self.rows = text.tokenized_dataset()
        if self.collate is None:
            self.collate = DataCollatorWithPadding(text.tokenizer())

    def train_dataloader(self) -> DataLoader:
        return DataLoader(self.rows, batch_size=len(self.rows), collate_fn=self.collate)


def image_loader() -> DataLoader:
    dataset = TensorDataset(images(), torch.arange(IMAGES) % text.LABELS)
    return DataLoader(dataset, batch_size=IMAGES, shuffle=False)

"""A parameter the model holds under several names (a language model's tied input
and output embedding) is named by every one of them: a user who froze
``transformer.wte.weight`` and one who froze ``lm_head.weight`` froze the same
tensor, and each must find the name they wrote."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from mlsmoke.overfit.gate import run_gate
from mlsmoke.overfit.process.settings import GateSettings
from mlsmoke.overfit.training import instruments

VOCAB, WIDTH = 32, 16


class TiedLM(nn.Module):
    """nanoGPT's weight tying: the output head is the token embedding."""

    def __init__(self, freeze: str | None = None) -> None:
        super().__init__()
        self.transformer = nn.ModuleDict(
            {"wte": nn.Embedding(VOCAB, WIDTH), "ln_f": nn.LayerNorm(WIDTH)}
        )
        self.lm_head = nn.Linear(WIDTH, VOCAB, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        if freeze == "everything":
            self.requires_grad_(False)
        elif freeze is not None:
            self.get_parameter(freeze).requires_grad_(False)

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        return self.lm_head(self.transformer.ln_f(self.transformer.wte(idx)))


def tokens() -> torch.Tensor:
    return torch.randint(0, VOCAB, (4, 8), generator=torch.Generator().manual_seed(0))


def lm_loss(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    logits = model(batch[:, :-1])
    return F.cross_entropy(logits.reshape(-1, VOCAB), batch[:, 1:].reshape(-1))


def test_parameter_aliases_lists_every_name_of_a_tied_weight():
    aliases = instruments.parameter_aliases(TiedLM())
    assert aliases == {"transformer.wte.weight": ["lm_head.weight"]}
    assert instruments.parameter_aliases(nn.Linear(2, 2)) == {}


def gate(freeze: str) -> object:
    settings = GateSettings(name="default", model="m:m", batch="m:b", max_steps=60)
    factories = {"model": lambda: TiedLM(freeze), "batch": tokens, "loss": lm_loss}
    return run_gate(settings, factories=factories)[0]


def test_a_frozen_tied_weight_is_named_by_both_of_its_names():
    for frozen in ("lm_head.weight", "transformer.wte.weight"):
        result = gate(frozen)  # only the layer norm trains
        assert result.diagnosis.code == "no-gradient", result.report()
        assert (
            "frozen (requires_grad=False): transformer.wte.weight"
            " (also lm_head.weight)" in result.diagnosis.evidence
        ), result.report()


def test_a_model_frozen_whole_names_the_tied_weight_by_both_names():
    result = gate("everything")
    assert result.diagnosis.code == "no-gradient", result.report()
    text = "\n".join(result.diagnosis.evidence)
    assert "transformer.wte.weight (also lm_head.weight)" in text

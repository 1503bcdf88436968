"""Models of families that look like bugs to a naive rule, from the libraries users
train them with: diffusers (noise prediction), peft (LoRA on a frozen base),
normflows (a flow's NLL), torch-geometric (message passing over one graph) and
vector-quantize-pytorch (a VQ codebook with a straight-through gradient); and, where
no library fits the pinned torch, the few lines users write: a Gaussian process's
negative marginal log likelihood, a contrastive loss with in-batch negatives, a
straight-through binarizer.

Every model is tiny and every batch fixed, so that each case takes a few seconds on
one CPU thread.
"""

from __future__ import annotations

import math
from typing import Any

import lightning as L
import normflows as nf
import torch
from diffusers import DDPMScheduler, UNet2DModel
from peft import LoraConfig, get_peft_model
from torch import nn
from torch.nn import functional as F
from torch_geometric.data import Data
from torch_geometric.nn import GCNConv
from vector_quantize_pytorch import VectorQuantize


def generator(seed: int = 0) -> torch.Generator:
    return torch.Generator().manual_seed(seed)


# --- stochastic objectives: a diffusion model's noise prediction ----------------------

IMAGE = 8


def tiny_unet() -> nn.Module:
    return UNet2DModel(
        sample_size=IMAGE,
        in_channels=1,
        out_channels=1,
        layers_per_block=1,
        block_out_channels=(16, 32),
        down_block_types=("DownBlock2D", "DownBlock2D"),
        up_block_types=("UpBlock2D", "UpBlock2D"),
        norm_num_groups=8,
    )


def frozen_unet() -> nn.Module:
    """A UNet left frozen by the code that loaded it for inference."""
    return tiny_unet().requires_grad_(False)


def images() -> torch.Tensor:
    return torch.randn(8, 1, IMAGE, IMAGE, generator=generator())


def _scheduler() -> Any:
    return DDPMScheduler(num_train_timesteps=100)


def noise_prediction_loss(model: nn.Module, clean: torch.Tensor) -> torch.Tensor:
    """DDPM's objective: fresh noise and timesteps at every call, as diffusers'
    training examples draw them."""
    scheduler = _scheduler()
    noise = torch.randn_like(clean)
    steps = torch.randint(0, scheduler.config.num_train_timesteps, (len(clean),))
    noisy = scheduler.add_noise(clean, noise, steps)
    return F.mse_loss(model(noisy, steps).sample, noise)


def noise_prediction_ascent(model: nn.Module, clean: torch.Tensor) -> torch.Tensor:
    """The same objective with its sign flipped (a reward turned into a loss twice)."""
    return -noise_prediction_loss(model, clean)


# --- stochastic objectives: a VAE whose loss samples ----------------------------------


class ConvVAE(nn.Module):
    """Encoder and decoder; the loss draws the latent (the reparameterization)."""

    def __init__(self, latent: int = 8) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Flatten(),
            nn.Linear(IMAGE * IMAGE, 64),
            nn.ReLU(),
            nn.Linear(64, 2 * latent),
        )
        self.decoder = nn.Sequential(
            nn.Linear(latent, 64), nn.ReLU(), nn.Linear(64, IMAGE * IMAGE)
        )


def vae_sampled_loss(model: ConvVAE, clean: torch.Tensor) -> torch.Tensor:
    mean, log_var = model.encoder(clean).chunk(2, dim=-1)
    latent = mean + torch.randn_like(mean) * (0.5 * log_var).exp()
    recon = model.decoder(latent).view_as(clean)
    kl = -0.5 * (1 + log_var - mean.pow(2) - log_var.exp()).sum(-1).mean()
    return F.mse_loss(recon, clean, reduction="sum") / len(clean) + 0.01 * kl


# --- losses that rightly go negative: a flow's NLL ------------------------------------


def correlated_points(count: int = 32) -> torch.Tensor:
    """Points of a narrow, correlated 2-D Gaussian: their NLL under a fitted density
    is below zero (about -2.1), as continuous data's often is."""
    base = torch.randn(count, 2, generator=generator())
    mixing = torch.tensor([[1.0, 0.6], [0.0, 0.8]])
    return 0.1 * base @ mixing + torch.tensor([0.5, -0.3])


def real_nvp() -> nn.Module:
    """An affine layer and one affine coupling: a flow that fits the data's scale
    and correlation."""
    flows = [
        nf.flows.AffineConstFlow((2,)),
        nf.flows.AffineCouplingBlock(nf.nets.MLP([1, 16, 2], init_zeros=True)),
        nf.flows.Permute(2, mode="swap"),
    ]
    return nf.NormalizingFlow(nf.distributions.DiagGaussian(2, trainable=False), flows)


def flow_nll(model: nn.Module, points: torch.Tensor) -> torch.Tensor:
    return model.forward_kld(points)


def flow_nll_flipped_log_det(model: nn.Module, points: torch.Tensor) -> torch.Tensor:
    """Change of variables with the log-determinant's sign flipped."""
    log_q = torch.zeros(len(points))
    z = points
    for flow in reversed(model.flows):
        z, log_det = flow.inverse(z)
        log_q = log_q - log_det
    return -(log_q + model.q0.log_prob(z)).mean()


# --- losses that rightly go negative: a GP's negative marginal log likelihood ---------


class ExactGP(nn.Module):
    """An RBF-kernel Gaussian process; its hyperparameters are what trains."""

    def __init__(self) -> None:
        super().__init__()
        self.log_lengthscale = nn.Parameter(torch.tensor(0.0))
        self.log_scale = nn.Parameter(torch.tensor(0.0))
        self.log_noise = nn.Parameter(torch.tensor(0.0))

    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        """The marginal log likelihood of ``y`` per point."""
        distance = (x.unsqueeze(1) - x.unsqueeze(0)).pow(2).sum(-1)
        kernel = self.log_scale.exp() * torch.exp(
            -0.5 * distance / self.log_lengthscale.exp().pow(2)
        )
        covariance = kernel + (self.log_noise.exp() + 1e-4) * torch.eye(len(x))
        normal = torch.distributions.MultivariateNormal(
            torch.zeros(len(x)), covariance_matrix=covariance
        )
        return normal.log_prob(y) / len(x)


def smooth_curve() -> tuple[torch.Tensor, torch.Tensor]:
    x = torch.linspace(-3, 3, 40).unsqueeze(-1)
    return x, torch.sin(2 * x[:, 0]) + 0.01 * torch.randn(40, generator=generator())


def gp_negative_mll(model: ExactGP, batch: tuple) -> torch.Tensor:
    return -model(*batch)


def gp_mll_maximized_as_loss(model: ExactGP, batch: tuple) -> torch.Tensor:
    """The marginal log likelihood returned as the loss: minimized, it is made as
    unlikely as the kernel allows."""
    return model(*batch)


# --- samples that mix by design: message passing over one graph -----------------------

NODES, NODE_FEATURES, NODE_CLASSES = 40, 16, 3


class GraphConvNet(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.first = GCNConv(NODE_FEATURES, 64)
        self.second = GCNConv(64, NODE_CLASSES)

    def forward(self, x: torch.Tensor, edge_index: torch.Tensor) -> torch.Tensor:
        return self.second(F.relu(self.first(x, edge_index)), edge_index)


def ring_graph() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """One graph (a ring with chords): its node features, edges and node labels, as
    a torch_geometric Data holds them."""
    g = generator()
    nodes = torch.arange(NODES)
    ring = torch.stack([nodes, (nodes + 1) % NODES])
    chords = torch.stack([nodes, (nodes * 7 + 3) % NODES])
    edges = torch.cat([ring, chords, ring.flip(0), chords.flip(0)], dim=1)
    graph = Data(
        x=torch.randn(NODES, NODE_FEATURES, generator=g),
        edge_index=edges,
        y=torch.randint(0, NODE_CLASSES, (NODES,), generator=g),
    )
    graph.validate(raise_on_error=True)
    return graph.x, graph.edge_index, graph.y


def node_classification(model: GraphConvNet, graph: tuple) -> torch.Tensor:
    x, edges, labels = graph
    return F.cross_entropy(model(x, edges), labels)


def node_classification_labels_off_by_one(
    model: GraphConvNet, graph: tuple
) -> torch.Tensor:
    """Labels numbered from 1 (a dataset's classes 1..C) against C outputs."""
    x, edges, labels = graph
    return F.cross_entropy(model(x, edges), labels + 1)


# --- samples that mix by design: contrastive in-batch negatives -----------------------


class TwoViewEncoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32))

    def forward(self, view: torch.Tensor) -> torch.Tensor:
        return F.normalize(self.net(view), dim=-1)


def two_views() -> tuple[torch.Tensor, torch.Tensor]:
    g = generator()
    base = torch.randn(16, 16, generator=g)
    return base + 0.3 * torch.randn(16, 16, generator=g), base + 0.3 * torch.randn(
        16, 16, generator=g
    )


def info_nce(model: TwoViewEncoder, views: tuple) -> torch.Tensor:
    """SimCLR's loss: each sample's other view is its positive, the rest of the batch
    its negatives."""
    first, second = model(views[0]), model(views[1])
    similarity = first @ second.T / 0.1
    return F.cross_entropy(similarity, torch.arange(len(first)))


def info_nce_both_views_detached(model: TwoViewEncoder, views: tuple) -> torch.Tensor:
    """A momentum-encoder copy gone wrong: both views come from a no_grad pass."""
    with torch.no_grad():
        first, second = model(views[0]), model(views[1])
    similarity = first @ second.T / 0.1
    return F.cross_entropy(similarity, torch.arange(len(first)))


class DualEncoder(nn.Module):
    """A CLIP-style model: two encoders, and forward returns the (B, B) similarities
    of every image with every caption."""

    def __init__(self) -> None:
        super().__init__()
        self.images = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 32))
        self.captions = nn.Embedding(50, 32)
        self.log_temperature = nn.Parameter(torch.tensor(math.log(10.0)))

    def forward(self, images: torch.Tensor, captions: torch.Tensor) -> torch.Tensor:
        image = F.normalize(self.images(images), dim=-1)
        caption = F.normalize(self.captions(captions).mean(1), dim=-1)
        return self.log_temperature.exp() * image @ caption.T  # (B, B)


def image_caption_pairs() -> tuple[torch.Tensor, torch.Tensor]:
    g = generator()
    return torch.randn(12, 16, generator=g), torch.randint(0, 50, (12, 5), generator=g)


def symmetric_contrastive(model: DualEncoder, pairs: tuple) -> torch.Tensor:
    logits = model(*pairs)
    labels = torch.arange(len(logits))
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2


# --- frozen bases: LoRA adapters (peft) -----------------------------------------------

CLASSES, FEATURES = 4, 16


class Backbone(nn.Module):
    """A 'pretrained' MLP classifier whose linear layers LoRA adapts."""

    def __init__(self) -> None:
        super().__init__()
        torch.manual_seed(1)
        self.encoder = nn.Linear(FEATURES, 64)
        self.hidden = nn.Linear(64, 64)
        self.classifier = nn.Linear(64, CLASSES)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.classifier(F.relu(self.hidden(F.relu(self.encoder(x)))))


def lora_config(**overrides: Any) -> Any:
    settings: dict[str, Any] = dict(
        r=8, lora_alpha=16, target_modules=["encoder", "hidden", "classifier"]
    )
    return LoraConfig(**{**settings, **overrides})


def lora_model() -> nn.Module:
    return get_peft_model(Backbone(), lora_config())


def lora_adapters_left_frozen() -> nn.Module:
    """Everything frozen after wrapping, to 'freeze the base': adapters included."""
    model = lora_model()
    for parameter in model.parameters():
        parameter.requires_grad = False
    return model


def lora_targets_matching_nothing() -> nn.Module:
    """Target module names copied from a transformer's config."""
    return get_peft_model(Backbone(), lora_config(target_modules=["q_proj", "v_proj"]))


class LoraFineTuner(L.LightningModule):
    """A LightningModule that fine-tunes a backbone with LoRA adapters."""

    def __init__(self, optimizer_first: bool = False) -> None:
        super().__init__()
        base = Backbone()
        if optimizer_first:  # built over the base, before the adapters existed
            self.optimizer = torch.optim.AdamW(base.parameters(), lr=5e-3)
        self.model = get_peft_model(base, lora_config())
        if not optimizer_first:
            self.optimizer = torch.optim.AdamW(self.model.parameters(), lr=5e-3)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x)

    def training_step(self, batch: tuple, batch_idx: int) -> torch.Tensor:
        return classify(self, batch)

    def configure_optimizers(self) -> torch.optim.Optimizer:
        return self.optimizer


def lora_optimizer_before_adapters() -> LoraFineTuner:
    return LoraFineTuner(optimizer_first=True)


def features() -> tuple[torch.Tensor, torch.Tensor]:
    g = generator()
    return torch.randn(16, FEATURES, generator=g), torch.arange(16) % CLASSES


def classify(model: nn.Module, batch: tuple) -> torch.Tensor:
    x, y = batch
    return F.cross_entropy(model(x), y)


# --- straight-through estimators and codebooks ----------------------------------------


class VQAutoencoder(nn.Module):
    """An autoencoder with a vector-quantized bottleneck: the codebook follows the
    encoder by EMA (no gradient), the encoder trains through the straight-through
    estimator."""

    def __init__(self, straight_through: bool = True) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Linear(FEATURES, 32), nn.ReLU(), nn.Linear(32, 8)
        )
        self.quantizer = VectorQuantize(dim=8, codebook_size=32, decay=0.8)
        self.decoder = nn.Sequential(
            nn.Linear(8, 32), nn.ReLU(), nn.Linear(32, FEATURES)
        )
        self.straight_through = straight_through

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        quantized, _, commitment = self.quantizer(self.encoder(x).unsqueeze(1))
        reconstruction = F.mse_loss(self.decoder(quantized.squeeze(1)), x)
        if not self.straight_through:
            return F.mse_loss(self.decoder(quantized.squeeze(1).detach()), x)
        return reconstruction + commitment.sum()


def vq_without_straight_through() -> VQAutoencoder:
    """The decoder given the codes detached, and the commitment term dropped: the
    encoder is cut from the loss."""
    return VQAutoencoder(straight_through=False)


def reconstruction_batch() -> torch.Tensor:
    return torch.randn(16, FEATURES, generator=generator())


def own_loss(model: nn.Module, batch: torch.Tensor) -> torch.Tensor:
    return model(batch)


class BinarizedMLP(nn.Module):
    """Weights binarized to +-1 in forward; the straight-through estimator passes the
    gradient to the real-valued weights."""

    def __init__(self, straight_through: bool = True) -> None:
        super().__init__()
        self.first = nn.Linear(FEATURES, 128)
        self.head = nn.Linear(128, CLASSES)
        self.straight_through = straight_through

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        weight = self.first.weight
        binary = torch.sign(weight)
        if self.straight_through:
            binary = weight + (binary - weight).detach()
        hidden = F.relu(F.linear(x, binary) / math.sqrt(FEATURES) + self.first.bias)
        return self.head(hidden)

"""The families catalog: models that are correct by design in a way a naive rule takes
for a bug, and real bugs in the same families that must fail with the right code.

The cases share the Case of the hand-written catalog, so one runner, one test and one
benchmark read all three catalogs. Every case runs with the gate's defaults unless
it says otherwise, and why.
"""

from __future__ import annotations

from ..cases import Case
from . import models

DIFFUSION = "diffusion (diffusers UNet2DModel)"
VAE = "VAE (the loss samples)"
FLOW = "normalizing flow (normflows RealNVP)"
GP = "Gaussian process (marginal likelihood)"
GRAPH = "graph network (torch-geometric GCN)"
CONTRASTIVE = "contrastive (in-batch negatives)"
LORA = "LoRA adapters (peft)"
VQ = "VQ autoencoder (vector-quantize-pytorch)"
STE = "straight-through binarized MLP"

CORRECT = [
    Case(
        "diffusion-noise-prediction",
        DIFFUSION,
        models.tiny_unet,
        models.images,
        loss=models.noise_prediction_loss,
        says="replayed the same draws",
    ),
    Case("vae-sampled-latent", VAE, models.ConvVAE, models.images,
         loss=models.vae_sampled_loss),  # fmt: skip
    Case("flow-nll", FLOW, models.real_nvp, models.correlated_points,
         loss=models.flow_nll),  # fmt: skip
    # Gaussian processes train their few hyperparameters at lr 0.1 (gpytorch's
    # examples do); at the gate's default 0.005 the gate says lr-too-low, and why.
    Case("gp-negative-mll", GP, models.ExactGP, models.smooth_curve,
         loss=models.gp_negative_mll, options={"lr": 0.1}),  # fmt: skip
    Case("gcn-one-graph", GRAPH, models.GraphConvNet, models.ring_graph,
         loss=models.node_classification),  # fmt: skip
    Case("contrastive-info-nce", CONTRASTIVE, models.TwoViewEncoder, models.two_views,
         loss=models.info_nce),  # fmt: skip
    Case("clip-in-batch-similarities", CONTRASTIVE, models.DualEncoder,
         models.image_caption_pairs, loss=models.symmetric_contrastive),  # fmt: skip
    Case("lora-adapters", LORA, models.lora_model, models.features,
         loss=models.classify, options={"frozen": ["*.base_layer.*"]}),  # fmt: skip
    # Undeclared, the frozen base is named, with the one glob that declares it.
    Case("lora-lightning", LORA, models.LoraFineTuner, models.features,
         warnings=frozenset({"frozen-parameters"})),  # fmt: skip
    Case("vq-codebook", VQ, models.VQAutoencoder, models.reconstruction_batch,
         loss=models.own_loss),  # fmt: skip
    Case("binarized-straight-through", STE, models.BinarizedMLP, models.features,
         loss=models.classify),  # fmt: skip
]

BUGS = [
    Case(
        "diffusion-frozen-unet",
        DIFFUSION,
        models.frozen_unet,
        models.images,
        "no-gradient",
        loss=models.noise_prediction_loss,
        bug="the UNet left frozen (requires_grad_(False)) by inference code",
        says="frozen",
    ),
    Case(
        "diffusion-loss-ascent",
        DIFFUSION,
        models.tiny_unet,
        models.images,
        "wrong-objective",
        loss=models.noise_prediction_ascent,
        bug="the noise-prediction loss negated",
    ),
    Case(
        "flow-flipped-log-det",
        FLOW,
        models.real_nvp,
        models.correlated_points,
        "wrong-objective",
        loss=models.flow_nll_flipped_log_det,
        bug="the change of variables adds the log-determinant with the wrong sign",
    ),
    Case(
        "gp-mll-maximized",
        GP,
        models.ExactGP,
        models.smooth_curve,
        "wrong-objective",
        loss=models.gp_mll_maximized_as_loss,
        options={"lr": 0.1},
        bug="the marginal log likelihood minimized instead of its negative",
    ),
    Case(
        "gcn-labels-from-one",
        GRAPH,
        models.GraphConvNet,
        models.ring_graph,
        "label-range-error",
        loss=models.node_classification_labels_off_by_one,
        bug="node labels numbered 1..C against C outputs",
    ),
    Case(
        "contrastive-both-views-detached",
        CONTRASTIVE,
        models.TwoViewEncoder,
        models.two_views,
        "no-gradient",
        loss=models.info_nce_both_views_detached,
        bug="both views encoded under torch.no_grad()",
    ),
    Case(
        "lora-adapters-frozen",
        LORA,
        models.lora_adapters_left_frozen,
        models.features,
        "no-gradient",
        loss=models.classify,
        bug="every parameter frozen after wrapping, the adapters too",
        says="lora_A",
    ),
    Case(
        "lora-optimizer-before-adapters",
        LORA,
        models.lora_optimizer_before_adapters,
        models.features,
        "optimizer-mismatch",
        bug="the optimizer built over the base model before the adapters were added",
        says="lora_A",
    ),
    Case(
        "lora-targets-match-nothing",
        LORA,
        models.lora_targets_matching_nothing,
        models.features,
        "train-error",
        loss=models.classify,
        bug="LoRA target modules named after another architecture's layers",
        says="not found in the base model",
    ),
    Case(
        "vq-quantized-detached",
        VQ,
        models.vq_without_straight_through,
        models.reconstruction_batch,
        "no-gradient",
        loss=models.own_loss,
        bug="the quantized codes detached: no straight-through path to the encoder",
    ),
]

CASES = CORRECT + BUGS

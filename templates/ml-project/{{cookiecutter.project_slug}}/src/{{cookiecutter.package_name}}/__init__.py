"""The package: the model, its data and its training recipe (the loop is train.py)."""

from .data import example_batch, normalize, spirals, train_loader
from .model import Classifier, ClassifierConfig, build_model
from .recipe import TrainConfig, lr_factor, make_optimizer

__all__ = [
    "Classifier",
    "ClassifierConfig",
    "TrainConfig",
    "build_model",
    "example_batch",
    "lr_factor",
    "make_optimizer",
    "normalize",
    "spirals",
    "train_loader",
]

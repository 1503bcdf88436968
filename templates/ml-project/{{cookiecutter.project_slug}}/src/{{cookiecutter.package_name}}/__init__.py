"""The package: the model, its data, and nothing else (training lives in train.py)."""

from .data import example_batch, spirals
from .model import Classifier, ClassifierConfig, build_model

__all__ = ["Classifier", "ClassifierConfig", "build_model", "example_batch", "spirals"]

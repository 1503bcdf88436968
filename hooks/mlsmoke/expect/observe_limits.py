"""Limits shared by the observing side (torch) and the inferring side (pure)."""

IGNORE_INDEX = -100  # the loss's ignore_index: not a value, a "skip this position"
MAX_VALUE_SET = 32  # an integer field with at most this many values is a set of classes
MAX_CHANNELS = 64  # per channel (dim 1) figures for fields with at most this many

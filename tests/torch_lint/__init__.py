"""The torchfix hook's tests."""

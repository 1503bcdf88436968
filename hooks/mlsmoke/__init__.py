"""mlsmoke: pre-commit hooks that catch silent ML bugs at every commit."""

__version__ = "0.1.0"

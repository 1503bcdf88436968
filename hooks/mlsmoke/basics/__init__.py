"""``mlsmoke basics``: pre-commit-hooks' own checks, several in one interpreter."""

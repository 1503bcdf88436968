"""Adopting mlsmoke in an existing repository: ``mlsmoke init`` and ``mlsmoke debt``.

Today's violations become baselines in each tool's own configuration, so the first
``pre-commit run --all-files`` passes, new files meet every rule, and the baselines
shrink as files are fixed.
"""

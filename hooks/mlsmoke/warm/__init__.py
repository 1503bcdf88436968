"""The warm worker: one ``import torch`` shared by the hooks that run project code.

A server in the project's interpreter imports torch and the project's third-party
dependencies (never the project's own modules), then forks a fresh child for each job
that the gate or the doctest hook would otherwise start as a new ``python -c`` process.

- ``settings.py``: whether the worker is used (Linux, config key, environment variable);
- ``identity.py``: which worker a job may use, and where its socket is;
- ``protocol.py``: the messages between a hook and the worker, with file descriptors;
- ``client.py``: the hook's side: reach or start the worker, and a job's handle;
- ``launch.py``: a new worker's process, and its first word (ready, refused or taken);
- ``claim.py``: the lock a worker holds on its key from before its imports, so that
  a key never has two workers, whatever became of the hook that started one;
- ``server.py``: the worker's loop, in the project's interpreter;
- ``preload.py``: what it imports before forking, and whether forking is then safe;
- ``jobs.py``: a forked job's signals and its end (nothing it started outlives it);
- ``freshness.py``: what retires a worker (a changed file it imported, a new package);
- ``child.py``: a forked job made to look like a fresh ``python -c`` process;
- ``first_use.py``: what the callers' jobs import, imported while the worker is idle.

It imports nothing of the hooks that use it: they name what to preload (``first_use``)
and the modules their jobs run. ``mlsmoke worker`` (``worker_command.py``) and the
``warm-worker`` hook (``worker_start.py``) live beside the package, above it.
"""

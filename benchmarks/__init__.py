"""mlsmoke's benchmarks: ``python -m benchmarks [--quick]`` (``make bench``)."""

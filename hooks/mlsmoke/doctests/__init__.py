"""The ``doctest`` hook: run the ``>>>`` examples of the files a commit touches.

The hook side (:mod:`.main`) picks the files and the project's interpreter; the examples
run there, in :mod:`.runner`, which with the modules it uses needs only the standard
library.
"""

"""``data-expectations``: expectations about the project's batches, recorded once
(``mlsmoke expect --record``), committed in ``expectations.json``, checked at every
commit that touches the data code (``mlsmoke expect``) and in the project's tests
(``mlsmoke.expect.check``)."""

from __future__ import annotations

from typing import Any


def check(*args: Any, **kwargs: Any) -> Any:
    """See :func:`mlsmoke.expect.api.check` (imported on call: it needs torch)."""
    from mlsmoke.expect.api import check as check_batches

    return check_batches(*args, **kwargs)

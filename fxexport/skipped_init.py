"""nn.init's initialisers skipped on this thread while a rebuild is built, as the package's loader builds its skeleton.

A rebuild (rebuild.py) is compared with the module it stands for, never run, and on the meta device
initialising its tensors costs more than building it (a Conv2d: 0.27 ms, 0.09 ms without). The
package builds the same constructor calls the same way (loader.py's `skip_init`), so what is compared
is what the package builds. Other threads keep the real initialisers; the lock is the loader's, so a
package loading on another thread while this one exports does not restore them under it.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator
from typing import Any

from torch import nn


@contextlib.contextmanager
def initialisers_skipped() -> Iterator[None]:
    """Every public initialiser of nn.init returns its tensor untouched on this thread until the block ends."""
    lock = vars(nn.init).setdefault("_skip_init_lock", threading.RLock())
    builder = threading.get_ident()
    skipping_now = [True]  # off when the block ends: a module imported inside it may hold a wrapper for good

    def skipping(initialise: Callable[..., Any]) -> Callable[..., Any]:
        def skip(tensor: Any, *args: Any, **kwargs: Any) -> Any:
            if skipping_now[0] and threading.get_ident() == builder:
                return tensor
            return initialise(tensor, *args, **kwargs)

        return skip

    with lock:
        saved = {name: fn for name, fn in vars(nn.init).items() if name.endswith("_") and not name.startswith("_") and callable(fn)}
        for name, fn in saved.items():
            setattr(nn.init, name, skipping(fn))
        try:
            yield
        finally:
            skipping_now[0] = False
            for name, fn in saved.items():
                setattr(nn.init, name, fn)

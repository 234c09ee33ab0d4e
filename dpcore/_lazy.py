"""Deferred imports of scipy's submodules, so that ``import dpcore`` stays fast.

``scipy.special``, ``scipy.stats``, ``scipy.integrate`` and ``scipy.optimize``
cost most of a second to import together; a command-line call or a script that
needs one formula should not pay for all of them. :func:`lazy_module` returns
the module object at once and runs its code on the first attribute access
(:class:`importlib.util.LazyLoader`).
"""

from __future__ import annotations

import importlib.util
import sys
from types import ModuleType


def lazy_module(name: str) -> ModuleType:
    """The module ``name``, loaded on first attribute access (or at once if already imported).

    Raises
    ------
    ModuleNotFoundError
        If ``name`` cannot be found.
    """
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.find_spec(name)
    if spec is None or spec.loader is None:
        raise ModuleNotFoundError(f"No module named {name!r}", name=name)
    loader = importlib.util.LazyLoader(spec.loader)
    spec.loader = loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    loader.exec_module(module)
    return module

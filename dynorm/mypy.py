"""mypy plugin: ``@table.model(...)`` makes an attrs class for mypy, as it does at run time.

Enable it with ``plugins = ["dynorm.mypy"]``; the implementation lives in
``dynorm/tools/mypy_plugin.py``.
"""

from .tools.mypy_plugin import plugin

__all__ = ["plugin"]

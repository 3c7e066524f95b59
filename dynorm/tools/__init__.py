"""The tools: design view, NoSQL Workbench files, migrations, test servers, pytest and mypy plugins.

They are users of the library below them. The public modules (``dynorm.design``,
``dynorm.workbench``, ``dynorm.migrations``, ``dynorm.testing``, ``dynorm.mypy``) re-export from
here; the ``dynorm`` command (``dynorm/cli/``) sits on top.

Internal: import public names from ``dynorm`` and its public modules.
"""

"""The core layer: what every other layer builds on, and nothing that awaits.

Keys, expressions, ranges, limits, cursors, errors, request events, request values and their
builders, plan steps, version and timestamp stamps, and the codec (``codec/``). It imports no
other layer.

Internal: import public names from ``dynorm`` and its public modules.
"""

"""The io layer: the only place that sends.

The transport (the one importer of aiobotocore and botocore), the runner that executes plans,
``Database``, transactions, and the paging and batching loops.

Internal: import public names from ``dynorm`` and its public modules.
"""

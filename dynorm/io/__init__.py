"""The io layer: the only place that sends.

The senders (``senders/``: one attempt of one request, each way of sending an adapter; only two
of them import aiobotocore and botocore), the connection that picks them, the transport that
retries, the runner that executes plans, ``Database``, transactions, and the paging and
batching loops.

Internal: import public names from ``dynorm`` and its public modules.
"""

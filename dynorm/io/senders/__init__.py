"""The ways of sending one attempt of one request, each an adapter behind one interface.

``base`` is the interface (:class:`~dynorm.io.senders.base.Sender`) and the plain words an
adapter reports a failure in; ``attempt`` is the one place above the adapters that picks the
sender for a request and says what its failure means (which DynormError, whether the request
may have been sent). The adapters: ``lean`` (dynorm's own HTTP client, ``dynorm.io.http``),
``aio`` (aiobotocore's HTTP session and credentials chain), both posting the signed JSON of
``signed``; ``botocore_client`` (a botocore client does everything). Only ``aio`` and
``botocore_client`` import aiobotocore, botocore or aiohttp, inside their functions.
"""

"""The ways of sending one attempt of one request, each an adapter behind one interface.

``base`` is the interface (:class:`~dynorm.io.senders.base.Sender`) and the plain words an adapter
reports a failure in; ``attempt`` is the one place above the adapters that picks the sender for a
request and says what its failure means (which DynormError, whether the request may have been
sent); ``signed`` is the signed JSON the fast-path senders post; the adapters: ``lean`` (dynorm's
own HTTP client, ``dynorm.io.http``), ``botocore_client`` (a botocore client does everything);
``dynorm.io.transport`` holds the aio sender for now.
"""

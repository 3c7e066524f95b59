"""The wire layer: DynamoDB's JSON protocol without botocore, and nothing that awaits.

Request and error bodies (``protocol``), SigV4 signing, pages parsed into typed structures
(``structs``) and the retry rules (``retry``). It imports only the core.

Internal: import public names from ``dynorm`` and its public modules.
"""

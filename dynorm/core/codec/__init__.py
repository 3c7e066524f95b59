"""Python values <-> DynamoDB AttributeValues.

The configured cattrs converter (``converter``) and the encoders and decoders generated once per
model (``encoders``, ``decoders``).
"""

from typing import Any

__all__ = ["AttributeValue", "Item"]

#: One stored value as DynamoDB's JSON has it: ``{"S": "x"}``, ``{"N": "1"}``, ``{"M": {...}}``.
AttributeValue = dict[str, Any]
#: An item: stored attribute name -> AttributeValue.
Item = dict[str, AttributeValue]

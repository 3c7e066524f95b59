"""Python values <-> DynamoDB AttributeValues.

``model_codec`` builds each model's codec: decoders and encoders generated once per model
(``decoders``, ``encoders``, through the shared helper ``generate``) from the hooks of its field
types (``scalars``, ``enums``, ``containers``, ``generic``; ``rules`` says which hooks store
each type, and ``converter`` puts them on dynorm's cattrs converter), refusing values with
errors that name the field (``refusals``). ``typeforms`` asks what a field type is; ``paths``
follows document paths through them.
"""

from typing import Any

__all__ = ["AttributeValue", "Item"]

#: One stored value as DynamoDB's JSON has it: ``{"S": "x"}``, ``{"N": "1"}``, ``{"M": {...}}``.
AttributeValue = dict[str, Any]
#: An item: stored attribute name -> AttributeValue.
Item = dict[str, AttributeValue]

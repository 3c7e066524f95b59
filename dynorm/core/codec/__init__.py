"""Python values <-> DynamoDB AttributeValues.

The configured cattrs converter (``converter``) and the encoders and decoders generated once per
model (``encoders``, ``decoders``).
"""

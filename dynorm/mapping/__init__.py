"""The mapping layer: tables, models, relationships and the plans that read and write them.

Each strategy answers how its children are read, added and removed and what a parent's write
must also write; the planners turn calls into requests and replies into objects. Pure: it never
awaits and never imports the io layer, which runs what it plans.

Internal: import public names from ``dynorm`` and its public modules.
"""

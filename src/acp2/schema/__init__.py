"""ACP v2 wire models (msgspec Structs) and the method table.

Every definition of the v2 JSON schema is a class of the same name here, or is listed in
:data:`acp2.schema.coverage.NOT_MODELLED` with the reason.
"""

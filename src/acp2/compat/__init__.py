"""Compatibility with other ACP versions (never imported by ``import acp2``).

:mod:`acp2.compat.v1` holds the ACP v1 wire models and method table; the translation
between v1 and v2 lives there too, behind one boundary.
"""

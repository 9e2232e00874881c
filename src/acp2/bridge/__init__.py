"""Bridges between ACP v1 and v2 peers."""

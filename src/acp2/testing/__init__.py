"""Test doubles shipped with acp2: a deterministic agent for testing any ACP v2 client."""

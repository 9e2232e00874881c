"""Write src/acp2/check/schemas/acp-v2-preview.json, the schema of ``acp2 check --draft preview``.

    python scripts/gen_preview_schema.py SDK_DIR            # rewrite the file
    python scripts/gen_preview_schema.py SDK_DIR --check    # exit 1 if it is stale

SDK_DIR is an installed ``@agentclientprotocol/sdk@2.4.0`` (the interop cache has one:
~/.cache/acp2/interop/*/node_modules/@agentclientprotocol/sdk). No machine-readable
schema of the ACP v2 Preview (2026-11-20) is reachable from here, so the file is modelled:
the package's stable v2 schema (the one ``--draft nov`` ships) plus the definitions the
Preview made baseline v2 that the same package still carries in ``schema.unstable.json``
(:data:`PROMOTED`: subagents). See src/acp2/check/schemas/README.md.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = ROOT / "src" / "acp2" / "check" / "schemas" / "acp-v2-preview.json"
#: Union definition -> the tags whose branches come from the unstable schema. The
#: Preview made subagents a v2 baseline ("announcements/subagents-stabilized"): the
#: ``subagent_update`` session update and the ``subagent`` background work entry.
PROMOTED: dict[str, tuple[str, ...]] = {
    "SessionUpdate": ("subagent_update",),
    "BackgroundWork": ("subagent",),
}


def strip_descriptions(node: Any) -> Any:
    """``node`` without ``description`` annotations (string values), recursively; a
    property *named* ``description`` (an object) is kept. The same as the other copies."""
    if isinstance(node, dict):
        return {
            k: strip_descriptions(v)
            for k, v in node.items()
            if not (k == "description" and isinstance(v, str))
        }
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def _tag(branch: dict[str, Any]) -> str | None:
    for prop in branch.get("properties", {}).values():
        if isinstance(prop, dict) and "const" in prop:
            return str(prop["const"])
    return None


def _promote(stable: dict[str, Any], unstable: dict[str, Any], name: str, tag: str) -> None:
    """Insert the unstable union branch ``tag`` of ``name`` before the ``other`` fallback,
    and exclude the tag from that fallback (as the generated unions do)."""
    branches: list[dict[str, Any]] = stable[name]["anyOf"]
    new = next(b for b in unstable[name]["anyOf"] if _tag(b) == tag)
    fallback = branches[-1]
    assert "not" in fallback, f"{name}: the last branch is not the fallback"
    branches.insert(len(branches) - 1, copy.deepcopy(new))
    discriminator = next(iter(new["properties"]))
    fallback["not"]["anyOf"].append(
        {
            "type": "object",
            "properties": {discriminator: {"type": "string", "const": tag}},
            "required": [discriminator],
        }
    )


def _refs(node: Any) -> set[str]:
    if isinstance(node, dict):
        found = {node["$ref"].rsplit("/", 1)[1]} if isinstance(node.get("$ref"), str) else set()
        return found.union(*(_refs(v) for v in node.values()))
    if isinstance(node, list):
        return set().union(*(_refs(v) for v in node))
    return set()


def _copy_missing(stable: dict[str, Any], unstable: dict[str, Any]) -> None:
    """Copy every definition referenced but not defined, transitively, from unstable."""
    missing = _refs(stable) - stable.keys()
    while missing:
        name = missing.pop()
        stable[name] = copy.deepcopy(unstable[name])
        missing |= _refs(stable[name]) - stable.keys()


def build(sdk_dir: Path) -> str:
    """The text of the preview schema from the package at ``sdk_dir``."""
    schema_dir = sdk_dir / "schema" / "v2"
    stable = json.loads((schema_dir / "schema.json").read_text("utf-8"))
    unstable = json.loads((schema_dir / "schema.unstable.json").read_text("utf-8"))
    defs, extra = stable["$defs"], unstable["$defs"]
    for name, tags in PROMOTED.items():
        for tag in tags:
            _promote(defs, extra, name, tag)
    _copy_missing(defs, extra)
    stable["title"] = "Agent Client Protocol (v2 Preview, modelled)"
    return json.dumps(strip_descriptions(stable), indent=1, sort_keys=True, ensure_ascii=False)


def main(argv: list[str] | None = None) -> int:
    """Write (or with ``--check`` compare) the preview schema; 1 when stale."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sdk_dir", type=Path)
    parser.add_argument("--check", action="store_true")
    parser.add_argument("--output", type=Path, default=OUTPUT)
    args = parser.parse_args(argv)
    text = build(args.sdk_dir)
    if args.check:
        same = args.output.exists() and args.output.read_text("utf-8") == text
        print(f"{args.output}: {'up to date' if same else 'stale'}")
        return 0 if same else 1
    args.output.write_text(text, "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())

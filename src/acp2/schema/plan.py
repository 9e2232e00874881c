"""Plans: ``plan_update`` snapshots of one plan, keyed by ``planId`` (PN-01..PN-06)."""

from __future__ import annotations

from typing import Annotated, TypeAlias

import msgspec
from msgspec import UNSET, Raw

from acp2.schema._base import LENIENT, SKIP_INVALID, Model
from acp2.schema.common import MetaField, PlanId

__all__ = ["PlanEntry", "PlanItems", "PlanUpdate", "PlanUpdateContent"]


class PlanEntry(Model, gc=False, kw_only=True):
    """One plan entry: ``content`` text, ``priority`` and ``status`` (open enums)."""

    content: str
    #: ``high``, ``medium``, ``low`` or a custom / future value.
    priority: str
    #: ``pending``, ``in_progress``, ``completed``, ``cancelled`` or a custom / future value.
    status: str
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


class PlanItems(Model, tag_field="type", tag="items", gc=False, kw_only=True):
    """Plan content ``{type:"items", planId, entries}``: the complete entry list."""

    plan_id: PlanId
    entries: Annotated[list[PlanEntry], LENIENT, SKIP_INVALID]
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")


#: A plan; an unknown ``type`` (still carrying ``planId``) is kept as ``msgspec.Raw``.
PlanUpdateContent: TypeAlias = PlanItems | Raw


class PlanUpdate(Model, tag_field="sessionUpdate", tag="plan_update", gc=False, kw_only=True):
    """Session update ``plan_update``: replace the plan ``plan.planId`` entirely."""

    plan: PlanUpdateContent
    meta: MetaField = msgspec.field(default=UNSET, name="_meta")

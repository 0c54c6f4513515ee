"""The task contract's change stamp: each publish of the task state also sets McpChangedAt to the workflow's time, in
the same workflow task as the memo, so that a bridge following tasks by their changes (MCP_CHANGE_FEED_MS) hears of
it with one visibility query for all its tasks instead of a history long poll each."""

from datetime import timedelta

from temporalio import workflow
from temporalio.common import SearchAttributeKey

CHANGED_AT = SearchAttributeKey.for_datetime("McpChangedAt")

# Histories from before stamps replay without them, as the TypeScript helpers' patch of the same name.
CHANGE_STAMPS_PATCH = "mcp-change-stamps"


def stamp_change() -> None:
    """Sets McpChangedAt later than the stamp before it, even for two publishes in one workflow task."""
    if not workflow.patched(CHANGE_STAMPS_PATCH):
        return
    last = workflow.info().typed_search_attributes.get(CHANGED_AT)
    now = workflow.now()
    at = now if last is None or now > last else last + timedelta(milliseconds=1)
    workflow.upsert_search_attributes([CHANGED_AT.value_set(at)])

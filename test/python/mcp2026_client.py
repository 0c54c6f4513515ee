"""Drives the bridge with real MCP 2026-07-28 clients: FastMCP 4 with fastmcp-tasks, and the Python SDK 2.x.

Usage: mcp2026_client.py URL SCENARIO [ARG]. Prints one JSON object on stdout; exits 1 on an unexpected error.

Scenarios:
  task DECISION        call process_invoice as a task (FastMCP call_tool_task), answer its approval with DECISION
                       (approve or reject) through tasks/update, print the final result
  create               call process_invoice as a task and print its task id without answering anything
  finish TASK_ID       finish an existing task: answer its approval (approve) through tasks/get / tasks/update
  cancel               call process_invoice as a task, cancel it, wait until tasks/get says cancelled
  plain                call process_invoice with the Python SDK without the tasks extension; the approval comes
                       as an input_required result and is answered by the retried call
  no-extension TASK_ID tasks/get without the tasks extension (Python SDK): print the error
Invoices come as JSON on stdin. URL "stdio" makes `plain` spawn `npm run -s serve` and speak over its stdio.
"""

import asyncio
import json
import sys

import mcp_types
from fastmcp import Client
from fastmcp.client.elicitation import ElicitResult
from fastmcp_tasks.client import ToolTask, call_tool_task
from fastmcp_tasks.client_models import ClientCreateTaskResult
from mcp.client.client import Client as SdkClient
from mcp.shared.exceptions import MCPError

asked: list[str] = []


def answering(decision: str):
    async def handler(message, response_type, params, context):
        asked.append(message)
        return ElicitResult(action="accept", content={"decision": decision})

    return handler


def target(url: str):
    """A URL, or "stdio": spawn `npm run -s serve` (its environment says which Temporal to use)."""
    if url != "stdio":
        return url
    from mcp.client.stdio import StdioServerParameters
    import os

    return StdioServerParameters(command="npm", args=["run", "-s", "serve"], env=dict(os.environ))


def outcome(result) -> dict:
    return {
        "isError": bool(result.is_error),
        "structured": result.structured_content,
        "text": [c.text for c in result.content if getattr(c, "type", None) == "text"],
        "asked": asked,
    }


def recording_transport(url: str, sent: list[dict]):
    """FastMCP's own HTTP transport, noting the routing headers of each request it sends."""
    import httpx2
    from fastmcp.client.transports import StreamableHttpTransport
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def note(request) -> None:
        sent.append({"method": request.headers.get("mcp-method"), "mcpName": request.headers.get("mcp-name")})

    def factory(**kwargs) -> httpx2.AsyncClient:
        client = create_mcp_http_client(headers=kwargs.get("headers"), timeout=kwargs.get("timeout"), auth=kwargs.get("auth"))
        client.event_hooks["request"].append(note)
        return client

    return StreamableHttpTransport(url, httpx_client_factory=factory)


async def task(url: str, invoice: dict, decision: str) -> dict:
    sent: list[dict] = []
    async with Client(recording_transport(url, sent), elicitation_handler=answering(decision)) as client:
        handle = await call_tool_task(client, "process_invoice", invoice, raise_on_error=False)
        result = await handle.result()
        status = await handle.status()
        return {"taskId": handle.task_id, "status": status.status, "sent": sent, **outcome(result)}


async def create(url: str, invoice: dict) -> dict:
    async with Client(url) as client:
        handle = await call_tool_task(client, "process_invoice", invoice)
        status = await handle.status()
        return {"taskId": handle.task_id, "status": status.status}


async def finish(url: str, task_id: str) -> dict:
    async with Client(url, elicitation_handler=answering("approve")) as client:
        # A handle for a task another client created: its current state, read through tasks/get.
        handle = ToolTask(client, "process_invoice", ClientCreateTaskResult.model_validate({"resultType": "task", "taskId": task_id, "status": "working", "createdAt": "", "lastUpdatedAt": "", "ttlMs": None}), raise_on_error=False)
        result = await handle.result()
        status = await handle.status()
        return {"taskId": task_id, "status": status.status, **outcome(result)}


async def cancel(url: str, invoice: dict) -> dict:
    async with Client(url) as client:
        handle = await call_tool_task(client, "process_invoice", invoice)
        await handle.wait(state="input_required", timeout=30)
        await handle.cancel()
        for _ in range(100):
            status = await handle.status()
            if status.status == "cancelled":
                break
            await asyncio.sleep(0.2)
        return {"taskId": handle.task_id, "status": status.status}


async def plain(url: str, invoice: dict) -> dict:
    async def elicitation(context, params):
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"decision": "approve"})

    async with SdkClient(target(url), elicitation_callback=elicitation, mode="auto") as client:
        result = await client.call_tool("process_invoice", invoice)
        return {"protocolVersion": client.session.protocol_version, **outcome(result)}


async def no_extension(url: str, task_id: str) -> dict:
    from fastmcp_tasks.client_models import GetTaskRequest, GetTaskRequestParams

    async with SdkClient(url, mode="auto") as client:
        try:
            await client.session.send_request(GetTaskRequest(params=GetTaskRequestParams(task_id=task_id)), mcp_types.Result)
        except MCPError as error:
            return {"protocolVersion": client.session.protocol_version, "code": error.code, "message": error.message, "data": error.data}
        return {"protocolVersion": client.session.protocol_version, "code": None}


async def main() -> None:
    url, scenario, *rest = sys.argv[1:]
    invoice = json.loads(sys.stdin.read() or "{}") if scenario in ("task", "create", "cancel", "plain") else None
    if scenario == "task":
        out = await task(url, invoice, rest[0])
    elif scenario == "create":
        out = await create(url, invoice)
    elif scenario == "finish":
        out = await finish(url, rest[0])
    elif scenario == "cancel":
        out = await cancel(url, invoice)
    elif scenario == "plain":
        out = await plain(url, invoice)
    elif scenario == "no-extension":
        out = await no_extension(url, rest[0])
    else:
        raise SystemExit(f"unknown scenario {scenario}")
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    asyncio.run(main())

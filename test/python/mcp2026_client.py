"""Drives the bridge with real MCP 2026-07-28 clients: FastMCP 4 with fastmcp-tasks, and the Python SDK 2.x.

Usage: mcp2026_client.py URL SCENARIO [ARG] [--tool NAME] [--arguments JSON] [-- SERVE_ARG...]
Prints one JSON object on stdout; exits 1 on an unexpected error, 2 on a command line it cannot use.

Scenarios:
  task DECISION        call the tool as a task (FastMCP call_tool_task), answer each question it asks with
                       {"decision": DECISION} (approve or reject) through tasks/update, print the final result
  create               call the tool as a task and print its task id without answering anything
  finish TASK_ID       finish an existing task of the tool: answer each question with {"decision": "approve"}
                       through tasks/get / tasks/update
  cancel               call the tool as a task, cancel it once it asks its question, wait until tasks/get says cancelled
  plain                call the tool with the Python SDK without the tasks extension; a question comes as an
                       input_required result and is answered ({"decision": "approve"}) by the retried call
  no-extension TASK_ID tasks/get without the tasks extension (Python SDK): print the error

URL "stdio" makes `plain` spawn `npm run -s serve -- SERVE_ARG...` (the arguments after `--`, e.g. which tools to
serve) and speak over its stdio; the environment says which Temporal and task queue it uses.
"""

import argparse
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


def target(url: str, serve_args: list[str]):
    """A URL, or "stdio": spawn `npm run -s serve -- SERVE_ARGS` (its environment says which Temporal to use)."""
    if url != "stdio":
        return url
    from mcp.client.stdio import StdioServerParameters
    import os

    return StdioServerParameters(command="npm", args=["run", "-s", "serve", "--", *serve_args], env=dict(os.environ))


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


async def task(url: str, tool: str, arguments: dict, decision: str) -> dict:
    sent: list[dict] = []
    async with Client(recording_transport(url, sent), elicitation_handler=answering(decision)) as client:
        handle = await call_tool_task(client, tool, arguments, raise_on_error=False)
        result = await handle.result()
        status = await handle.status()
        return {"taskId": handle.task_id, "status": status.status, "sent": sent, **outcome(result)}


async def create(url: str, tool: str, arguments: dict) -> dict:
    async with Client(url) as client:
        handle = await call_tool_task(client, tool, arguments)
        status = await handle.status()
        return {"taskId": handle.task_id, "status": status.status}


async def finish(url: str, tool: str, task_id: str) -> dict:
    async with Client(url, elicitation_handler=answering("approve")) as client:
        # A handle for a task another client created: its current state, read through tasks/get.
        handle = ToolTask(client, tool, ClientCreateTaskResult.model_validate({"resultType": "task", "taskId": task_id, "status": "working", "createdAt": "", "lastUpdatedAt": "", "ttlMs": None}), raise_on_error=False)
        result = await handle.result()
        status = await handle.status()
        return {"taskId": task_id, "status": status.status, **outcome(result)}


async def cancel(url: str, tool: str, arguments: dict) -> dict:
    async with Client(url) as client:
        handle = await call_tool_task(client, tool, arguments)
        await handle.wait(state="input_required", timeout=30)
        await handle.cancel()
        for _ in range(100):
            status = await handle.status()
            if status.status == "cancelled":
                break
            await asyncio.sleep(0.2)
        return {"taskId": handle.task_id, "status": status.status}


async def plain(url: str, tool: str, arguments: dict, serve_args: list[str]) -> dict:
    async def elicitation(context, params):
        asked.append(params.message)
        return mcp_types.ElicitResult(action="accept", content={"decision": "approve"})

    async with SdkClient(target(url, serve_args), elicitation_callback=elicitation, mode="auto") as client:
        result = await client.call_tool(tool, arguments)
        return {"protocolVersion": client.session.protocol_version, **outcome(result)}


async def no_extension(url: str, task_id: str) -> dict:
    from fastmcp_tasks.client_models import GetTaskRequest, GetTaskRequestParams

    async with SdkClient(url, mode="auto") as client:
        try:
            await client.session.send_request(GetTaskRequest(params=GetTaskRequestParams(task_id=task_id)), mcp_types.Result)
        except MCPError as error:
            return {"protocolVersion": client.session.protocol_version, "code": error.code, "message": error.message, "data": error.data}
        return {"protocolVersion": client.session.protocol_version, "code": None}


def parse(argv: list[str]) -> argparse.Namespace:
    """The command line; what follows the first `--` is kept, untouched, as the spawned server's arguments."""
    serve_args: list[str] = []
    if "--" in argv:
        at = argv.index("--")
        argv, serve_args = argv[:at], argv[at + 1 :]
    summary, _, details = __doc__.partition("\nUsage: ")
    parser = argparse.ArgumentParser(
        usage=details.split("\n", 1)[0],
        description=summary.strip() + "\n\n" + details.split("\n", 1)[1].strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("url", metavar="URL", help='the server\'s Streamable HTTP endpoint, or "stdio"')
    parser.add_argument("scenario", metavar="SCENARIO", choices=["task", "create", "finish", "cancel", "plain", "no-extension"])
    parser.add_argument("arg", metavar="ARG", nargs="?", help="DECISION (task) or TASK_ID (finish, no-extension)")
    parser.add_argument("--tool", metavar="NAME", help="the tool to call (task, create, cancel, plain) or whose task to finish (finish)")
    parser.add_argument("--arguments", metavar="JSON", type=json.loads, default={}, help="the tool's arguments, a JSON object (default {})")
    args = parser.parse_args(argv)
    args.serve_args = serve_args
    if args.scenario in ("task", "create", "finish", "cancel", "plain") and not args.tool:
        parser.error(f"{args.scenario} needs --tool")
    if args.scenario in ("task", "finish", "no-extension") and not args.arg:
        parser.error(f"{args.scenario} needs {'DECISION' if args.scenario == 'task' else 'TASK_ID'}")
    if not isinstance(args.arguments, dict):
        parser.error("--arguments must be a JSON object")
    return args


async def main() -> None:
    args = parse(sys.argv[1:])
    url, tool, arguments = args.url, args.tool, args.arguments
    if args.scenario == "task":
        out = await task(url, tool, arguments, args.arg)
    elif args.scenario == "create":
        out = await create(url, tool, arguments)
    elif args.scenario == "finish":
        out = await finish(url, tool, args.arg)
    elif args.scenario == "cancel":
        out = await cancel(url, tool, arguments)
    elif args.scenario == "plain":
        out = await plain(url, tool, arguments, args.serve_args)
    else:
        out = await no_extension(url, args.arg)
    print(json.dumps(out, default=str))


if __name__ == "__main__":
    asyncio.run(main())

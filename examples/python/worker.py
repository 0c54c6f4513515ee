"""Runs the purchase request and budget approval workflows on a Temporal task queue until SIGTERM or Ctrl-C.

TEMPORAL_ADDRESS (default localhost:7233), TEMPORAL_NAMESPACE (default "default") and TEMPORAL_TASK_QUEUE
(default "purchase-requests", the queue examples/python/tools.yaml names) say where. MCP_TASK_MARKER_KEY (or its file,
see answer_seal.py) is the bridge's key, with which the workflow checks that an answer came from a bridge.
MCP_PAYLOAD_KEYS, when set, is the bridge's payload keys file: payloads are encrypted as the bridge encrypts them
(payload_codec.py).
"""

import asyncio
import dataclasses
import os
import signal
import sys

import temporalio.converter
from temporalio.client import Client
from temporalio.worker import Worker

from answer_seal import AnswerVerifier, bridge_key_from_env
from budget_approval import BudgetApprovalWorkflow
from payload_codec import PayloadKeysError, payload_codec_from_env
from purchase_request import PurchaseRequestWorkflow


async def main() -> None:
    address = os.environ.get("TEMPORAL_ADDRESS", "localhost:7233")
    namespace = os.environ.get("TEMPORAL_NAMESPACE", "default")
    task_queue = os.environ.get("TEMPORAL_TASK_QUEUE", "purchase-requests")
    # Read before polling: without the bridge's key every answer would be refused.
    verifier = AnswerVerifier(bridge_key_from_env())
    # And the payload keys: without them every workflow task of an encrypted task fails.
    codec = payload_codec_from_env()
    converter = dataclasses.replace(temporalio.converter.default(), payload_codec=codec) if codec else temporalio.converter.default()
    client = await Client.connect(address, namespace=namespace, data_converter=converter)
    payloads = f"payloads encrypted with key {codec.encrypting_key_id}" if codec else "payloads in the clear (MCP_PAYLOAD_KEYS unset)"

    stop = asyncio.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)

    # Leaving the block shuts the worker down: it stops polling and finishes the workflow tasks it holds.
    async with Worker(client, task_queue=task_queue, workflows=[PurchaseRequestWorkflow, BudgetApprovalWorkflow], activities=[verifier.verify_answer]):
        print(f"worker: polling {task_queue} on {address} ({namespace}); answer key {verifier.key_id}; {payloads}", file=sys.stderr, flush=True)
        await stop.wait()
    print("worker: stopped", file=sys.stderr, flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except PayloadKeysError as error:
        print(f"worker: {error}", file=sys.stderr)
        sys.exit(2)
    except RuntimeError as error:
        print(f"worker: {error}", file=sys.stderr)
        sys.exit(1)

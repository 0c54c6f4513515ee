"""Opening an answer the bridge sealed, inside a workflow: the one way the workflows of this folder take answers.

The answer is the copy in `sealed` (JSON text the bridge wrote for this run), and only once the local activity
"mcpVerifyAnswer" (answer_seal.py, on the worker) has found `proof` to be the bridge's MAC of it; so a message from
anyone else who can write the namespace answers nothing.
"""

import json
from datetime import timedelta
from typing import Any

from temporalio import workflow
from temporalio.exceptions import ActivityError


class AnswerRefused(Exception):
    """The answer carries no seal of this run, or its seal does not hold; the message says which."""


async def unseal(incoming: dict[str, Any]) -> dict[str, Any]:
    """The answer as the bridge sealed it for this run, once a worker with the bridge's key vouches for it."""
    sealed = incoming.get("sealed")
    try:
        answer = json.loads(sealed) if isinstance(sealed, str) else None
    except ValueError:
        answer = None
    info = workflow.info()
    # The original run id is the run's own, kept across resets (a reset run takes the answers it took before).
    if (
        not isinstance(answer, dict)
        or answer.get("workflowId") != info.workflow_id
        or answer.get("originalRunId") != info.original_execution_run_id
    ):
        raise AnswerRefused("it carries no seal of this run")
    try:
        verdict = await workflow.execute_local_activity(
            "mcpVerifyAnswer",
            {"sealed": sealed, "proof": incoming.get("proof")},
            start_to_close_timeout=timedelta(seconds=10),
            result_type=dict,
        )
    except ActivityError as error:
        raise AnswerRefused(f"its seal could not be checked ({error})") from error
    if not verdict.get("ok"):
        raise AnswerRefused(f"its seal does not hold ({verdict.get('reason')})")
    return answer

"""A purchase request that asks an approver, written against the MCP task contract with plain Temporal calls.

The contract (README, "The task contract, in any SDK language") is three things, the same in every SDK:
  - the workflow keeps its task state in the memo key "mcpTask" and rewrites it on every change;
  - a question is an entry of "inputs" there: a unique key and an MCP elicitation request (a form here);
  - the answer arrives as the signal "mcp.respond" with a JSON object {key, action, content?, sealed, proof}; the
    workflow acts on the copy in "sealed" once the local activity "mcpVerifyAnswer" (answer_seal.py) has found the
    proof to be the bridge's, so a signal from anyone else who can write the namespace answers nothing.
"""

from typing import Any, Optional

from temporalio import workflow

from change_stamp import stamp_change
from sealed_answer import AnswerRefused, unseal

# A form-mode elicitation request (MCP 2025-11-25): a flat object schema of primitive and enum fields.
APPROVAL_FORM = {
    "type": "object",
    "properties": {
        "decision": {"type": "string", "title": "Decision", "enum": ["approve", "reject"]},
        "comment": {"type": "string", "title": "Comment", "maxLength": 500},
    },
    "required": ["decision"],
}


def fits_approval_form(content: Any) -> bool:
    """Whether accepted content fits APPROVAL_FORM; the workflow checks it itself, whoever sent the signal."""
    return (
        isinstance(content, dict)
        and set(content) <= {"decision", "comment"}
        and content.get("decision") in ("approve", "reject")
        and isinstance(content.get("comment", ""), str)
        and len(content.get("comment", "")) <= 500
    )


# The workflow type and signal names are stored in histories: never rename them.
@workflow.defn(name="purchaseRequestWorkflow")
class PurchaseRequestWorkflow:
    def __init__(self) -> None:
        # Questions waiting for an answer, by key, in the order they were asked.
        self.pending: dict[str, dict[str, Any]] = {}
        self.answers: dict[str, dict[str, Any]] = {}

    @workflow.run
    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        item, amount, requester = request["item"], request["amount"], request["requester"]
        self.publish(f"Received the request for {item}")

        # A key names one question for the workflow's whole life: a question asked again gets a new key.
        answer = await self.ask(
            "approval",
            {
                "mode": "form",
                "message": f"Approve buying {item} for {amount:.2f} EUR, requested by {requester}?",
                "requestedSchema": APPROVAL_FORM,
            },
        )

        # The return value is the tool result: a dict becomes its structuredContent, shaped as the outputSchema says.
        result = {"item": item, "amount": amount, "requester": requester, "decidedAt": self.now()}
        decided_by = (answer.get("answeredBy") or {}).get("principal")
        if decided_by:
            result["decidedBy"] = decided_by
        if answer["action"] == "decline":
            return {**result, "approved": False, "decision": "declined"}
        decision, comment = answer["content"]["decision"], answer["content"].get("comment")
        if comment:
            result["comment"] = comment
        return {**result, "approved": decision == "approve", "decision": decision}

    async def ask(self, key: str, elicitation: dict[str, Any]) -> dict[str, Any]:
        """Publishes the question and waits, as long as it takes, for an answer that the signal handler took."""
        self.pending[key] = elicitation
        self.publish(elicitation["message"])
        await workflow.wait_condition(lambda: key in self.answers)
        return self.answers[key]

    @workflow.signal(name="mcp.respond")
    async def respond(self, incoming: dict[str, Any]) -> None:
        if incoming.get("key") not in self.pending:
            return
        # Runs that started before answers were sealed took them as they came, and replay that way.
        answer = await self.unseal(incoming) if workflow.patched("mcp-sealed-answers") else incoming
        if answer is None:
            return
        # Take an answer only for a pending key (not another key, not a repeat), and only a decline or an accept
        # whose content fits the form (this workflow asks one form; check each against its own requestedSchema);
        # "cancel" and anything else leave the question open.
        key, action, content = answer.get("key"), answer.get("action"), answer.get("content")
        if key in self.pending and (action == "decline" or (action == "accept" and fits_approval_form(content))):
            del self.pending[key]
            self.answers[key] = answer
            # Upserted in the same workflow task that takes the answer: the bridge reads an answer signalled after the
            # last completed workflow task as received, so the question must be gone from the memo by then.
            self.publish("Recording the decision")

    async def unseal(self, incoming: dict[str, Any]) -> Optional[dict[str, Any]]:
        """The answer as the bridge sealed it (sealed_answer.py), or None, logged: raised out of a signal handler, a
        refusal would fail the whole workflow."""
        try:
            return await unseal(incoming)
        except AnswerRefused as refusal:
            workflow.logger.warning("refused an answer: %s", refusal)
            return None

    def publish(self, status_message: str) -> None:
        """Writes the task state to the memo: input_required with the open questions, or working."""
        state: dict[str, Any] = {"status": "working", "statusMessage": status_message, "updatedAt": self.now()}
        if self.pending:
            state["status"] = "input_required"
            state["inputs"] = [{"key": key, "request": request} for key, request in self.pending.items()]
        workflow.upsert_memo({"mcpTask": state})
        stamp_change()

    @staticmethod
    def now() -> str:
        # Workflow time, never the wall clock (replays must write the same memo), as ISO 8601 in UTC.
        return workflow.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")

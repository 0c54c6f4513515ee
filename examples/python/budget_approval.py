"""A budget request that people of a role approve, never the requester, written against the MCP task contract.

A question for someone other than the task's caller (README, "Approvals by the right people") is, in any SDK:
  - an entry of "awaiting" in the memo "mcpTask": a key, the form (an MCP elicitation request), the audience (roles
    and/or principals, how many distinct people must accept), the requester (from the search attribute McpPrincipal,
    which the bridge set at start), the answers so far and when it was asked;
  - the keyword list search attribute "McpAwaiting" ("role:<name>", "principal:<name>") while it is open, so that an
    approver's inbox finds it with one visibility query;
  - answers as the Update "mcp.answer": its validator refuses what this workflow's state forbids (closed, not
    addressed, the requester, a repeat, content that does not fit), leaving no trace in the history; its handler takes
    the copy the bridge sealed once the local activity "mcpVerifyAnswer" (answer_seal.py) vouches for it, judges it
    again on that sealed identity, and records it.
The task stays "working" meanwhile: the requester is never asked.
"""

import json
from typing import Any, Optional

from temporalio import workflow
from temporalio.common import SearchAttributeKey
from temporalio.exceptions import ApplicationError

from purchase_request import APPROVAL_FORM, fits_approval_form
from change_stamp import stamp_change
from sealed_answer import AnswerRefused, unseal

PRINCIPAL = SearchAttributeKey.for_keyword("McpPrincipal")
AWAITING = SearchAttributeKey.for_keyword_list("McpAwaiting")
APPROVER_ROLE = "budget-owner"
MAX_COMMENT = 2000


def refused(reason: str) -> ApplicationError:
    """An answer refused: the reason, a sentence the person is told, as the failure's first detail (the bridge reads it)."""
    return ApplicationError(f"Answer refused: {reason}", reason, type="AnswerRefused", non_retryable=True)


# The workflow type and message names are stored in histories: never rename them.
@workflow.defn(name="budgetApprovalWorkflow")
class BudgetApprovalWorkflow:
    def __init__(self) -> None:
        self.question: Optional[dict[str, Any]] = None
        self.status_message = "Received the request"

    @workflow.run
    async def run(self, request: dict[str, Any]) -> dict[str, Any]:
        purpose, amount = request["purpose"], request["amount"]
        self.question = {
            "key": "approval",
            "request": {"mode": "form", "message": f"Approve a budget of {amount:.2f} EUR for {purpose}?", "requestedSchema": APPROVAL_FORM},
            "audience": {"roles": [APPROVER_ROLE], "required": 1, "exclude": []},
            "requester": workflow.info().typed_search_attributes.get(PRINCIPAL) or "",
            "answers": [],
            "askedAt": self.now(),
        }
        self.status_message = f"Waiting for 1 approval by {APPROVER_ROLE}"
        workflow.upsert_search_attributes([AWAITING.value_set([f"role:{APPROVER_ROLE}"])])
        self.publish()
        await workflow.wait_condition(lambda: bool(self.question["answers"]))

        answer = self.question["answers"][0]
        self.question = None
        workflow.upsert_search_attributes([AWAITING.value_unset()])
        approved = answer["action"] == "accept" and answer["content"]["decision"] == "approve"
        self.status_message = "Approved" if approved else "Not approved"
        self.publish()
        result = {"purpose": purpose, "amount": amount, "approved": approved, "decidedBy": answer["principal"]}
        result.update({"roles": answer["roles"], "decidedAt": answer["at"]})
        if answer.get("comment"):
            result["comment"] = answer["comment"]
        return result

    def refusal(self, answer: Any) -> Optional[str]:
        """Why this answer cannot be taken now, judged on the identity it carries; None when it can."""
        question = self.question
        if not isinstance(answer, dict) or question is None or answer.get("key") != question["key"] or question["answers"]:
            return f"no question {json.dumps(answer.get('key') if isinstance(answer, dict) else None)} is open on this task"
        by = answer.get("answeredBy") or {}
        principal, roles = by.get("principal"), by.get("roles") or []
        if not isinstance(principal, str):
            return "the answer does not say who gave it"
        if principal not in question["audience"].get("principals", []) and not set(roles) & set(question["audience"]["roles"]):
            return "this question is not addressed to you"
        if principal == question["requester"]:
            return "you asked for this, so someone else must answer it"
        if answer.get("action") == "accept" and not fits_approval_form(answer.get("content")):
            return "the answer does not fit the question: decision must be approve or reject"
        if answer.get("action") not in ("accept", "decline"):
            return "the action must be accept or decline"
        comment = answer.get("comment")
        if comment is not None and (not isinstance(comment, str) or len(comment) > MAX_COMMENT):
            return f"the comment must be text of at most {MAX_COMMENT} characters"
        return None

    @workflow.update(name="mcp.answer")
    async def answer(self, incoming: dict[str, Any]) -> dict[str, Any]:
        try:
            sealed = await unseal(incoming)
        except AnswerRefused as refusal:
            raise refused(str(refusal)) from refusal
        # Judged again on the sealed identity, and on the state now (another answer may have come meanwhile).
        why = self.refusal(sealed)
        if why:
            raise refused(why)
        by = sealed["answeredBy"]
        record = {"principal": by["principal"], "roles": list(by.get("roles") or []), "action": sealed["action"], "at": sealed["answeredAt"]}
        for name in ("content", "comment"):
            if sealed.get(name) is not None:
                record[name] = sealed[name]
        if by.get("via"):
            record["via"] = by["via"]
        self.question["answers"].append(record)
        self.publish()
        return record

    @answer.validator
    def validate_answer(self, incoming: dict[str, Any]) -> None:
        why = self.refusal(incoming)
        if why:
            raise refused(why)

    def publish(self) -> None:
        """Writes the task state to the memo: working, with the question for others while it is open."""
        state: dict[str, Any] = {"status": "working", "statusMessage": self.status_message, "updatedAt": self.now()}
        if self.question is not None:
            state["awaiting"] = [self.question]
        workflow.upsert_memo({"mcpTask": state})
        stamp_change()

    @staticmethod
    def now() -> str:
        return workflow.now().isoformat(timespec="milliseconds").replace("+00:00", "Z")

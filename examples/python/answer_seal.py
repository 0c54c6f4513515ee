"""The activity "mcpVerifyAnswer": checks that an answer was sealed by a bridge, with the bridge's secret key.

The bridge seals every answer it signals: "sealed" is the JSON text of the answer with the run it is for and who gave
it, "proof" is "v1.<key id>.<mac>", where
  answer key = HMAC-SHA256(bridge key, "temporal-mcp-tasks answer key v1")
  key id     = the first 8 characters of the unpadded base64url SHA-256 of the answer key
  mac        = the unpadded base64url HMAC-SHA256 of the sealed text (UTF-8) under the answer key.
The workflow calls this activity (a local one) before it acts on an answer. The bridge key is read as the bridge reads
it: MCP_TASK_MARKER_KEY, else the file MCP_TASK_MARKER_KEY_FILE, else $XDG_CONFIG_HOME/temporal-mcp-tasks/task-marker.key
(the file every local process shares: created with a new key by whichever starts first).
"""

import base64
import hashlib
import hmac
import os
import secrets
import time
from pathlib import Path
from typing import Any

from temporalio import activity

ANSWER_KEY_LABEL = b"temporal-mcp-tasks answer key v1"


def _b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode("ascii")


def bridge_key_from_env() -> bytes:
    """The bridge's key; raises with what to set when there is none."""
    inline = os.environ.get("MCP_TASK_MARKER_KEY", "")
    if inline:
        key = inline.encode()
    else:
        config_home = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
        path = os.environ.get("MCP_TASK_MARKER_KEY_FILE") or str(Path(config_home) / "temporal-mcp-tasks" / "task-marker.key")
        key = _read_or_create(Path(path))
    if len(key) < 32:
        raise RuntimeError("the bridge's key must be at least 32 characters (MCP_TASK_MARKER_KEY)")
    return key


def _read_or_create(path: Path) -> bytes:
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        # Created exclusively: of two processes starting at once, one writes the key and both read it.
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as file:
            file.write(secrets.token_hex(32) + "\n")
            file.flush()
            os.fsync(file.fileno())
    except FileExistsError:
        pass
    except OSError as error:
        raise RuntimeError(f"cannot create the bridge's key {path}: {error}; set MCP_TASK_MARKER_KEY") from error
    for _ in range(50):
        try:
            key = path.read_text(encoding="utf-8").strip().encode()
        except OSError as error:
            raise RuntimeError(f"cannot read the bridge's key {path}: {error}; set MCP_TASK_MARKER_KEY") from error
        if len(key) >= 32:
            return key
        time.sleep(0.02)  # another process is writing it
    return key


class AnswerVerifier:
    """Checks proofs with one key; `verify_answer` is the activity to register."""

    def __init__(self, bridge_key: bytes) -> None:
        self.key = hmac.new(bridge_key, ANSWER_KEY_LABEL, hashlib.sha256).digest()
        self.key_id = _b64url(hashlib.sha256(self.key).digest())[:8]

    def check(self, sealed: Any, proof: Any) -> dict[str, Any]:
        if not isinstance(sealed, str) or not isinstance(proof, str) or len(proof) > 200:
            return {"ok": False, "reason": "no proof"}
        parts = proof.split(".")
        if len(parts) != 3 or parts[0] != "v1":
            return {"ok": False, "reason": "a proof of an unknown version"}
        if parts[1] != self.key_id:
            return {"ok": False, "reason": f"a proof made with key {parts[1]}, not this worker's key {self.key_id}"}
        expected = _b64url(hmac.new(self.key, sealed.encode("utf-8"), hashlib.sha256).digest())
        if not hmac.compare_digest(expected, parts[2]):
            return {"ok": False, "reason": "a proof that does not match"}
        return {"ok": True}

    @activity.defn(name="mcpVerifyAnswer")
    async def verify_answer(self, request: dict[str, Any]) -> dict[str, Any]:
        verdict = self.check(request.get("sealed"), request.get("proof"))
        if not verdict["ok"]:
            activity.logger.warning("refused an answer with %s", verdict["reason"])
        return verdict

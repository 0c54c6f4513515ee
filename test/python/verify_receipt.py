"""A verifier of temporal-mcp-tasks approval receipts written from docs/receipts.md alone, sharing no code with the
project: canonical JSON, SHA-256 digests, the chain's links and Ed25519 signatures (Python's `cryptography`), then
each question's standing.

Usage: python verify_receipt.py RECEIPT.json PUBLIC_KEY.pem [PUBLIC_KEY.pem ...] [--directory APPROVERS.json]
With the approvers directory, approvers' own signatures (Ed25519 and passkeys) are checked against the keys it lists,
and approvals by people it says must sign count only with one.
Prints one JSON object: {"valid": true, "questions": [...]} or {"valid": false, "problem": "..."}; exits 0 when the
receipt is valid, 1 when it is not, 2 for a bad command line.
"""

import base64
import hashlib
import json
import re
import sys
from decimal import Decimal

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FORMAT = "temporal-mcp-tasks/approval-receipt"
BLOCKING = {"reject": "rejected", "decline": "declined", "expire": "expired"}
WITHDRAWABLE = {"approve", "delegate"}


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def from_b64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def number_text(value) -> str:
    """A number as ECMAScript's Number::toString writes it (the shortest digits that read back as the same double)."""
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    if isinstance(value, int):
        value = float(value)
    if value != value or value in (float("inf"), float("-inf")):
        raise ValueError(f"{value} has no JSON form")
    if value == 0:
        return "0"
    sign = "-" if value < 0 else ""
    _, digits, exponent = Decimal(repr(abs(value))).as_tuple()
    digits = list(digits)
    while len(digits) > 1 and digits[-1] == 0:
        digits.pop()
        exponent += 1
    s = "".join(str(d) for d in digits)
    k = len(s)
    n = k + exponent
    if k <= n <= 21:
        return sign + s + "0" * (n - k)
    if 0 < n <= 21:
        return sign + s[:n] + "." + s[n:]
    if -6 < n <= 0:
        return sign + "0." + "0" * (-n) + s
    mantissa = s[0] + ("." + s[1:] if k > 1 else "")
    return f"{sign}{mantissa}e{'+' if n - 1 > 0 else '-'}{abs(n - 1)}"


def string_text(value: str) -> str:
    """A string as JSON.stringify writes it: only quotes, backslashes and control characters escaped."""
    text = json.dumps(value, ensure_ascii=False)
    return re.sub(r"[\ud800-\udfff]", lambda match: "\\u%04x" % ord(match.group(0)), text)


def canonical(value) -> str:
    """Object keys sorted by UTF-16 code units, no spaces; every other text as JSON.stringify writes it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return string_text(value)
    if isinstance(value, (int, float)):
        return number_text(value)
    if isinstance(value, list):
        return "[" + ",".join(canonical(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value.keys(), key=lambda key: key.encode("utf-16-be", "surrogatepass"))
        return "{" + ",".join(string_text(key) + ":" + canonical(value[key]) for key in keys) + "}"
    raise ValueError(f"a {type(value).__name__} has no JSON form")


def digest(value) -> str:
    text = canonical(value).encode("utf-8", "surrogatepass")
    return "sha256:" + b64url(hashlib.sha256(text).digest())


def key_id(public_key: Ed25519PublicKey) -> str:
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return b64url(hashlib.sha256(raw).digest())[:16]


def chain_problem(receipt: dict, keys: dict) -> str | None:
    if receipt.get("format") != FORMAT or receipt.get("v") != 1:
        return "not a receipt of version 1"
    records = receipt.get("records")
    if not isinstance(records, list) or not records:
        return "no records"
    seal = receipt.get("seal")
    if seal is not None:
        problem = seal_problem(receipt, seal, records, keys)
        if problem:
            return problem
    for index, record in enumerate(records):
        place = f"record {index + 1}"
        body = record.get("body") if isinstance(record, dict) else None
        if not isinstance(body, dict) or body.get("v") != 1:
            return f"{place} is not a decision record of version 1"
        if digest(body) != record.get("digest"):
            return f"{place} was altered: its content does not match its digest"
        if body.get("taskId") != receipt.get("taskId"):
            return f"{place} belongs to another task"
        if body.get("seq") != index + 1:
            return f"{place} is out of place: a record is missing or the records were reordered"
        if body.get("prev") != (None if index == 0 else records[index - 1]["digest"]):
            return f"{place} does not follow the record before it"
        if body.get("subject") != digest(body.get("shown")):
            return f"{place}'s subject digest does not match what it says was shown"
        if "signature" not in record:
            if body.get("decision") == "expire" and (body.get("by") or {}).get("auth") == "workflow":
                continue
            return f"{place} is not signed"
        public_key = keys.get(record.get("keyId"))
        if public_key is None:
            return f"{place} is signed by a key not given"
        try:
            public_key.verify(from_b64url(record["signature"]), canonical(body).encode("utf-8", "surrogatepass"))
        except (InvalidSignature, ValueError):
            return f"{place}'s signature is not valid"
    return None


def seal_problem(receipt: dict, seal, records: list, keys: dict) -> str | None:
    """A sealed receipt holds exactly the records it was sealed with: their number and the last one's digest."""
    if not isinstance(seal, dict):
        return "the seal is malformed"
    public_key = keys.get(seal.get("keyId"))
    if public_key is None:
        return "the seal is made with a key not given"
    sealed = {
        "format": "temporal-mcp-tasks/receipt-seal",
        "taskId": receipt.get("taskId"),
        "exportedAt": receipt.get("exportedAt"),
        "records": seal.get("records"),
        "head": seal.get("head"),
    }
    try:
        public_key.verify(from_b64url(seal.get("signature", "")), canonical(sealed).encode("utf-8", "surrogatepass"))
    except (InvalidSignature, ValueError):
        return "the seal's signature is not valid"
    if seal.get("records") != len(records) or seal.get("head") != records[-1].get("digest"):
        return "records were cut from the receipt or added to it after it was sealed"
    return None


class Directory:
    """The approvers directory: whom it lists (only they count), who a principal is, each person's own keys, who must sign."""

    def __init__(self, raw: dict):
        self.people = {person["name"]: person for person in raw.get("people", [])}
        self.by_principal = {principal: person["name"] for person in raw.get("people", []) for principal in person.get("principals", [])}
        self.all_must_sign = raw.get("mustSign") is True
        self.must_sign_roles = set(raw.get("mustSignRoles", []))

    def lists(self, principal: str) -> bool:
        return principal in self.by_principal

    def person_of(self, body: dict) -> str:
        by = body["by"]
        return self.by_principal.get(by["principal"]) or by.get("person") or by["principal"]

    def must_sign(self, person: str, roles: list) -> bool:
        listed = self.people.get(person, {})
        held = set(listed.get("roles", [])) | set(roles)
        return self.all_must_sign or listed.get("mustSign") is True or bool(held & self.must_sign_roles)

    def key(self, person: str, key_id_wanted: str):
        for entry in self.people.get(person, {}).get("keys", []):
            if "ed25519" in entry:
                public_key = Ed25519PublicKey.from_public_bytes(from_b64url(entry["ed25519"]))
                if key_id(public_key) == key_id_wanted:
                    return ("ed25519", public_key, entry)
            elif entry.get("passkey", {}).get("id") == key_id_wanted:
                return ("webauthn", serialization.load_der_public_key(from_b64url(entry["passkey"]["publicKey"])), entry["passkey"])
        return None


def statement(body: dict) -> dict:
    """What the approver signed: version 2 (the signature says "v": 2) names the run and the challenge; version 1 neither."""
    given = body.get("approverSignature") or {}
    version = 2 if given.get("v") == 2 else 1
    signed = {
        "format": "temporal-mcp-tasks/approver-statement",
        "v": version,
        "taskId": body["taskId"],
        "key": body["question"]["key"],
        "subject": body["subject"],
        "decision": body["decision"],
    }
    if version == 2:
        signed["run"] = body["run"]
        if "challenge" in given:
            signed["challenge"] = given["challenge"]
    if "delegatedTo" in body:
        signed["delegatedTo"] = body["delegatedTo"]
    return signed


def own_signature(body: dict, person: str, directory: "Directory | None") -> str:
    """absent, valid, unknown (no such key of the person, or no directory) or invalid."""
    given = body.get("approverSignature")
    if given is None:
        return "absent"
    if not isinstance(given, dict) or given.get("alg") not in ("ed25519", "webauthn"):
        return "invalid"
    found = directory.key(person, given.get("keyId")) if directory else None
    if found is None or found[0] != given["alg"]:
        return "unknown"
    text = canonical(statement(body)).encode("utf-8", "surrogatepass")
    try:
        if found[0] == "ed25519":
            found[1].verify(from_b64url(given["signature"]), text)
            return "valid"
        entry = found[2]
        client_data_bytes = from_b64url(given["clientDataJSON"])
        client_data = json.loads(client_data_bytes)
        if client_data.get("type") != "webauthn.get" or client_data.get("challenge") != b64url(hashlib.sha256(text).digest()):
            return "invalid"
        if client_data.get("origin") != entry["origin"]:
            return "invalid"
        authenticator_data = from_b64url(given["authenticatorData"])
        if authenticator_data[:32] != hashlib.sha256(entry["rpId"].encode()).digest() or authenticator_data[32] & 0x05 != 0x05:
            return "invalid"
        signed = authenticator_data + hashlib.sha256(client_data_bytes).digest()
        if isinstance(found[1], Ed25519PublicKey):
            found[1].verify(from_b64url(given["signature"]), signed)
        else:
            found[1].verify(from_b64url(given["signature"]), signed, ec.ECDSA(hashes.SHA256()))
        return "valid"
    except (InvalidSignature, ValueError, KeyError, IndexError):
        return "invalid"


def standing(records: list, directory: "Directory | None" = None) -> list:
    """Each question (run and key) in the order first decided: rejected, declined, expired, cancelled, approved or open."""
    groups: dict = {}
    for record in records:
        body = record["body"]
        groups.setdefault((body["run"], body["question"]["key"]), []).append(record)
    questions = []
    for (run, key), group in groups.items():
        withdrawable = {record["digest"] for record in group if record["body"]["decision"] in WITHDRAWABLE}
        voided = {
            record["body"].get("voids")
            for record in group
            if record["body"]["decision"] == "void" and "signature" in record and record["body"].get("voids") in withdrawable
        }
        standing_ones = [
            record for record in group if record["digest"] not in voided and record["body"]["decision"] not in ("void", "close")
        ]
        close = next((record for record in reversed(group) if record["body"]["decision"] == "close" and "signature" in record), None)
        latest_subject = group[-1]["body"]["subject"]
        blocker = next((record for record in standing_ones if record["body"]["decision"] in BLOCKING), None)
        approvers: list = []
        for record in standing_ones:
            body = record["body"]
            person = directory.person_of(body) if directory else body["by"].get("person") or body["by"]["principal"]
            if body["decision"] != "approve" or "signature" not in record or body["subject"] != latest_subject or person in approvers:
                continue
            if directory and not directory.lists(body["by"]["principal"]):
                continue
            own = own_signature(body, person, directory)
            if own == "invalid" or (directory and directory.must_sign(person, body["by"].get("roles", [])) and own != "valid"):
                continue
            approvers.append(person)
        closed_approved = close is not None and close["body"].get("outcome") == "accepted"
        enough = closed_approved and len(approvers) >= close["body"].get("required", 0)
        cancelled = close is not None and close["body"].get("outcome") == "cancelled"
        if blocker:
            state = BLOCKING[blocker["body"]["decision"]]
        elif cancelled:
            state = "cancelled"
        else:
            state = "approved" if approvers and enough else "open"

        questions.append({"run": run, "key": key, "standing": state, "approvers": approvers})
    return questions


def main(argv: list) -> int:
    directory = None
    if "--directory" in argv:
        at = argv.index("--directory")
        with open(argv[at + 1], encoding="utf-8") as file:
            directory = Directory(json.load(file))
        argv = argv[:at] + argv[at + 2 :]
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], encoding="utf-8") as file:
        receipt = json.load(file)
    keys = {}
    for name in argv[2:]:
        with open(name, "rb") as file:
            public_key = serialization.load_pem_public_key(file.read())
        if not isinstance(public_key, Ed25519PublicKey):
            sys.stderr.write(f"{name} is not an Ed25519 public key\n")
            return 2
        keys[key_id(public_key)] = public_key
    problem = chain_problem(receipt, keys)
    if problem is None:
        # A person's own signature that does not verify under their listed key: the record was altered or forged.
        for index, record in enumerate(receipt["records"]):
            body = record["body"]
            person = directory.person_of(body) if directory else body["by"].get("person") or body["by"]["principal"]
            if own_signature(body, person, directory) == "invalid":
                problem = f"record {index + 1} carries an own signature that does not verify"
                break
    if problem:
        print(json.dumps({"valid": False, "problem": problem}))
        return 1
    print(json.dumps({"valid": True, "questions": standing(receipt["records"], directory)}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

/**
 * `temporal-mcp-tasks approvals keygen`: makes an approver's own Ed25519 key pair, the private key to a file of its
 * owner's, the public key printed for the approvers directory.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { generateApproverKey } from './approver-signatures';
import { APPROVALS_EXIT, ApprovalsUsageError, parseOptions, type CommandOutput } from './command-line';

/** The --help text of `approvals keygen`. */
const KEYGEN_HELP = `Usage: temporal-mcp-tasks approvals keygen --out FILE [--json]

Makes an approver's own Ed25519 key pair. The private key goes to FILE (PKCS#8 PEM, mode 0600, never over an existing
file): keep it where only its owner can read it. Prints the public key and its id; the keeper of the approvers
directory adds the public key to the person's entry:  "keys": [{ "ed25519": "<public key>" }].

Options:
  --out FILE   where the private key is written
  --json       print {"publicKey", "keyId", "privateKeyFile"} as JSON
  -h, --help   show this help
`;

/** Runs `approvals keygen` and returns its exit code; throws {@link ApprovalsUsageError}. */
export function keygenCommand(argv: string[], io: CommandOutput): number {
  const { values } = parseOptions(
    argv,
    { out: { type: 'string' }, json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    'keygen',
  );
  if (values.help) {
    io.out(KEYGEN_HELP);
    return APPROVALS_EXIT.valid;
  }
  const out = typeof values.out === 'string' ? values.out.trim() : '';
  if (out === '')
    throw new ApprovalsUsageError('give --out FILE, where the private key is written; see temporal-mcp-tasks approvals keygen --help');
  const key = generateApproverKey();
  try {
    // Never over an existing file (a key someone relies on), never through a link, readable by its owner only.
    writeFileSync(out, key.privateKeyPem, { flag: 'wx', mode: 0o600 });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new ApprovalsUsageError(
      code === 'EEXIST'
        ? `${out} exists; keygen never replaces a key: give another --out`
        : `cannot write ${out}: ${(error as Error).message}`,
    );
  }
  const privateKeyFile = path.resolve(out);
  if (values.json)
    io.out(`${JSON.stringify({ publicKey: key.publicKey, keyId: key.keyId, privateKeyFile }, null, 2)}
`);
  else
    io.out(
      `Private key written to ${privateKeyFile} (keep it to yourself).
` +
        `Public key ${key.keyId}: add it to your entry of the approvers directory:
  "keys": [{ "ed25519": "${key.publicKey}" }]
`,
    );
  return APPROVALS_EXIT.valid;
}

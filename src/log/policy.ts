// C2SP tlog-policy (https://c2sp.org/tlog-policy): the policy file parser ("Policy file syntax and structure") and
// quorum evaluation; verifyCheckpointWithPolicy checks a log signature (tlog-checkpoint) plus a cosigner quorum.

// Lines: `log <vkey> [<url>]`, `witness <name> <vkey> [<url>]`, `group <name> all|any|<k> <name>...`,
// `quorum <name>|none`; blank and `#` lines are ignored; items are separated by spaces and tabs only.
// Refused (BAD_REQUEST, naming the line): unknown keywords or names, a name defined twice, duplicate keys (the same
// public key, whatever its name), k outside 1..n, a member listed twice, a name used before it is defined, `none` as
// a member, no or two quorum lines. A checkpoint without the quorum is WITNESS_QUORUM.
// Deviation: the spec lets octets with the high bit set be opaque; here the file must be UTF-8 (names are note key
// names, which signed-note requires to be UTF-8).

import { computeDigest, type Sha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { decodeUtf8Strict, equalBytes } from '../core/bytes.ts';
import { parseCheckpoint, type Checkpoint } from './checkpoint.ts';
import {
  checkCosignatureLine,
  checkCosignatures,
  parseCosignerVkey,
  type CheckedCosignature,
  type CosignerKey,
} from './cosignature.ts';
import { parseNote, parseVerifierString, verifyNote, type NoteVerifier } from './note.ts';

export interface PolicyLog {
  verifier: NoteVerifier;
  url: string | undefined;
}

export interface PolicyWitness {
  /** The policy's name for the witness (not necessarily its key name). */
  name: string;
  key: CosignerKey;
  url: string | undefined;
}

export interface PolicyGroup {
  name: string;
  threshold: number;
  members: readonly string[];
}

export interface WitnessPolicy {
  logs: readonly PolicyLog[];
  witnesses: ReadonlyMap<string, PolicyWitness>;
  groups: ReadonlyMap<string, PolicyGroup>;
  /** A witness or group name, or 'none'. */
  quorum: string;
  /** sha256 of the policy file's bytes: what a lockfile pins (`toolseal pin --witness-policy`). */
  digest: Sha256Digest;
}

/** What a checkpoint checked against a policy proved. */
export interface PolicyCheckedCheckpoint {
  checkpoint: Checkpoint;
  /** The log key that signed it. */
  log: NoteVerifier;
  /** Policy names of the witnesses whose cosignature verified. */
  cosignedBy: string[];
  /** Every cosignature line by a policy witness, with its outcome. */
  cosignatures: (CheckedCosignature & { witness: string })[];
}

const NONE = 'none';
const MAX_POLICY_BYTES = 1 << 20;

function refuse(line: number, why: string): never {
  throw new ToolsealError('BAD_REQUEST', `witness policy line ${line}: ${why}`);
}

/** The policy as it is read, line by line. */
class PolicyReader {
  readonly logs: PolicyLog[] = [];
  readonly witnesses = new Map<string, PolicyWitness>();
  readonly groups = new Map<string, PolicyGroup>();
  quorum: string | undefined;
  private readonly seenKeys: { key: Uint8Array; line: number }[] = [];

  read(raw: string, line: number): void {
    // tlog-policy "Character set": the only control characters allowed are tab and newline.
    if (/[\u0000-\u0008\u000A-\u001F\u007F]/.test(raw)) refuse(line, 'control characters other than tab');
    const items = raw.split(/[ \t]+/).filter((item) => item.length > 0);
    if (items.length === 0 || items[0]?.startsWith('#')) return;
    const [keyword, ...args] = items as [string, ...string[]];
    if (keyword === 'log') this.readLog(line, args);
    else if (keyword === 'witness') this.readWitness(line, args);
    else if (keyword === 'group') this.readGroup(line, args);
    else if (keyword === 'quorum') this.readQuorum(line, args);
    else refuse(line, `unknown keyword ${JSON.stringify(keyword)}`);
  }

  private isDefined(name: string): boolean {
    return this.witnesses.has(name) || this.groups.has(name);
  }

  private checkNewName(line: number, name: string): void {
    if (name === NONE) refuse(line, 'the name "none" is predefined');
    if (this.isDefined(name)) refuse(line, `the name ${JSON.stringify(name)} is already defined`);
  }

  private checkNewKey(line: number, key: Uint8Array): void {
    const earlier = this.seenKeys.find((seen) => equalBytes(seen.key, key));
    if (earlier) refuse(line, `duplicate key: the same public key is on line ${earlier.line}`);
    this.seenKeys.push({ key, line });
  }

  private readLog(line: number, args: string[]): void {
    if (args.length < 1 || args.length > 2) refuse(line, 'expected: log <vkey> [<url>]');
    const verifier = parseKey(line, () => parseVerifierString(args[0] as string));
    this.checkNewKey(line, verifier.publicKey);
    this.logs.push({ verifier, url: args[1] });
  }

  private readWitness(line: number, args: string[]): void {
    if (args.length < 2 || args.length > 3) refuse(line, 'expected: witness <name> <vkey> [<url>]');
    const name = args[0] as string;
    this.checkNewName(line, name);
    const key = parseKey(line, () => parseCosignerVkey(args[1] as string));
    this.checkNewKey(line, key.publicKey);
    this.witnesses.set(name, { name, key, url: args[2] });
  }

  private readGroup(line: number, args: string[]): void {
    if (args.length < 3) refuse(line, 'expected: group <name> all|any|<k> <name>...');
    const [name, thresholdText, ...members] = args as [string, string, ...string[]];
    this.checkNewName(line, name);
    const listed = new Set<string>();
    for (const member of members) {
      if (member === NONE) refuse(line, '"none" cannot be a group member');
      if (!this.isDefined(member)) refuse(line, `${JSON.stringify(member)} is not defined on an earlier line`);
      if (listed.has(member)) refuse(line, `${JSON.stringify(member)} is listed twice`);
      listed.add(member);
    }
    const threshold = parseThreshold(line, thresholdText, members.length);
    this.groups.set(name, { name, threshold, members });
  }

  private readQuorum(line: number, args: string[]): void {
    if (args.length !== 1) refuse(line, 'expected: quorum <name>|none');
    if (this.quorum !== undefined) refuse(line, 'a second quorum line (a policy has exactly one)');
    const name = args[0] as string;
    if (name !== NONE && !this.isDefined(name))
      refuse(line, `${JSON.stringify(name)} is not defined on an earlier line`);
    this.quorum = name;
  }
}

function parseKey<T>(line: number, parse: () => T): T {
  try {
    return parse();
  } catch (error) {
    refuse(line, error instanceof ToolsealError ? error.message : 'bad vkey');
  }
}

function parseThreshold(line: number, text: string, members: number): number {
  let threshold: number;
  if (text === 'all') threshold = members;
  else if (text === 'any') threshold = 1;
  else if (/^[1-9][0-9]{0,5}$/.test(text)) threshold = Number(text);
  else refuse(line, `the threshold must be all, any or a decimal number, not ${JSON.stringify(text)}`);
  if (threshold > members) refuse(line, `threshold ${threshold} is more than the ${members} members`);
  return threshold;
}

/** Parse a tlog-policy file. Every refusal names its line number. */
export function parseWitnessPolicy(input: string | Uint8Array): WitnessPolicy {
  let text: string;
  const bytes = input instanceof Uint8Array ? input : new TextEncoder().encode(input);
  if (input instanceof Uint8Array) {
    if (input.byteLength > MAX_POLICY_BYTES) throw new ToolsealError('BAD_REQUEST', 'witness policy is too large');
    const decoded = decodeUtf8Strict(input);
    if (decoded === undefined) throw new ToolsealError('BAD_REQUEST', 'witness policy is not valid UTF-8');
    text = decoded;
  } else {
    text = input;
  }
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  const reader = new PolicyReader();
  for (const [index, raw] of lines.entries()) reader.read(raw, index + 1);
  const { logs, witnesses, groups, quorum } = reader;
  if (quorum === undefined) refuse(lines.length, 'no quorum line (a policy has exactly one)');
  return { logs, witnesses, groups, quorum, digest: computeDigest(bytes) };
}

/** Whether the witnesses named in `cosignedBy` satisfy the policy's quorum (tlog-policy "Defining a witness group"). */
export function isQuorumMet(policy: WitnessPolicy, cosignedBy: ReadonlySet<string>): boolean {
  if (policy.quorum === NONE) return true;
  const memo = new Map<string, boolean>();
  const witnessed = (name: string): boolean => {
    const known = memo.get(name);
    if (known !== undefined) return known;
    const group = policy.groups.get(name);
    let result: boolean;
    if (group === undefined) result = policy.witnesses.has(name) && cosignedBy.has(name);
    else {
      let count = 0;
      for (const member of group.members) if (witnessed(member)) count++;
      result = count >= group.threshold;
    }
    memo.set(name, result);
    return result;
  };
  return witnessed(policy.quorum);
}

/** The number of cosignatures that can matter: the policy's witnesses (0 for `quorum none`). */
function policyCosigners(policy: WitnessPolicy): { witness: string; key: CosignerKey }[] {
  return [...policy.witnesses.values()].map((w) => ({ witness: w.name, key: w.key }));
}

/**
 * Verify a signed checkpoint against a policy: signed by one of its logs (or by `logVerifiers` when the policy
 * lists none), and cosigned by a quorum. Cosignatures stamped after `nowSeconds` are ignored; a cosignature by a
 * policy witness that does not verify refuses the note (signed-note: SIGNATURE_INVALID). No quorum: WITNESS_QUORUM.
 */
export function verifyCheckpointWithPolicy(
  signedNote: string | Uint8Array,
  policy: WitnessPolicy,
  options: { nowSeconds: number; logVerifiers?: readonly (string | NoteVerifier)[]; origin?: string },
): PolicyCheckedCheckpoint {
  const trusted = policy.logs.length > 0 ? policy.logs.map((l) => l.verifier) : (options.logVerifiers ?? []);
  if (trusted.length === 0) throw new ToolsealError('UNKNOWN_KEY', 'the witness policy lists no log key');
  const verified = verifyNote(signedNote, trusted);
  const checkpoint = parseCheckpoint(verified.body);
  if (options.origin !== undefined && checkpoint.origin !== options.origin)
    throw new ToolsealError('PROOF_INVALID', `checkpoint origin ${JSON.stringify(checkpoint.origin)} is unexpected`);
  const signer = verified.verifiedBy[0] as { name: string; keyId: number };
  if (signer.name !== checkpoint.origin)
    throw new ToolsealError('PROOF_INVALID', 'the log key name is not the checkpoint origin (tlog-policy "log")');
  const log = (trusted.map((t) => (typeof t === 'string' ? parseVerifierString(t) : t)) as NoteVerifier[]).find(
    (t) => t.name === signer.name && t.keyId === signer.keyId,
  ) as NoteVerifier;
  const cosigners = policyCosigners(policy);
  const checked =
    cosigners.length === 0
      ? []
      : checkCosignatures(
          signedNote,
          cosigners.map((c) => c.key),
          options.nowSeconds,
        );
  const cosignatures = checked.map((c) => ({
    ...c,
    witness: (cosigners.find((w) => w.key.name === c.name && w.key.keyId === c.keyId) as { witness: string }).witness,
  }));
  const invalid = cosignatures.find((c) => c.status === 'invalid');
  if (invalid)
    throw new ToolsealError('SIGNATURE_INVALID', `the cosignature by witness ${invalid.witness} does not verify`);
  const cosignedBy = [...new Set(cosignatures.filter((c) => c.status === 'verified').map((c) => c.witness))];
  if (!isQuorumMet(policy, new Set(cosignedBy))) {
    throw new ToolsealError(
      'WITNESS_QUORUM',
      `checkpoint ${checkpoint.size} of ${checkpoint.origin} lacks the witness quorum ${policy.quorum}` +
        ` (verified cosignatures: ${cosignedBy.length > 0 ? cosignedBy.join(', ') : 'none'})`,
    );
  }
  return { checkpoint, log, cosignedBy, cosignatures };
}

/**
 * The host's quorum check on a checkpoint whose log signature was already verified: cosignature lines by the policy's
 * witnesses are verified one by one until the quorum is met (so a 2-of-3 policy costs at most two Ed25519 verifies);
 * lines stamped after `nowSeconds` are ignored. A policy listing logs must list `logPublicKey`. Refusals, including a
 * policy witness's cosignature that does not verify, are WITNESS_QUORUM. Returns the witnesses counted.
 */
export function checkWitnessQuorum(
  signedNote: string,
  policy: WitnessPolicy,
  logPublicKey: Uint8Array,
  nowSeconds: number,
): string[] {
  const refuse = (why: string): never => {
    throw new ToolsealError('WITNESS_QUORUM', `the checkpoint does not meet the witness policy: ${why}`);
  };
  if (policy.logs.length > 0 && !policy.logs.some((log) => equalBytes(log.verifier.publicKey, logPublicKey)))
    refuse("the log key is not one of the policy's logs");
  const counted = new Set<string>();
  if (isQuorumMet(policy, counted)) return [];
  const { body, signatures } = parseNote(signedNote);
  for (const line of signatures) {
    const witness = [...policy.witnesses.values()].find(
      (w) => w.key.name === line.name && w.key.keyId === line.keyId && !counted.has(w.name),
    );
    if (witness === undefined) continue;
    const checked = checkCosignatureLine(body, line, witness.key, nowSeconds);
    if (checked.status === 'invalid') refuse(`the cosignature by witness ${witness.name} does not verify`);
    if (checked.status !== 'verified') continue;
    counted.add(witness.name);
    if (isQuorumMet(policy, counted)) return [...counted];
  }
  return refuse(
    `quorum ${policy.quorum} is not met (verified cosignatures: ${counted.size > 0 ? [...counted].join(', ') : 'none'})`,
  );
}

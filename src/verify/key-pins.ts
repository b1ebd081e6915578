// A registry's keys as the lockfile pinned them (issue 23 §6): attestation keys by RFC 7638 thumbprint (their kid,
// RFC 8037 keys are named by it) and the log's C2SP note verifier string. Under `--locked` a manifest signed with
// any other key, or a log signed under another key, is KEY_NOT_PINNED, whatever else the registry serves; so is a run
// without the witness policy (C2SP tlog-policy, issue 25 §4) the pins name, by its digest.

import { type Jwks, type JwksKey, selectUsableKeys } from '../attest/index.ts';
import { ToolsealError } from '../core/errors.ts';
import type { RegistryKeyPins } from '../lock/lockfile.ts';
import type { NoteVerifier, WitnessPolicy } from '../log/index.ts';

/** The pins `pin` records: the thumbprints of every usable key of the JWKS, the log key and the witness policy. */
export function describeRegistryKeys(
  jwks: Jwks | readonly JwksKey[],
  logKey: string,
  witnessPolicy?: WitnessPolicy,
): RegistryKeyPins {
  const kids = selectUsableKeys(jwks).jwks.keys.map((key) => key.kid);
  const pins: RegistryKeyPins = { attestationKeys: [...new Set(kids)].sort(), logKey: logKey.trim() };
  if (witnessPolicy !== undefined) pins.witnessPolicy = witnessPolicy.digest;
  return pins;
}

/**
 * KEY_NOT_PINNED when the pins name a witness policy and this run checks checkpoints with another one, or with none:
 * a pinned host keeps the quorum it pinned with (a run with a policy where none was pinned is only stricter).
 */
export function checkPinnedWitnessPolicy(
  witnessPolicy: WitnessPolicy | undefined,
  pins: RegistryKeyPins,
  registry: string,
): void {
  if (pins.witnessPolicy === undefined || witnessPolicy?.digest === pins.witnessPolicy) return;
  throw new ToolsealError(
    'KEY_NOT_PINNED',
    witnessPolicy === undefined
      ? `the lockfile pins ${registry} with the witness policy ${pins.witnessPolicy}; give it with --witness-policy`
      : `the lockfile pins ${registry} with the witness policy ${pins.witnessPolicy}, not ${witnessPolicy.digest}; ` +
          'if the policy changed on purpose, run toolseal pin again with it',
  );
}

/** The keys of `jwks` the pins name (the others cannot verify anything under `--locked`). */
export function selectPinnedKeys(jwks: Jwks | readonly JwksKey[], pins: RegistryKeyPins): Jwks {
  const pinned = new Set(pins.attestationKeys);
  return { keys: selectUsableKeys(jwks).jwks.keys.filter((key) => pinned.has(key.kid)) };
}

/** KEY_NOT_PINNED unless `logKey` is the pinned log key (a parsed verifier was pinned by whoever parsed it). */
export function checkPinnedLogKey(logKey: string | NoteVerifier, pins: RegistryKeyPins, registry: string): void {
  if (typeof logKey !== 'string' || logKey.trim() === pins.logKey) return;
  throw new ToolsealError(
    'KEY_NOT_PINNED',
    `${registry} now signs its log with a key the lockfile did not pin (pinned ${pins.logKey.split('+')[0]}); ` +
      'if the registry rotated its keys on purpose, run toolseal pin again',
  );
}

/** An attestation whose key the pinned set does not have, as KEY_NOT_PINNED. */
export function refuseUnpinnedKey(error: unknown, registry: string): unknown {
  if (!(error instanceof ToolsealError) || error.code !== 'UNKNOWN_KEY') return error;
  return new ToolsealError(
    'KEY_NOT_PINNED',
    `${registry}: the manifest is signed with a key the lockfile did not pin (${error.message}); ` +
      'if the registry rotated its keys on purpose, run toolseal pin again',
    { cause: error },
  );
}

// DSSE v1 (secure-systems-lab/dsse, envelope.md and protocol.md): the pre-authentication encoding and an envelope of
// an in-toto Statement with exactly one ECDSA P-256 signature (the Sigstore bundle v0.3 rule), keyid = the key hint.

import { verify, type KeyObject } from 'node:crypto';
import { decodeBase64Strict, encodeBase64 } from '../core/bytes.ts';
import { ToolsealError } from '../core/errors.ts';
import type { BundleSigningKey } from './p256-jwk.ts';
import { runSigningJob, type SigningJob } from './signing-job.ts';

/** in-toto attestation framework, envelope layer: the payloadType of a Statement. */
export const IN_TOTO_PAYLOAD_TYPE = 'application/vnd.in-toto+json';

/** A DSSE envelope as JSON (protocol buffers' JSON form: bytes are standard base64). */
export interface DsseEnvelope {
  payload: string;
  payloadType: string;
  signatures: [{ sig: string; keyid: string }];
}

const encoder = new TextEncoder();

/**
 * PAE(type, body) = "DSSEv1" SP LEN(type) SP type SP LEN(body) SP body, lengths in ASCII decimal bytes
 * (DSSE protocol.md "Signature definition"): what is signed, and what a hashedrekord v0.0.2 entry digests.
 */
export function encodePae(payloadType: string, payload: Uint8Array): Uint8Array {
  const type = encoder.encode(payloadType);
  const head = encoder.encode(`DSSEv1 ${type.byteLength} `);
  const middle = encoder.encode(` ${payload.byteLength} `);
  const out = new Uint8Array(head.byteLength + type.byteLength + middle.byteLength + payload.byteLength);
  out.set(head, 0);
  out.set(type, head.byteLength);
  out.set(middle, head.byteLength + type.byteLength);
  out.set(payload, head.byteLength + type.byteLength + middle.byteLength);
  return out;
}

/** Whether `signature` (DER) is a valid ECDSA P-256 SHA-256 signature of `message` by `publicKey`. */
export function verifyP256(message: Uint8Array, publicKey: KeyObject, signature: Uint8Array): boolean {
  try {
    return verify('sha256', message, publicKey, signature);
  } catch {
    return false;
  }
}

/** Sign `statement` (its exact bytes, e.g. the JCS statement) into a DSSE envelope with one signature. */
export function signDsseEnvelope(statement: Uint8Array, key: BundleSigningKey): DsseEnvelope {
  return runSigningJob(buildDsseSigningJob(statement, key));
}

/**
 * signDsseEnvelope as a SigningJob (signing-job.ts): PAE signed by ECDSA P-256 over SHA-256, DER-encoded (RFC 3279
 * §2.2.3), the form Sigstore verifiers read.
 */
export function buildDsseSigningJob(statement: Uint8Array, key: BundleSigningKey): SigningJob<DsseEnvelope> {
  return {
    algorithm: 'sha256',
    data: encodePae(IN_TOTO_PAYLOAD_TYPE, statement),
    key: key.privateKey,
    finish: (sig) => ({
      payload: encodeBase64(statement),
      payloadType: IN_TOTO_PAYLOAD_TYPE,
      signatures: [{ sig: encodeBase64(sig), keyid: key.kid }],
    }),
  };
}

/** An envelope read back: the payload bytes, the one signature, its keyid, and the PAE that signature covers. */
export interface ReadDsseEnvelope {
  payload: Uint8Array;
  payloadType: string;
  signature: Uint8Array;
  keyid: string;
  pae: Uint8Array;
}

/**
 * Read an envelope defensively (strict base64, exactly one signature with a keyid, the in-toto payload type);
 * SIGNATURE_INVALID when it is not one. Nothing is verified here.
 */
export function readDsseEnvelope(value: unknown): ReadDsseEnvelope {
  const bad = (why: string): never => {
    throw new ToolsealError('SIGNATURE_INVALID', `the DSSE envelope ${why}`);
  };
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return bad('is not an object');
  const { payload, payloadType, signatures } = value as Record<string, unknown>;
  if (payloadType !== IN_TOTO_PAYLOAD_TYPE) return bad(`payloadType is not ${IN_TOTO_PAYLOAD_TYPE}`);
  const bytes = typeof payload === 'string' ? decodeBase64Strict(payload) : undefined;
  if (bytes === undefined || bytes.byteLength === 0) return bad('payload is not base64');
  if (!Array.isArray(signatures) || signatures.length !== 1) return bad('does not have exactly one signature');
  const only = signatures[0] as Record<string, unknown> | null;
  if (typeof only !== 'object' || only === null) return bad('signature is not an object');
  const signature = typeof only['sig'] === 'string' ? decodeBase64Strict(only['sig']) : undefined;
  if (signature === undefined || signature.byteLength === 0) return bad('signature is not base64');
  if (typeof only['keyid'] !== 'string' || only['keyid'] === '') return bad('signature has no keyid');
  return {
    payload: bytes,
    payloadType,
    signature,
    keyid: only['keyid'],
    pae: encodePae(payloadType, bytes),
  };
}

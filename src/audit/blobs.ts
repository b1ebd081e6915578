// The manifest bytes behind each attestation (GET /v1/blobs/{digest}): they must hash to the attested in-toto
// DigestSet digest, be in JCS form (RFC 8785) and be the attested name@version of the attested size.

import type { RegistryClient } from '../client/registry-client.ts';
import { describeError } from '../core/errors.ts';
import { equalBytes } from '../core/bytes.ts';
import { computeDigest } from '../core/digest.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { canonicalizeToBytes } from '../pipeline/canonical.ts';
import { SIGNED_MANIFEST_PARSE_LIMITS } from '../pipeline/limits.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { blobPath } from '../protocol/routes.ts';
import type { AttestationFacts } from './entries.ts';
import { type AuditProblemCode, type AuditReport, addProblem, describeFetchFailure } from './report.ts';

export interface BlobFailure {
  code: AuditProblemCode;
  message: string;
}

/** What the bytes served for a digest say about themselves (or why they could not be had). */
export interface BlobFacts {
  failure?: BlobFailure;
  digest?: string;
  size?: number;
  subjectName?: string;
}

/** What the manifest bytes say about themselves: digest, size, name@version, canonical form. */
export function inspectBlob(bytes: Uint8Array, requested: string): BlobFacts {
  const digest = computeDigest(bytes);
  if (digest !== requested) return { digest, size: bytes.byteLength };
  const invalid = (message: string): BlobFacts => ({ digest, failure: { code: 'MANIFEST_INVALID', message } });
  let value: JsonValue;
  try {
    value = parseStrict(bytes, SIGNED_MANIFEST_PARSE_LIMITS).value;
  } catch (error) {
    return invalid(`manifest ${digest} is not strict JSON: ${describeError(error)}`);
  }
  if (!isJsonObject(value) || typeof value['name'] !== 'string' || typeof value['version'] !== 'string') {
    return invalid(`manifest ${digest} has no name and version`);
  }
  if (!equalBytes(canonicalizeToBytes(value), bytes)) return invalid(`manifest ${digest} is not in JCS canonical form`);
  return { digest, size: bytes.byteLength, subjectName: `${value['name']}@${value['version']}` };
}

/** How the served bytes differ from what the attestation says (empty when they agree). */
export function compareBlob(facts: BlobFacts | undefined, attestation: AttestationFacts): BlobFailure[] {
  if (facts === undefined) return [];
  if (facts.failure && facts.failure.code === 'FETCH_FAILED') return [facts.failure];
  if (facts.digest !== attestation.digest) {
    return [
      {
        code: 'DIGEST_MISMATCH',
        message: `the bytes served for ${attestation.subjectName} hash to ${facts.digest}, but the attestation covers ${attestation.digest}`,
      },
    ];
  }
  if (facts.failure) return [facts.failure];
  const failures: BlobFailure[] = [];
  if (facts.size !== attestation.size) {
    failures.push({
      code: 'MANIFEST_INVALID',
      message: `manifest ${attestation.digest} is ${facts.size} bytes but its attestation says ${attestation.size}`,
    });
  }
  if (facts.subjectName !== attestation.subjectName) {
    failures.push({
      code: 'SUBJECT_MISMATCH',
      message: `manifest ${attestation.digest} is ${facts.subjectName} but its attestation is for ${attestation.subjectName}`,
    });
  }
  return failures;
}

export interface ManifestChecker {
  /** Queue the check of an attestation's manifest bytes; resolves once it has started (at most `concurrency` run). */
  checkManifest(attestation: AttestationFacts, index: number): Promise<void>;
  /** Wait for every queued check. */
  settle(): Promise<void>;
}

/** Fetch each distinct digest once, `concurrency` at a time, and report how its bytes differ from each attestation. */
export function createManifestChecker(
  client: RegistryClient,
  report: AuditReport,
  concurrency: number,
): ManifestChecker {
  const blobs = new Map<string, Promise<BlobFacts>>();
  const pending = new Set<Promise<void>>();

  const fetchBlob = async (digest: string): Promise<BlobFacts> => {
    let bytes: Uint8Array;
    try {
      bytes = await client.getBytes(blobPath(digest));
    } catch (error) {
      return {
        failure: { code: 'FETCH_FAILED', message: `manifest bytes for ${digest}: ${describeFetchFailure(error)}` },
      };
    }
    report.blobs.checked++;
    return inspectBlob(bytes, digest);
  };

  const inspect = (digest: string): Promise<BlobFacts> => {
    let facts = blobs.get(digest);
    if (facts === undefined) {
      facts = fetchBlob(digest);
      blobs.set(digest, facts);
    }
    return facts;
  };

  return {
    async checkManifest(attestation, index) {
      while (pending.size >= concurrency) await Promise.race(pending);
      const task = inspect(attestation.digest)
        .then((facts) => {
          for (const failure of compareBlob(facts, attestation))
            addProblem(report, failure.code, failure.message, index);
        })
        .finally(() => pending.delete(task));
      pending.add(task);
    },
    async settle() {
      await Promise.all(pending);
    },
  };
}

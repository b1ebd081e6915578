// The shapes of the registry's answers to a publisher's writes (src/protocol/wire.ts: PublishResponse, YankResponse),
// checked member by member after the strict parse: an answer that is not exactly what was asked about is
// FETCH_FAILED, never believed.

import { isSha256Digest } from '../core/digest.ts';
import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { ROUTES } from '../protocol/routes.ts';
import type { InclusionProofDto, PublishResponse, YankResponse } from '../protocol/wire.ts';

/** A publish answer: the registry's PublishResponse, and whether it stored a new version (201) or had it (200). */
export type PublishAnswer = PublishResponse & { created: boolean };

function isIndex(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function malformed(path: string, what: string): ToolsealError {
  return new ToolsealError('FETCH_FAILED', `${path}: the registry's answer is not ${what}`);
}

function readInclusionProof(value: JsonValue | undefined): InclusionProofDto | undefined {
  if (!isJsonObject(value)) return undefined;
  const { index, size, hashes, checkpoint } = value;
  if (!isIndex(index) || !isIndex(size) || index >= size || typeof checkpoint !== 'string') return undefined;
  if (!Array.isArray(hashes) || !hashes.every((hash) => typeof hash === 'string')) return undefined;
  return { index, size, hashes: hashes as string[], checkpoint };
}

/** A 200 or 201 answer to POST /v1/manifests. */
export function readPublishAnswer(value: JsonValue, status: number): PublishAnswer {
  const path = ROUTES.manifests;
  if (!isJsonObject(value) || (status !== 200 && status !== 201)) throw malformed(path, 'a publish answer');
  const { name, version, digest, size, attestation, renamedTools, storedAt, logIndex, tlogProof, url } = value;
  const inclusionProof = readInclusionProof(value['inclusionProof']);
  const renamed = Array.isArray(renamedTools)
    ? renamedTools.map((item) =>
        isJsonObject(item) &&
        isIndex(item['index']) &&
        typeof item['from'] === 'string' &&
        typeof item['to'] === 'string'
          ? { index: item['index'], from: item['from'], to: item['to'] }
          : undefined,
      )
    : undefined;
  if (
    typeof name !== 'string' ||
    typeof version !== 'string' ||
    !isSha256Digest(digest) ||
    !isIndex(size) ||
    !isJsonObject(attestation) ||
    renamed === undefined ||
    renamed.some((item) => item === undefined) ||
    (value['status'] !== 'active' && value['status'] !== 'yanked') ||
    typeof storedAt !== 'string' ||
    !isIndex(logIndex) ||
    inclusionProof === undefined ||
    inclusionProof.index !== logIndex ||
    typeof tlogProof !== 'string' ||
    typeof url !== 'string' ||
    !url.startsWith('/')
  ) {
    throw malformed(path, 'a publish answer');
  }
  return {
    name,
    version,
    digest,
    size,
    attestation,
    renamedTools: renamed as PublishResponse['renamedTools'],
    status: value['status'],
    storedAt,
    logIndex,
    inclusionProof,
    tlogProof,
    url,
    created: status === 201,
  };
}

/** A 2xx answer to POST …/yank must be a YankResponse for exactly name@version, now yanked. */
export function readYankAnswer(value: JsonValue, name: string, version: string): YankResponse {
  const answer = isJsonObject(value) ? value : {};
  const { digest, yankReason, yankedAt, yankLogIndex, alreadyYanked, requestedReason } = answer;
  if (
    answer['name'] !== name ||
    answer['version'] !== version ||
    answer['status'] !== 'yanked' ||
    !isSha256Digest(digest) ||
    typeof yankReason !== 'string' ||
    typeof yankedAt !== 'string' ||
    !isIndex(yankLogIndex) ||
    (alreadyYanked !== undefined && typeof alreadyYanked !== 'boolean') ||
    (requestedReason !== undefined && typeof requestedReason !== 'string')
  ) {
    throw new ToolsealError('FETCH_FAILED', `the registry's answer is not a yank of ${name}@${version}`);
  }
  return {
    name,
    version,
    digest,
    status: 'yanked',
    yankReason,
    yankedAt,
    yankLogIndex,
    ...(alreadyYanked === undefined ? {} : { alreadyYanked }),
    ...(requestedReason === undefined ? {} : { requestedReason }),
  };
}

// Publisher-claim stage (issue 28 §3): a host requires the attestation's provenance to carry exact claims
// (`--expect-publisher-claim repository=acme/payments-mcp`). In-toto Statement v1: the predicate is read only after
// the statement's signature was verified; values compare exactly (same code units, no prefix, no case folding).

import { ToolsealError } from '../core/errors.ts';
import { isJsonObject, type JsonValue } from '../core/json.ts';
import { PROVENANCE_CLAIM_NAMES, type PublishProvenance, readPublishProvenance } from '../attest/provenance.ts';

/** What a host may require: the provenance claims, plus `issuer`, `subject` (OIDC) and `publisher` (token). */
export const PUBLISHER_CLAIM_NAMES = [...PROVENANCE_CLAIM_NAMES, 'issuer', 'subject', 'publisher', 'method'] as const;
export type PublisherClaimName = (typeof PUBLISHER_CLAIM_NAMES)[number];
export type PublisherClaimExpectation = Readonly<Partial<Record<PublisherClaimName, string>>>;

/** `NAME=VALUE` of `--expect-publisher-claim`, added to `into` (BAD_REQUEST for an unknown name or a repeat). */
export function parsePublisherClaimArgument(
  argument: string,
  into: PublisherClaimExpectation = {},
): PublisherClaimExpectation {
  const at = argument.indexOf('=');
  const name = argument.slice(0, Math.max(at, 0));
  if (at <= 0 || !(PUBLISHER_CLAIM_NAMES as readonly string[]).includes(name)) {
    throw new ToolsealError(
      'BAD_REQUEST',
      `--expect-publisher-claim takes NAME=VALUE with NAME one of ${PUBLISHER_CLAIM_NAMES.join(', ')}`,
    );
  }
  if (Object.hasOwn(into, name)) throw new ToolsealError('BAD_REQUEST', `--expect-publisher-claim ${name} given twice`);
  return { ...into, [name]: argument.slice(at + 1) };
}

/**
 * The provenance of a verified statement's predicate, when it carries every expected claim exactly.
 * PUBLISHER_MISMATCH when the predicate has no (well-formed) provenance or a claim is absent or differs.
 */
export function expectPublisherClaim(
  predicate: JsonValue | undefined,
  expected: PublisherClaimExpectation,
): PublishProvenance {
  const provenance = isJsonObject(predicate) ? readPublishProvenance(predicate.provenance) : undefined;
  if (provenance === undefined) {
    throw new ToolsealError('PUBLISHER_MISMATCH', 'the attestation does not say how the publish was authorised');
  }
  for (const [name, value] of Object.entries(expected)) {
    const actual = readClaim(provenance, name as PublisherClaimName);
    if (actual !== value) {
      throw new ToolsealError(
        'PUBLISHER_MISMATCH',
        actual === undefined
          ? `the attestation's provenance has no ${name}; ${name}=${value} was required`
          : `the attestation's provenance has ${name}=${actual}; ${name}=${value} was required`,
      );
    }
  }
  return provenance;
}

function readClaim(provenance: PublishProvenance, name: PublisherClaimName): string | undefined {
  if (name === 'method') return provenance.method;
  if (provenance.method === 'token') return name === 'publisher' ? provenance.publisher : undefined;
  if (name === 'issuer') return provenance.issuer;
  if (name === 'subject') return provenance.subject;
  if (name === 'publisher') return undefined;
  return provenance.claims[name];
}

// How a publish's provenance reaches the signed predicate (issue 28 §3; src/registry/trust-rules.ts): it travels with
// the publisher record, so it survives the sequencer's job frame (JSON through the database) like the thread hop.

import { describe, expect, it } from 'vitest';
import { computeSha256Hex, type Sha256Digest } from '../../src/pipeline/index.ts';
import { decodeLogJob, encodeLogJob, type PublishJob } from '../../src/registry/log-jobs.ts';
import { type AuthorisedPublisher, provenanceMemberOf } from '../../src/registry/trust-rules.ts';

const PUBLISHER = {
  id: 7,
  namespace: 'io.github.acme',
  tokenHash: 'f'.repeat(64),
  createdAt: '2026-01-02T03:04:05.678Z',
  revokedAt: null,
};
const OIDC: AuthorisedPublisher = {
  ...PUBLISHER,
  provenance: {
    method: 'oidc',
    issuer: 'https://token.actions.githubusercontent.com',
    subject: 'repo:acme/payments-mcp:ref:refs/tags/v1.0.0',
    claims: { repository: 'acme/payments-mcp', sha: '3f2a1b9c' },
  },
};

describe('provenance with the publisher', () => {
  it('is the predicate member of an authorised publisher, and none for a plain record', () => {
    expect(provenanceMemberOf(OIDC)).toEqual({ provenance: OIDC.provenance });
    expect(provenanceMemberOf(PUBLISHER)).toEqual({});
  });

  it("survives the sequencer's job frame", () => {
    const bytes = new Uint8Array(Buffer.from('{"name":"io.github.acme/widgets","tools":[],"version":"1.0.0"}'));
    const job: PublishJob = {
      kind: 'publish',
      publisher: OIDC,
      result: {
        name: 'io.github.acme/widgets',
        version: '1.0.0',
        canonicalBytes: bytes,
        digest: `sha256:${computeSha256Hex(bytes)}` as Sha256Digest,
        size: bytes.byteLength,
        renamedTools: [],
      } as unknown as PublishJob['result'],
    };
    const { kind, payload } = encodeLogJob(job);
    const decoded = decodeLogJob(kind, payload) as PublishJob;
    expect(provenanceMemberOf(decoded.publisher)).toEqual({ provenance: OIDC.provenance });
  });
});

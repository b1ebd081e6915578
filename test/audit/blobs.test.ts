// Manifest-bytes checks of the auditor (src/audit/blobs.ts): digest, JCS form, name@version and size against the
// attestation, and one fetch per distinct digest through the bounded registry client.

import { describe, expect, it } from 'vitest';
import { compareBlob, createManifestChecker, inspectBlob } from '../../src/audit/blobs.ts';
import { createReport } from '../../src/audit/report.ts';
import { RegistryClient } from '../../src/client/registry-client.ts';
import { computeDigest } from '../../src/core/digest.ts';

const encode = (text: string): Uint8Array => new TextEncoder().encode(text);
const manifest = encode('{"name":"acme/tool","version":"1.0.0"}');
const digest = computeDigest(manifest);

describe('inspectBlob and compareBlob', () => {
  it('accepts the attested bytes and names every way they can differ', () => {
    const facts = inspectBlob(manifest, digest);
    expect(facts).toEqual({ digest, size: manifest.byteLength, subjectName: 'acme/tool@1.0.0' });
    const attestation = { digest, subjectName: 'acme/tool@1.0.0', size: manifest.byteLength };
    expect(compareBlob(facts, attestation)).toEqual([]);
    expect(compareBlob(facts, { ...attestation, size: 1, subjectName: 'acme/tool@2.0.0' }).map((f) => f.code)).toEqual([
      'MANIFEST_INVALID',
      'SUBJECT_MISMATCH',
    ]);
    const other = encode('{"name":"acme/tool","version":"6.6.6"}');
    expect(compareBlob(inspectBlob(other, digest), attestation)).toEqual([
      {
        code: 'DIGEST_MISMATCH',
        message: `the bytes served for acme/tool@1.0.0 hash to ${computeDigest(other)}, but the attestation covers ${digest}`,
      },
    ]);
    const unsorted = encode('{"version":"1.0.0","name":"acme/tool"}');
    expect(inspectBlob(unsorted, computeDigest(unsorted)).failure?.message).toMatch(/JCS canonical form/);
    const nameless = encode('[]');
    expect(inspectBlob(nameless, computeDigest(nameless)).failure?.message).toMatch(/no name and version/);
    const broken = encode('{"name":');
    expect(inspectBlob(broken, computeDigest(broken)).failure?.message).toMatch(/not strict JSON: INVALID_JSON/);
  });
});

describe('createManifestChecker', () => {
  it('fetches each digest once, reports per entry, and reports a failed GET as FETCH_FAILED', async () => {
    const requested: string[] = [];
    const missing = computeDigest(encode('missing'));
    const fetchStub: typeof fetch = async (input) => {
      const path = new URL(String(input)).pathname;
      requested.push(path);
      return path === `/v1/blobs/${digest}`
        ? new Response(manifest)
        : Response.json({ code: 'INTEGRITY_ERROR', detail: 'bad bytes' }, { status: 500 });
    };
    const client = new RegistryClient('http://registry.test', { fetch: fetchStub });
    const report = createReport('http://registry.test', undefined);
    const checker = createManifestChecker(client, report, 1);
    const attestation = { digest, subjectName: 'acme/tool@1.0.0', size: manifest.byteLength };
    await checker.checkManifest(attestation, 1);
    await checker.checkManifest({ ...attestation, subjectName: 'acme/tool@9.9.9' }, 2);
    await checker.checkManifest({ digest: missing, subjectName: 'acme/gone@1.0.0', size: 1 }, 3);
    await checker.settle();
    expect(requested).toEqual([`/v1/blobs/${digest}`, `/v1/blobs/${missing}`]);
    expect(report.blobs.checked).toBe(1);
    expect(report.problems.map((p) => [p.index, p.code])).toEqual([
      [2, 'SUBJECT_MISMATCH'],
      [3, 'FETCH_FAILED'],
    ]);
    expect(report.problems[1]!.message).toBe(
      `manifest bytes for ${missing}: /v1/blobs/${missing}: HTTP 500 INTEGRITY_ERROR: bad bytes`,
    );
  });
});

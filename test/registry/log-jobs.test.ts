// The log-job frame and outcome codec (src/registry/log-jobs.ts, issue 16 §2): each kind round-trips to the exact
// bytes, the sequencer recomputes a publish's digest and size from the bytes, malformed frames are INTERNAL, and an
// outcome keeps a refusal's code, message and pointer while any other failure becomes a generic INTERNAL.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ToolsealError, isToolsealError } from '../../src/core/errors.ts';
import { computeSha256Hex, type Sha256Digest } from '../../src/pipeline/index.ts';
import {
  type ApprovalJob,
  decodeLogJob,
  decodeLogJobResult,
  describeJobFailure,
  encodeLogJob,
  encodeLogJobResult,
  type LogJob,
  type LogJobResult,
  type PublishJob,
  unwrapLogJobResult,
} from '../../src/registry/log-jobs.ts';
import type { PrincipalRecord, PublisherRecord } from '../../src/store/index.ts';

const PUBLISHER: PublisherRecord = {
  id: 7,
  namespace: 'io.github.acme',
  tokenHash: 'f'.repeat(64),
  createdAt: '2026-01-02T03:04:05.678Z',
  revokedAt: null,
};
const OPERATOR: PrincipalRecord = {
  id: 3,
  kind: 'operator',
  name: 'alice',
  tokenHash: 'e'.repeat(64),
  createdAt: '2026-01-02T03:04:05.678Z',
  revokedAt: null,
};
const ALL_BYTES = new Uint8Array(Array.from({ length: 256 }, (_, i) => i));
/** What a publish carries: canonical manifest bytes that declare the header's name@version. */
function manifestBytes(name = 'io.github.acme/widgets', version = '1.0.0', padding = ''): Uint8Array {
  return new Uint8Array(Buffer.from(JSON.stringify({ name, padding, tools: [], version }), 'utf8'));
}
const MANIFEST = manifestBytes();

function publishJob(bytes: Uint8Array, extra: Partial<PublishJob['result']> = {}): PublishJob {
  return {
    kind: 'publish',
    publisher: PUBLISHER,
    result: {
      name: 'io.github.acme/widgets',
      version: '1.0.0',
      canonicalBytes: bytes,
      digest: `sha256:${computeSha256Hex(bytes)}` as Sha256Digest,
      size: bytes.byteLength,
      renamedTools: [{ from: 'Cafe\u0301', to: 'Café' }] as unknown as PublishJob['result']['renamedTools'],
      ...extra,
    },
  };
}

/** A frame from its parts: a 4-byte big-endian header length, the header, the body. */
function frameOf(header: Uint8Array, body: Uint8Array, declaredLength = header.byteLength): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(declaredLength, 0);
  return Buffer.concat([length, header, body]);
}

function codeOf(work: () => unknown): string | undefined {
  try {
    work();
  } catch (error) {
    return isToolsealError(error) ? error.code : `not a ToolsealError: ${String(error)}`;
  }
  return undefined;
}

/** decode(encode(job)) is the job, and encoding it again gives the same bytes. */
function expectRoundTrip(job: LogJob): Uint8Array {
  const { kind, payload } = encodeLogJob(job);
  expect(kind).toBe(job.kind);
  const decoded = decodeLogJob(kind, payload);
  expect(decoded).toEqual(job);
  expect(Buffer.from(encodeLogJob(decoded).payload).equals(Buffer.from(payload))).toBe(true);
  return payload;
}

describe('the job frame', () => {
  it('lays a publish out as length, JSON header (no bytes, digest or size trusted), then the canonical bytes', () => {
    const job = publishJob(MANIFEST);
    const payload = Buffer.from(expectRoundTrip(job));
    const length = payload.readUInt32BE(0);
    const { canonicalBytes: _bytes, ...rest } = job.result;
    expect(payload.subarray(4, 4 + length).toString('utf8')).toBe(
      JSON.stringify({ publisher: PUBLISHER, result: rest }),
    );
    expect(payload.subarray(4 + length).equals(Buffer.from(MANIFEST))).toBe(true);
    expect(payload.byteLength).toBe(4 + length + MANIFEST.byteLength);
  });

  it('round-trips a yank (no body) and both approval kinds (the body exactly as received)', () => {
    const yank = expectRoundTrip({
      kind: 'yank',
      publisher: PUBLISHER,
      name: 'io.github.acme/widgets',
      version: '1.0.0-rc.1',
      reason: 'broken: "quoted"\u2028 and ✓',
    });
    expect(Buffer.from(yank).subarray(4 + Buffer.from(yank).readUInt32BE(0)).byteLength).toBe(0);
    for (const kind of ['approval-decision', 'approval-consumption'] as const) {
      const job: ApprovalJob = { kind, principal: OPERATOR, id: `apr_${'A'.repeat(22)}`, body: ALL_BYTES };
      const payload = Buffer.from(expectRoundTrip(job));
      expect(payload.subarray(4 + payload.readUInt32BE(0)).equals(Buffer.from(ALL_BYTES))).toBe(true);
    }
  });

  it('decodes a body view into a larger buffer as its own bytes only', () => {
    const inner = new Uint8Array(MANIFEST.byteLength + 10);
    inner.set(MANIFEST, 5);
    const { payload } = encodeLogJob(publishJob(inner.subarray(5, 5 + MANIFEST.byteLength)));
    const padded = new Uint8Array(payload.byteLength + 20);
    padded.set(payload, 10);
    const decoded = decodeLogJob('publish', padded.subarray(10, 10 + payload.byteLength)) as PublishJob;
    expect(Buffer.from(decoded.result.canonicalBytes).equals(Buffer.from(MANIFEST))).toBe(true);
    expect(decoded.result.size).toBe(MANIFEST.byteLength);
  });

  it('recomputes digest and size from the bytes: altered bytes are INTERNAL, a stated size is ignored', () => {
    const { payload } = encodeLogJob(publishJob(MANIFEST));
    const altered = Buffer.from(payload);
    const last = altered.byteLength - 1;
    altered.writeUInt8(altered.readUInt8(last) ^ 0x01, last);
    expect(codeOf(() => decodeLogJob('publish', altered))).toBe('INTERNAL');
    const shorter = Buffer.from(payload).subarray(0, payload.byteLength - 1);
    expect(codeOf(() => decodeLogJob('publish', shorter))).toBe('INTERNAL');
    // A header that states another digest for the same bytes is refused; one that states another size is overruled.
    const lying = encodeLogJob(publishJob(MANIFEST, { digest: `sha256:${'0'.repeat(64)}` as Sha256Digest }));
    expect(codeOf(() => decodeLogJob('publish', lying.payload))).toBe('INTERNAL');
    const sized = encodeLogJob(publishJob(MANIFEST, { size: 1 }));
    expect((decodeLogJob('publish', sized.payload) as PublishJob).result.size).toBe(MANIFEST.byteLength);
  });

  it('takes name and version from the bytes: a header naming another manifest, or bytes that are not JSON, are INTERNAL', () => {
    const renamed = encodeLogJob(publishJob(MANIFEST, { name: 'io.github.acme/other' }));
    expect(codeOf(() => decodeLogJob('publish', renamed.payload))).toBe('INTERNAL');
    const reversioned = encodeLogJob(publishJob(MANIFEST, { version: '1.0.1' }));
    expect(codeOf(() => decodeLogJob('publish', reversioned.payload))).toBe('INTERNAL');
    const notJson = encodeLogJob(publishJob(ALL_BYTES));
    expect(codeOf(() => decodeLogJob('publish', notJson.payload))).toBe('INTERNAL');
    const header = Buffer.from('{not json', 'utf8');
    expect(codeOf(() => decodeLogJob('approval-decision', frameOf(header, ALL_BYTES)))).toBe('INTERNAL');
  });

  it('refuses malformed frames as INTERNAL: shorter than a length, a header beyond the frame or over 64 KiB', () => {
    const header = Buffer.from(JSON.stringify({ principal: OPERATOR, id: 'x' }));
    for (const frame of [new Uint8Array(0), new Uint8Array(3), Buffer.from([0, 0, 0])]) {
      expect(codeOf(() => decodeLogJob('approval-decision', frame))).toBe('INTERNAL');
    }
    expect(codeOf(() => decodeLogJob('approval-decision', frameOf(header, new Uint8Array(0))))).toBeUndefined();
    expect(
      codeOf(() => decodeLogJob('approval-decision', frameOf(header, new Uint8Array(0), header.byteLength + 1))),
    ).toBe('INTERNAL');
    expect(codeOf(() => decodeLogJob('approval-decision', frameOf(header, new Uint8Array(0), 0xffffffff)))).toBe(
      'INTERNAL',
    );
    const huge = Buffer.from(JSON.stringify({ principal: OPERATOR, id: 'x'.repeat(64 * 1024) }));
    expect(codeOf(() => decodeLogJob('approval-decision', frameOf(huge, new Uint8Array(0))))).toBe('INTERNAL');
    // A header that is not JSON fails too; the sequencer records that failure as INTERNAL with its generic message.
    let thrown: unknown;
    try {
      decodeLogJob('yank', frameOf(Buffer.from('{not json'), new Uint8Array(0)));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeDefined();
    expect(describeJobFailure(thrown)).toMatchObject({ ok: false, code: 'INTERNAL' });
  });

  it('round-trips any body bytes and any header strings exactly (property)', () => {
    const text = fc.string({ unit: 'binary', maxLength: 40 });
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 2048 }),
        text,
        text,
        fc.constantFrom<ApprovalJob['kind'] | 'publish'>('approval-decision', 'approval-consumption', 'publish'),
        (body, first, second, kind) => {
          // A publish's bytes are a manifest declaring its header's name@version (checked on decode); any other job
          // carries any bytes.
          const job: LogJob =
            kind === 'publish'
              ? publishJob(manifestBytes(first, second, Buffer.from(body).toString('latin1')), {
                  name: first,
                  version: second,
                  renamedTools: [],
                })
              : ({ kind, principal: { ...OPERATOR, name: first }, id: second, body } satisfies ApprovalJob);
          const payload = Buffer.from(encodeLogJob(job).payload);
          const length = payload.readUInt32BE(0);
          const carried = job.kind === 'publish' ? job.result.canonicalBytes : body;
          expect(payload.subarray(4 + length).equals(Buffer.from(carried))).toBe(true);
          expectRoundTrip(job);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('the job outcome', () => {
  it('round-trips each kind of value and a refusal with its pointer', () => {
    const results: LogJobResult[] = [
      {
        ok: true,
        value: {
          created: true,
          name: 'io.github.acme/widgets',
          version: '1.0.0',
          inclusion: {
            index: 3,
            size: 4,
            hashes: ['AAAA', 'BBBB'],
            checkpoint: 'toolseal.local/log/x\n4\nroot\n\n— sig\n',
          },
        },
      },
      { ok: true, value: { alreadyYanked: false } },
      { ok: true, value: { id: 'apr_x', digest: 'sha256:00', status: 'approved', logIndex: 4 } },
      { ok: false, code: 'VERSION_EXISTS', message: 'io.github.acme/widgets@1.0.0 exists', pointer: '/version' },
      { ok: false, code: 'APPROVAL_DECIDED', message: 'already decided' },
    ];
    for (const result of results) {
      const bytes = encodeLogJobResult(result);
      expect(Buffer.from(bytes).toString('utf8')).toBe(JSON.stringify(result));
      expect(decodeLogJobResult(bytes)).toEqual(result);
    }
  });

  it('keeps the code, message and pointer of a ToolsealError, thrown again as the same ToolsealError', () => {
    const refusal = new ToolsealError('VERSION_EXISTS', 'io.github.acme/widgets@1.0.0 has other bytes', {
      pointer: '/version',
    });
    const described = describeJobFailure(refusal);
    expect(described).toEqual({
      ok: false,
      code: 'VERSION_EXISTS',
      message: 'io.github.acme/widgets@1.0.0 has other bytes',
      pointer: '/version',
    });
    expect(Object.keys(describeJobFailure(new ToolsealError('NOT_FOUND', 'no such approval')))).not.toContain(
      'pointer',
    );
    const decoded = decodeLogJobResult(encodeLogJobResult(described));
    let thrown: unknown;
    try {
      unwrapLogJobResult(decoded);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ToolsealError);
    expect(thrown).toMatchObject({
      code: 'VERSION_EXISTS',
      message: 'io.github.acme/widgets@1.0.0 has other bytes',
      pointer: '/version',
    });
    expect(unwrapLogJobResult({ ok: true, value: { alreadyYanked: true } })).toEqual({ alreadyYanked: true });
  });

  it('turns any other error into INTERNAL with a generic message: no internal text leaks into the outcome', () => {
    const secret = 'connection to postgres://admin:hunter2@db.internal failed at /srv/toolseal/src/x.ts:12';
    for (const error of [
      new Error(secret),
      new TypeError(secret),
      secret,
      { code: 'VERSION_EXISTS', message: secret },
    ]) {
      const described = describeJobFailure(error);
      expect(described).toEqual({ ok: false, code: 'INTERNAL', message: 'the sequencer failed on this write' });
      expect(Buffer.from(encodeLogJobResult(described)).toString('utf8')).not.toContain('hunter2');
    }
  });

  it('reads a stored refusal with a code this version does not know as INTERNAL', () => {
    const stored = Buffer.from(JSON.stringify({ ok: false, code: 'NOT_A_CODE', message: 'm', pointer: '/p' }));
    expect(decodeLogJobResult(stored)).toEqual({ ok: false, code: 'INTERNAL', message: 'm' });
    expect(codeOf(() => unwrapLogJobResult(decodeLogJobResult(stored)))).toBe('INTERNAL');
  });
});

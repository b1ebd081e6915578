// Reading GET /v1/attestations/{digest} (BindingsResponse) into bindings, and selecting one.

import { describe, expect, it } from 'vitest';
import { canonicalizeToBytes, type JsonObject, type JsonValue } from '../../src/pipeline/index.ts';
import type { BindingDto, BindingsResponse } from '../../src/protocol/wire.ts';
import { type Binding, findBinding, parseBindings, selectBinding } from '../../src/verify/bindings.ts';
import { throwsWithCode } from './helpers.ts';

const DIGEST = `sha256:${'a'.repeat(64)}`;
const jws: JsonObject = { protected: 'p', payload: 'q', signature: 's' };
const proof = { index: 4, size: 9, hashes: ['AAAA'], checkpoint: 'origin\n9\nroot\n' };

function dto(name: string, version: string): BindingDto {
  return {
    name,
    version,
    publisher: 'io.github.acme',
    storedAt: '2025-01-01T00:00:00.000Z',
    kid: 'k',
    status: 'active',
    logIndex: 4,
    attestation: jws,
    inclusionProof: proof,
    tlogProof: '',
    bundle: `/v1/manifests/${name}/${version}/bundle`,
  };
}

function response(...bindings: unknown[]): JsonValue {
  return { digest: DIGEST, bindings } as unknown as JsonValue;
}

describe('parseBindings', () => {
  it('reads each binding, the attestation as its JCS bytes', () => {
    const served: BindingsResponse = { digest: DIGEST, bindings: [dto('io.github.acme/a', '1.0.0')] };
    expect(parseBindings(served as unknown as JsonValue)).toEqual([
      {
        name: 'io.github.acme/a',
        version: '1.0.0',
        status: 'active',
        logIndex: 4,
        attestation: canonicalizeToBytes(jws),
        inclusion: proof,
      },
    ]);
  });

  it('anything but {"bindings": [...]} is FETCH_FAILED', () => {
    for (const value of [null, [], 'x', {}, { bindings: {} }] as JsonValue[]) {
      throwsWithCode(() => parseBindings(value), 'FETCH_FAILED');
    }
  });

  it('skips items without a string name and version; leaves members of the wrong type undefined', () => {
    const { size: _size, ...unsized } = proof;
    const bindings = parseBindings(
      response(
        null,
        ['x'],
        { ...dto('io.github.acme/a', '1.0.0'), version: 1 },
        {
          name: 'io.github.acme/b',
          version: '2.0.0',
          status: 1,
          logIndex: '4',
          attestation: 'jws',
          inclusionProof: [],
        },
        { ...dto('io.github.acme/c', '3.0.0'), inclusionProof: { ...proof, hashes: [1] } },
        { ...dto('io.github.acme/d', '4.0.0'), inclusionProof: unsized },
      ),
    );
    expect(bindings.map((b) => b.name)).toEqual(['io.github.acme/b', 'io.github.acme/c', 'io.github.acme/d']);
    expect(bindings[0]).toEqual({
      name: 'io.github.acme/b',
      version: '2.0.0',
      status: undefined,
      logIndex: undefined,
      attestation: undefined,
      inclusion: undefined,
    });
    expect(bindings[1]!.inclusion).toBeUndefined();
    expect(bindings[2]!.inclusion).toEqual(unsized);
  });
});

describe('findBinding and selectBinding', () => {
  const bindings: Binding[] = parseBindings(
    response(dto('io.github.acme/a', '1.0.0'), dto('io.github.acme/a', '1.1.0'), dto('io.github.acme/b', '1.0.0')),
  );

  it('findBinding is the exact name@version', () => {
    expect(findBinding(bindings, 'io.github.acme/a', '1.1.0')?.version).toBe('1.1.0');
    expect(findBinding(bindings, 'io.github.acme/a', '2.0.0')).toBeUndefined();
  });

  it('selects the only binding, or the one a name or name@version selects', () => {
    expect(selectBinding(bindings.slice(2), DIGEST, undefined).name).toBe('io.github.acme/b');
    expect(selectBinding(bindings, DIGEST, 'io.github.acme/b').version).toBe('1.0.0');
    expect(selectBinding(bindings, DIGEST, 'io.github.acme/a@1.1.0').version).toBe('1.1.0');
  });

  it('none is NOT_FOUND; several is BAD_REQUEST listing them', () => {
    expect(throwsWithCode(() => selectBinding([], DIGEST, undefined), 'NOT_FOUND').message).toBe(
      `no attestation covers ${DIGEST}`,
    );
    expect(throwsWithCode(() => selectBinding(bindings, DIGEST, 'io.github.acme/c'), 'NOT_FOUND').message).toBe(
      `no attestation binds ${DIGEST} to io.github.acme/c`,
    );
    const several = throwsWithCode(() => selectBinding(bindings, DIGEST, 'io.github.acme/a'), 'BAD_REQUEST');
    expect(several.message).toContain('(io.github.acme/a@1.0.0, io.github.acme/a@1.1.0)');
    throwsWithCode(() => selectBinding(bindings, DIGEST, undefined), 'BAD_REQUEST');
  });
});

// C2SP tlog-cosignature: the spec's example (key ID, timestamp, exact signed message), vkeys of type 0x04, sign and
// verify, future timestamps, foreign keys; fast-check: a cosignature verifies only for the exact note text it signed.

import { createHash, sign } from 'node:crypto';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';
import {
  appendSignatureLines,
  checkCosignatures,
  computeCosignerKeyId,
  computeKeyId,
  cosignerKeyOf,
  decodeTimestampedSignature,
  exportEd25519PublicKey,
  formatCheckpoint,
  formatCosignedMessage,
  formatCosignerVkey,
  parseCosignerVkey,
  parseNote,
  signCosignature,
  signNote,
} from '../../src/log/index.ts';
import { codeOf } from './helpers.ts';

const example = JSON.parse(
  readFileSync(new URL('../vectors/witness/cosignature-example.json', import.meta.url), 'utf8'),
) as { signedCheckpoint: string; cosigner: string; timestamp: number; signedMessage: string };

function newCosigner(name = 'witness.example/w1') {
  const { privateKey } = generateEd25519KeyPair();
  return { name, privateKey };
}

const body = formatCheckpoint({ origin: 'example.com/log', size: 5, rootHash: new Uint8Array(32).fill(7) });

describe('the tlog-cosignature example', () => {
  it('decodes to the timestamp of the example signed message, and builds that message byte for byte', () => {
    const { body: noteText, signatures } = parseNote(example.signedCheckpoint);
    const line = signatures.find((s) => s.name === example.cosigner);
    expect(line).toBeDefined();
    const decoded = decodeTimestampedSignature(line!.signature);
    expect(decoded?.timestamp).toBe(BigInt(example.timestamp));
    expect(formatCosignedMessage(noteText, example.timestamp)).toBe(example.signedMessage);
  });
});

describe('cosigner keys (type 0x04)', () => {
  it('computes the key ID as SHA-256(name || 0x0A || 0x04 || key)[:4], distinct from the note key ID', () => {
    const signer = newCosigner();
    const raw = exportEd25519PublicKey(signer.privateKey);
    const expected = createHash('sha256')
      .update(Buffer.concat([Buffer.from(`${signer.name}\n`), Buffer.from([0x04]), raw]))
      .digest()
      .readUInt32BE(0);
    expect(computeCosignerKeyId(signer.name, raw)).toBe(expected);
    expect(computeCosignerKeyId(signer.name, raw)).not.toBe(computeKeyId(signer.name, raw));
  });

  it('round-trips a vkey and refuses a note key (0x01), a wrong key ID and a bad name', () => {
    const signer = newCosigner();
    const vkey = formatCosignerVkey(signer.name, signer.privateKey);
    const key = parseCosignerVkey(vkey);
    expect(key).toEqual(cosignerKeyOf(signer));
    expect(Buffer.from(vkey.split('+')[2]!, 'base64')[0]).toBe(0x04);
    const [name, id, material] = vkey.split('+') as [string, string, string];
    const typed = Buffer.from(material, 'base64');
    typed[0] = 0x01;
    expect(codeOf(() => parseCosignerVkey(`${name}+${id}+${typed.toString('base64')}`))).toBe('BAD_REQUEST');
    const otherId = ((Number.parseInt(id, 16) + 1) >>> 0).toString(16).padStart(8, '0');
    expect(codeOf(() => parseCosignerVkey(`${name}+${otherId}+${material}`))).toBe('BAD_REQUEST');
    expect(codeOf(() => parseCosignerVkey(`bad name+${id}+${material}`))).toBe('BAD_REQUEST');
  });
});

describe('sign and check', () => {
  it('a cosignature line carries key ID, big-endian timestamp and a signature over the v1 message', () => {
    const signer = newCosigner();
    const line = signCosignature(body, signer, 1_700_000_000);
    const note = `${body}\n${line}`;
    const [parsed] = parseNote(note).signatures;
    expect(parsed!.keyId).toBe(cosignerKeyOf(signer).keyId);
    const blob = decodeTimestampedSignature(parsed!.signature)!;
    expect(blob.timestamp).toBe(1_700_000_000n);
    const expected = sign(null, Buffer.from(formatCosignedMessage(body, 1_700_000_000)), signer.privateKey);
    expect(Buffer.from(blob.signature).equals(expected)).toBe(true);
    expect(checkCosignatures(note, [cosignerKeyOf(signer)], 1_700_000_000)).toEqual([
      { name: signer.name, keyId: cosignerKeyOf(signer).keyId, timestamp: 1_700_000_000, status: 'verified' },
    ]);
  });

  it('marks a timestamp after now as future, a tampered body as invalid, and ignores unknown keys', () => {
    const signer = newCosigner();
    const other = newCosigner('witness.example/w2');
    const log = { name: 'example.com/log', privateKey: generateEd25519KeyPair().privateKey };
    const signed = signNote(body, log);
    const note = appendSignatureLines(signed, [
      signCosignature(body, signer, 2000),
      signCosignature(body, other, 1000),
    ]);
    expect(checkCosignatures(note, [cosignerKeyOf(signer)], 1999).map((c) => c.status)).toEqual(['future']);
    expect(checkCosignatures(note, [cosignerKeyOf(signer)], 2000).map((c) => c.status)).toEqual(['verified']);
    const otherBody = formatCheckpoint({ origin: 'example.com/log', size: 6, rootHash: new Uint8Array(32).fill(7) });
    const moved = `${otherBody}\n${signCosignature(body, signer, 1000)}`;
    expect(checkCosignatures(moved, [cosignerKeyOf(signer)], 5000).map((c) => c.status)).toEqual(['invalid']);
    // A note-type (0x01) signature by the same key and name has another key ID: not a cosignature, ignored.
    expect(checkCosignatures(signNote(body, signer), [cosignerKeyOf(signer)], 5000)).toEqual([]);
  });

  it('appendSignatureLines adds a line once', () => {
    const signer = newCosigner();
    const log = { name: 'example.com/log', privateKey: generateEd25519KeyPair().privateKey };
    const line = signCosignature(body, signer, 1000);
    const once = appendSignatureLines(signNote(body, log), [line]);
    expect(appendSignatureLines(once, [line])).toBe(once);
    expect(parseNote(once).signatures).toHaveLength(2);
  });

  it('property: a cosignature verifies for the note text it signed and for no other', () => {
    const signer = newCosigner();
    const key = cosignerKeyOf(signer);
    fc.assert(
      fc.property(
        fc.nat({ max: 1_000_000 }),
        fc.nat({ max: 1_000_000 }),
        fc.uint8Array({ minLength: 32, maxLength: 32 }),
        fc.nat({ max: 2 ** 40 }),
        (sizeA, sizeB, root, timestamp) => {
          const a = formatCheckpoint({ origin: 'o.example/log', size: sizeA, rootHash: root });
          const b = formatCheckpoint({ origin: 'o.example/log', size: sizeB, rootHash: root });
          const line = signCosignature(a, signer, timestamp);
          expect(checkCosignatures(`${a}\n${line}`, [key], timestamp)[0]!.status).toBe('verified');
          expect(checkCosignatures(`${b}\n${line}`, [key], timestamp)[0]!.status).toBe(
            sizeA === sizeB ? 'verified' : 'invalid',
          );
        },
      ),
      { numRuns: 60 },
    );
  });
});

// C2SP signed-note: Go sumdb/note interoperability, key IDs from first principles, sign/verify, malformed notes.

import { createPrivateKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  computeKeyId,
  exportEd25519PublicKey,
  formatVerifierString,
  isValidKeyName,
  parseNote,
  parseVerifierString,
  signNote,
  verifyNote,
} from '../../src/log/index.ts';
import { codeOf, sha256 } from './helpers.ts';
import { generateEd25519KeyPair } from '../../src/core/ed25519-keys.ts';

// golang.org/x/mod/sumdb/note example and tests (note.go package doc, note_test.go).
const GO_SIGNER_KEY = 'PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz';
const GO_VERIFIER_KEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const GO_TEXT = "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const GO_NOTE =
  GO_TEXT +
  '\n\u2014 PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n';

/** Ed25519 private key from a 32-byte seed (RFC 8410 PKCS#8 wrapping). */
function privateKeyFromSeed(seed: Uint8Array): KeyObject {
  const prefix = Buffer.from('302e020100300506032b657004220420', 'hex');
  return createPrivateKey({ key: Buffer.concat([prefix, seed]), format: 'der', type: 'pkcs8' });
}

function goSigner(): { name: string; privateKey: KeyObject } {
  // PRIVATE+KEY+<name>+<hash>+<base64(0x01 || seed)>; the base64 itself may contain '+'.
  const parts = GO_SIGNER_KEY.split('+');
  const typedSeed = Buffer.from(parts.slice(4).join('+'), 'base64');
  expect(typedSeed[0]).toBe(0x01);
  return { name: parts[2]!, privateKey: privateKeyFromSeed(typedSeed.subarray(1)) };
}

function newSigner(name: string): { name: string; privateKey: KeyObject; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateEd25519KeyPair();
  return { name, privateKey, publicKey };
}

describe('Go sumdb/note interoperability', () => {
  it('reproduces the verifier string of the Go key', () => {
    const signer = goSigner();
    expect(formatVerifierString(signer.name, signer.privateKey)).toBe(GO_VERIFIER_KEY);
  });

  it('signs the Go example note byte for byte (Ed25519 is deterministic)', () => {
    expect(signNote(GO_TEXT, goSigner())).toBe(GO_NOTE);
  });

  it('verifies the Go example note with the Go verifier string', () => {
    expect(verifyNote(GO_NOTE, GO_VERIFIER_KEY)).toEqual({
      body: GO_TEXT,
      verifiedBy: [{ name: 'PeterNeumann', keyId: 0xc74f20a3 }],
    });
  });

  it('parses the Go verifier string', () => {
    const verifier = parseVerifierString(GO_VERIFIER_KEY);
    expect(verifier.name).toBe('PeterNeumann');
    expect(verifier.keyId).toBe(0xc74f20a3);
    expect(formatVerifierString(verifier.name, verifier.publicKey)).toBe(GO_VERIFIER_KEY);
  });
});

describe('key ID and verifier string from first principles', () => {
  it('key ID = SHA-256(name || 0x0A || 0x01 || public key)[:4], verifier = name+hex8+base64(0x01 || key)', () => {
    fc.assert(
      fc.property(fc.constantFrom('example.com/log', 'toolseal.dev/registry', 'Ünïcødé/名前', 'a'), (name) => {
        const { publicKey } = newSigner(name);
        const raw = exportEd25519PublicKey(publicKey);
        expect(raw).toHaveLength(32);
        const digest = sha256(new TextEncoder().encode(name), new Uint8Array([0x0a, 0x01]), raw);
        const want = Buffer.from(digest.subarray(0, 4)).readUInt32BE(0);
        expect(computeKeyId(name, publicKey)).toBe(want);
        expect(computeKeyId(name, raw)).toBe(want);
        const typed = Buffer.concat([Buffer.from([0x01]), raw]).toString('base64');
        expect(formatVerifierString(name, publicKey)).toBe(
          `${name}+${Buffer.from(digest.subarray(0, 4)).toString('hex')}+${typed}`,
        );
      }),
      { numRuns: 20 },
    );
  });

  it('the signature line starts with the 4-byte key ID', () => {
    const signer = newSigner('example.com/log');
    const note = signNote('hello\n', signer);
    const [signature] = parseNote(note).signatures;
    expect(signature?.keyId).toBe(computeKeyId(signer.name, signer.publicKey));
    expect(signature?.signature).toHaveLength(64);
  });
});

describe('sign and verify', () => {
  const bodyArb = fc
    .array(
      fc.string({ unit: 'grapheme', maxLength: 20 }).filter((line) => !/[\u0000-\u001f]/.test(line)),
      { minLength: 1, maxLength: 5 },
    )
    .map((lines) => lines.map((line) => `${line}\n`).join(''));

  it('round-trips any valid body', () => {
    const signer = newSigner('example.com/log');
    const verifier = formatVerifierString(signer.name, signer.publicKey);
    fc.assert(
      fc.property(bodyArb, (body) => {
        const note = signNote(body, signer);
        expect(verifyNote(note, verifier).body).toBe(body);
        expect(verifyNote(Buffer.from(note, 'utf8'), verifier).body).toBe(body);
      }),
      { numRuns: 100 },
    );
  });

  it('a modified body fails', () => {
    const signer = newSigner('example.com/log');
    const verifier = formatVerifierString(signer.name, signer.publicKey);
    const note = signNote('example.com/log\n5\nAAAA\n', signer);
    expect(codeOf(() => verifyNote(note.replace('\n5\n', '\n6\n'), verifier))).toBe('SIGNATURE_INVALID');
    expect(codeOf(() => verifyNote(GO_NOTE.replace('cryptography', 'cryptographY'), GO_VERIFIER_KEY))).toBe(
      'SIGNATURE_INVALID',
    );
  });

  it('a signature by another key is not accepted', () => {
    const trusted = newSigner('example.com/log');
    const other = newSigner('example.com/log');
    const verifier = formatVerifierString(trusted.name, trusted.publicKey);
    // Same name, different key: a different key ID, so an unknown signature, and no trusted one.
    expect(codeOf(() => verifyNote(signNote('hello\n', other), verifier))).toBe('UNKNOWN_KEY');
    // Another key's signature relabelled with the trusted key ID must fail verification.
    const forged = Buffer.alloc(68);
    forged.writeUInt32BE(computeKeyId(trusted.name, trusted.publicKey), 0);
    forged.set(sign(null, Buffer.from('hello\n'), other.privateKey), 4);
    expect(codeOf(() => verifyNote(`hello\n\n\u2014 example.com/log ${forged.toString('base64')}\n`, verifier))).toBe(
      'SIGNATURE_INVALID',
    );
  });

  it('ignores unknown signatures and needs one trusted signature', () => {
    const log = newSigner('example.com/log');
    const witness = newSigner('witness.example');
    const note = signNote('hello\n', [witness, log]);
    const logKey = formatVerifierString(log.name, log.publicKey);
    const witnessKey = formatVerifierString(witness.name, witness.publicKey);
    expect(verifyNote(note, logKey).verifiedBy).toEqual([
      { name: log.name, keyId: computeKeyId(log.name, log.publicKey) },
    ]);
    expect(verifyNote(note, [logKey, witnessKey]).verifiedBy).toHaveLength(2);
    expect(codeOf(() => verifyNote(note, formatVerifierString('other.example', newSigner('x').publicKey)))).toBe(
      'UNKNOWN_KEY',
    );
    expect(codeOf(() => verifyNote(note, []))).toBe('UNKNOWN_KEY');
  });

  it('the text may contain empty lines: the last blank line separates the signatures', () => {
    const signer = newSigner('example.com/log');
    const body = 'line one\n\nline three\n';
    expect(verifyNote(signNote(body, signer), formatVerifierString(signer.name, signer.publicKey)).body).toBe(body);
  });

  it('accepts 16 signatures and refuses more than 100 lines', () => {
    const signers = Array.from({ length: 16 }, (_, i) => newSigner(`w${i}.example`));
    const note = signNote('hello\n', signers);
    expect(verifyNote(note, formatVerifierString(signers[7]!.name, signers[7]!.publicKey)).body).toBe('hello\n');
    const line = note.split('\n\n')[1]!.split('\n')[0]!;
    const tooMany = `hello\n\n${`${line}\n`.repeat(101)}`;
    expect(codeOf(() => parseNote(tooMany))).toBe('PROOF_INVALID');
  });
});

describe('malformed notes and keys', () => {
  const signer = newSigner('example.com/log');
  const verifier = formatVerifierString(signer.name, signer.publicKey);
  const note = signNote('hello\n', signer);

  it.each([
    ['no blank line', note.replace('\n\n', '\n')],
    ['no final newline', note.slice(0, -1)],
    ['a hyphen instead of an em dash', note.replace('\u2014', '-')],
    ['a control character', note.replace('hello', 'hel\tlo')],
    ['a carriage return', note.replace('hello\n', 'hello\r\n')],
    ['garbage base64', note.replace(/ [A-Za-z0-9+/=]+\n$/, ' !!!!\n')],
    ['a too-short signature', note.replace(/ [A-Za-z0-9+/=]+\n$/, ' AAAA\n')],
    ['a key name with a plus', note.replace('example.com/log', 'example.com+log')],
    ['an empty signature block', 'hello\n\n'],
    ['a lone surrogate', note.replace('hello', 'hel\uD800lo')],
    ['a lone low surrogate', note.replace('hello', 'hel\uDC00lo')],
    ['a reversed pair', note.replace('hello', 'hel\uDE00\uD83Dlo')],
    ['a lone surrogate in the signature block', `${note}\u2014 x\uD800 AAAAAAAA\n`],
  ])('refuses %s', (_, bad) => {
    expect(codeOf(() => verifyNote(bad, verifier))).toBe('PROOF_INVALID');
  });

  it('accepts a surrogate pair (text beyond U+FFFF) in the note text', () => {
    const astral = signNote('hello \ud83d\ude00\n', signer);
    expect(verifyNote(astral, verifier).body).toBe('hello \ud83d\ude00\n');
  });

  it('refuses bytes that are not UTF-8', () => {
    const bytes = Buffer.concat([Buffer.from([0xff]), Buffer.from(note)]);
    expect(codeOf(() => verifyNote(bytes, verifier))).toBe('PROOF_INVALID');
  });

  it('key names follow the spec', () => {
    expect(isValidKeyName('example.com/log')).toBe(true);
    for (const bad of ['', 'a b', 'a+b', 'a\tb', 'a\u00a0b', 'a\u2003b', 'a\u0085b'])
      expect(isValidKeyName(bad)).toBe(false);
  });

  it('signNote refuses bad bodies, names and keys', () => {
    expect(codeOf(() => signNote('no newline', signer))).toBe('BAD_REQUEST');
    expect(codeOf(() => signNote('', signer))).toBe('BAD_REQUEST');
    expect(codeOf(() => signNote('tab\there\n', signer))).toBe('BAD_REQUEST');
    expect(codeOf(() => signNote('ok\n', { ...signer, name: 'has space' }))).toBe('BAD_REQUEST');
    expect(codeOf(() => signNote('ok\n', { ...signer, name: 'has+plus' }))).toBe('BAD_REQUEST');
    expect(
      codeOf(() =>
        signNote('ok\n', { name: 'x', privateKey: generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey }),
      ),
    ).toBe('BAD_REQUEST');
    expect(codeOf(() => signNote('ok\n', { name: 'x', privateKey: signer.publicKey }))).toBe('BAD_REQUEST');
    expect(codeOf(() => signNote('ok\n', []))).toBe('BAD_REQUEST');
  });

  it('parseVerifierString refuses manglings of a valid key', () => {
    const bad = [
      GO_VERIFIER_KEY.replace('c74f20a3', 'c74f20a4'),
      GO_VERIFIER_KEY.replace('c74f20a3', 'c74f20a'),
      GO_VERIFIER_KEY.replace('PeterNeumann', 'PeterNeuman'),
      GO_VERIFIER_KEY.replace('+ARpc', '+AhRpc'),
      GO_VERIFIER_KEY.replace('+ARpc', '+Apc'),
      GO_VERIFIER_KEY.slice(0, -1),
      GO_VERIFIER_KEY.replace('PeterNeumann', 'Peter Neumann'),
      'PeterNeumann+c74f20a3',
      '',
    ];
    for (const key of bad) expect(codeOf(() => parseVerifierString(key))).toBe('BAD_REQUEST');
    expect(parseVerifierString(GO_VERIFIER_KEY.replace('c74f20a3', 'C74F20A3')).keyId).toBe(0xc74f20a3);
  });
});

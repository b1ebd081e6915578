// A fresh Ed25519 key pair (RFC 8032) whose KeyObjects share nothing with node:crypto's key-generation job.
//
// Why: on Node 20, `generateKeyPairSync('ed25519')` returns KeyObjects that share one native lock with the generation
// job. When the garbage collector frees that job while `key.export({ format: 'jwk' })` holds the lock (the export
// allocates a string, which can start a collection), the thread waits on itself forever (seen here: a vitest worker
// stuck in ~KeyGenJob under KeyObjectHandle::ExportJWK). Keys re-created from their DER encoding have locks of their own.

import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from 'node:crypto';

export function generateEd25519KeyPair(): { privateKey: KeyObject; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519', {
    privateKeyEncoding: { type: 'pkcs8', format: 'der' },
    publicKeyEncoding: { type: 'spki', format: 'der' },
  });
  return {
    privateKey: createPrivateKey({ key: privateKey, format: 'der', type: 'pkcs8' }),
    publicKey: createPublicKey({ key: publicKey, format: 'der', type: 'spki' }),
  };
}

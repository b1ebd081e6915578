// One signature and what is built from it (issue 24 §4): the bytes to sign, the key, and how the result is assembled,
// so a caller signs on its own thread (runSigningJob) or in libuv's thread pool (runSigningJobOffThread: node:crypto
// `sign` with a callback runs there), and the registry's event loop keeps serving reads while a batch signs.

import { type KeyObject, sign } from 'node:crypto';

export interface SigningJob<T> {
  /** node:crypto's digest name (`sha256` for ECDSA P-256), or null for Ed25519 (RFC 8032: no prehash). */
  algorithm: 'sha256' | null;
  data: Uint8Array;
  key: KeyObject;
  /** What the signature becomes (a JWS, an envelope, a promise). */
  finish(signature: Uint8Array): T;
}

/** Sign now, on this thread. */
export function runSigningJob<T>(job: SigningJob<T>): T {
  return job.finish(new Uint8Array(sign(job.algorithm, job.data, job.key)));
}

/** Sign in libuv's thread pool; the result is assembled back on this thread. */
export function runSigningJobOffThread<T>(job: SigningJob<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    sign(job.algorithm, job.data, job.key, (error, signature) => {
      if (error) reject(error);
      else {
        try {
          resolve(job.finish(new Uint8Array(signature)));
        } catch (finishError) {
          reject(finishError);
        }
      }
    });
  });
}

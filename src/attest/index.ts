// Public face of attestations: keys, statements, signing and verification (no storage, no HTTP).

export * from './keys.ts';
export * from './statement.ts';
export {
  signStatement,
  verifyAttestation,
  verifyAttestationSync,
  type AttestationExpectation,
  type VerifiedAttestation,
} from './jws.ts';

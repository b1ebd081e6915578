// Public face of attestations: JWKs and JWKS, in-toto statements, JWS signing and verification, and the Sigstore forms
// (DSSE, P-256 bundle keys, hashedrekord v0.0.2 entries, bundles, trusted roots). Pure: no files, no HTTP.

export * from './jwk.ts';
export { selectUsableKeys, type UsableJwks } from './jwks.ts';
export * from './statement.ts';
export {
  checkStatement,
  signStatement,
  buildJcsStatementSigningJob,
  buildStatementSigningJob,
  verifyAttestation,
  verifyAttestationSync,
  type AttestationExpectation,
  type VerifiedAttestation,
} from './jws.ts';
export * from './dsse.ts';
export * from './p256-jwk.ts';
export * from './rekor-entry.ts';
export * from './sigstore-bundle.ts';
export * from './signing-job.ts';
export * from './trusted-root.ts';

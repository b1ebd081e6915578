// Public face of attestations: JWKs and JWKS, in-toto statements, JWS signing and verification (pure: no files, no HTTP).

export * from './jwk.ts';
export { selectUsableKeys, type UsableJwks } from './jwks.ts';
export * from './statement.ts';
export {
  signStatement,
  verifyAttestation,
  verifyAttestationSync,
  type AttestationExpectation,
  type VerifiedAttestation,
} from './jws.ts';

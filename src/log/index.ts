// Public face of the transparency log: pure RFC 6962/9162 Merkle math and C2SP formats; no store, no HTTP, no database.

export {
  HASH_SIZE,
  computeNodesForAppend,
  computeRootHash,
  computeSubtreeHash,
  generateConsistencyProof,
  generateInclusionProof,
  hashChildren,
  hashEmpty,
  hashLeaf,
} from './merkle.ts';
export {
  isConsistencyProofValid,
  isInclusionProofValid,
  verifyConsistencyProof,
  verifyInclusionProof,
} from './merkle-verify.ts';
export { createMemoryNodeStore } from './memory-node-store.ts';
export type { MemoryNodeStore, MerkleNode, NodeReader } from './merkle.ts';

export {
  ED25519_SIGNATURE_TYPE,
  computeKeyId,
  computeLogKeyId,
  exportEd25519PublicKey,
  formatVerifierString,
  isValidKeyName,
  parseNote,
  parseVerifierString,
  signNote,
  verifyNote,
} from './note.ts';
export type { NoteSignature, NoteSigner, NoteVerifier, ParsedNote, VerifiedNote } from './note.ts';

export {
  assertCheckpointConsistent,
  formatCheckpoint,
  parseCheckpoint,
  signCheckpoint,
  verifyCheckpoint,
} from './checkpoint.ts';
export type { Checkpoint, TreeHead } from './checkpoint.ts';

export {
  MAX_ENTRY_SIZE,
  MAX_TILE_LEVEL,
  TILE_HEIGHT,
  TILE_WIDTH,
  computeEntryBundleWidth,
  computeTileWidth,
  formatEntryBundle,
  formatEntryBundlePath,
  formatTileIndex,
  formatTilePath,
  isTileFull,
  listPartialTiles,
  parseEntryBundle,
  parseTilePath,
  readTile,
  splitTileHashes,
} from './tiles.ts';
export type { TilePath, TileRef } from './tiles.ts';

export { TLOG_PROOF_HEADER, formatTlogProof, parseTlogProof, verifyTlogProof } from './proof-format.ts';
export type { TlogProof, VerifiedTlogProof } from './proof-format.ts';

export {
  COSIGNATURE_SIGNATURE_TYPE,
  COSIGNATURE_V1_HEADER,
  appendSignatureLines,
  checkCosignatureLine,
  checkCosignatures,
  computeCosignerKeyId,
  cosignerKeyOf,
  decodeTimestampedSignature,
  formatCosignedMessage,
  formatCosignerVkey,
  parseCosignerVkey,
  signCosignature,
} from './cosignature.ts';
export type { CheckedCosignature, CosignerKey } from './cosignature.ts';

export { checkWitnessQuorum, isQuorumMet, parseWitnessPolicy, verifyCheckpointWithPolicy } from './policy.ts';
export type { PolicyCheckedCheckpoint, PolicyGroup, PolicyLog, PolicyWitness, WitnessPolicy } from './policy.ts';

export {
  ADD_CHECKPOINT_PATH,
  MAX_ADD_CHECKPOINT_BYTES,
  MAX_PROOF_LINES,
  TLOG_SIZE_CONTENT_TYPE,
  formatAddCheckpointRequest,
  formatTlogSize,
  parseAddCheckpointRequest,
  parseCosignatureLines,
  parseTlogSize,
} from './witness-protocol.ts';
export type { AddCheckpointRequest } from './witness-protocol.ts';

export { checkBundleLeaf, computeStatementPaeDigest } from './bundle-leaf.ts';
export type { BundleLeafCheck, BundleLeafInput, BundleLeafProblemCode } from './bundle-leaf.ts';

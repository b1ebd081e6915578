// An inclusion proof (RFC 9162 §2.1.3.1) as the HTTP API writes it: the JSON DTO and the C2SP tlog-proof text.

import { formatTlogProof } from '../log/index.ts';
import type { InclusionProofDto } from '../protocol/wire.ts';
import type { InclusionProof } from '../registry/index.ts';

/** The JSON member `inclusionProof`: exactly index, size, hashes and checkpoint, in that order. */
export function formatInclusionProofDto(inclusion: InclusionProof): InclusionProofDto {
  return { index: inclusion.index, size: inclusion.size, hashes: inclusion.hashes, checkpoint: inclusion.checkpoint };
}

/** The same evidence as a C2SP tlog-proof text (the member `tlogProof`). */
export function formatTlogProofText(inclusion: InclusionProof): string {
  return formatTlogProof({
    index: inclusion.index,
    proof: inclusion.hashes.map((hash) => new Uint8Array(Buffer.from(hash, 'base64'))),
    checkpoint: inclusion.checkpoint,
  });
}

// Step 3 of an audit: the checkpoint against the tree remembered from the last audit. A smaller size is a
// rollback, the same size with another root a fork, a larger one needs an RFC 9162 §2.1.4.2 consistency proof.

import { decodeBase64Strict, encodeBase64, equalBytes } from '../core/bytes.ts';
import { ToolsealError, describeError } from '../core/errors.ts';
import { isJsonObject } from '../core/json.ts';
import type { Checkpoint } from '../log/checkpoint.ts';
import { HASH_SIZE } from '../log/merkle.ts';
import { parseStrict } from '../pipeline/parse.ts';
import { consistencyProofPath } from '../protocol/routes.ts';
import { fetchConsistencyProofFromTiles, withTileFallback } from '../client/tile-proofs.ts';
import { type AuditRun, addProblem, describeFetchFailure } from './report.ts';
import type { AuditState } from './state.ts';
import { verifyConsistencyProof } from '../log/merkle-verify.ts';

/**
 * Check `checkpoint` against the run's remembered state and set `report.consistency`. False when the audit must
 * stop: a rollback, a fork or an unprovable growth refuses it (nothing after is trusted), or the proof could not
 * be fetched.
 */
export async function checkConsistency(run: AuditRun, checkpoint: Checkpoint): Promise<boolean> {
  const { report, state } = run;
  if (state === undefined) {
    report.consistency = 'first-audit';
    return true;
  }
  const refuse = (code: 'LOG_ROLLBACK' | 'LOG_FORK', message: string): false => {
    report.consistency = 'refused';
    addProblem(report, code, message);
    return false;
  };
  if (checkpoint.size < state.size) {
    return refuse(
      'LOG_ROLLBACK',
      `the log went back from size ${state.size} to ${checkpoint.size}: the registry rewrote history`,
    );
  }
  if (checkpoint.size === state.size) {
    if (!equalBytes(checkpoint.rootHash, decodeRememberedRoot(state))) {
      return refuse(
        'LOG_FORK',
        `two different roots for tree size ${state.size} (remembered ${state.rootHash}, now ${encodeBase64(checkpoint.rootHash)}): the log forked`,
      );
    }
    report.consistency = 'unchanged';
    return true;
  }
  if (state.size > 0 && !(await proveConsistency(run, state, checkpoint, refuse))) return false;
  report.consistency = 'proven';
  return true;
}

async function proveConsistency(
  run: AuditRun,
  state: AuditState,
  checkpoint: Checkpoint,
  refuse: (code: 'LOG_FORK', message: string) => false,
): Promise<boolean> {
  const path = consistencyProofPath(state.size, checkpoint.size);
  let body: Uint8Array | Uint8Array[];
  try {
    // A static mirror has no proof route: then the proof is derived from the log's tiles (C2SP tlog-tiles).
    body = await withTileFallback<Uint8Array | Uint8Array[]>(
      () => run.client.getBytes(path),
      () => fetchConsistencyProofFromTiles(run.client, state.size, checkpoint.size),
    );
  } catch (error) {
    run.report.consistency = 'not-checked';
    addProblem(
      run.report,
      'FETCH_FAILED',
      `${describeFetchFailure(error)}: no consistency proof from size ${state.size} to ${checkpoint.size}`,
    );
    return false;
  }
  let proof: Uint8Array[];
  try {
    proof = Array.isArray(body) ? body : parseProofResponse(body, { from: state.size, to: checkpoint.size });
  } catch (error) {
    return refuse('LOG_FORK', `GET ${path} did not return a consistency proof: ${describeError(error)}`);
  }
  try {
    verifyConsistencyProof(state.size, checkpoint.size, decodeRememberedRoot(state), checkpoint.rootHash, proof);
  } catch (error) {
    return refuse(
      'LOG_FORK',
      `the checkpoint of size ${checkpoint.size} is not consistent with the remembered size ${state.size}: ${describeError(error)}`,
    );
  }
  return true;
}

function decodeRememberedRoot(state: AuditState): Uint8Array {
  const root = decodeBase64Strict(state.rootHash);
  if (root === undefined) throw new ToolsealError('BAD_REQUEST', 'not a valid audit state: rootHash is not base64');
  return root;
}

/** The registry's consistency proof answer: `{from, to, hashes: [base64…]}` for exactly the sizes asked. */
function parseProofResponse(bytes: Uint8Array, expected: { from: number; to: number }): Uint8Array[] {
  const value = parseStrict(bytes, { maxBytes: 64 * 1024, maxDepth: 4 }).value;
  if (
    !isJsonObject(value) ||
    value['from'] !== expected.from ||
    value['to'] !== expected.to ||
    !Array.isArray(value['hashes'])
  ) {
    throw new ToolsealError('PROOF_INVALID', `expected {from: ${expected.from}, to: ${expected.to}, hashes: [...]}`);
  }
  return value['hashes'].map((hash, i) => {
    const bytes = typeof hash === 'string' ? decodeBase64Strict(hash) : undefined;
    if (bytes === undefined || bytes.byteLength !== HASH_SIZE)
      throw new ToolsealError('PROOF_INVALID', `proof hash ${i} is not base64 of ${HASH_SIZE} bytes`);
    return bytes;
  });
}

// `toolseal witness` composition root: a C2SP tlog-witness server for the given logs' Ed25519 note keys, its key and
// state in one data folder (one server per folder: the data folder lock of src/server/data-dir-lock.ts).

import type { AddressInfo } from 'node:net';
import { parseVerifierString } from '../log/note.ts';
import { lockDataDir } from '../server/data-dir-lock.ts';
import { ToolsealError } from '../core/errors.ts';
import { createWitnessCore } from './add-checkpoint.ts';
import { createWitnessHttpServer } from './http-server.ts';
import { loadWitnessSigner, readWitnessState, writeWitnessState } from './witness-files.ts';
import { formatCosignerVkey } from '../log/cosignature.ts';

export { initWitness } from './witness-files.ts';
export { createWitnessCore } from './add-checkpoint.ts';
export type { WitnessAnswer, WitnessCore } from './add-checkpoint.ts';

export interface WitnessServerOptions {
  dataDir: string;
  host: string;
  port: number;
  /** Log verifier keys (vkeys of type 0x01; the key name is the log's origin). */
  logs: readonly string[];
}

export interface RunningWitness {
  url: string;
  vkey: string;
  close(): Promise<void>;
}

/** Start a witness server; resolves once it listens. */
export async function startWitnessServer(options: WitnessServerOptions): Promise<RunningWitness> {
  if (options.logs.length === 0) throw new ToolsealError('BAD_REQUEST', 'give at least one --log key to witness');
  const logs = options.logs.map((vkey) => parseVerifierString(vkey));
  const lock = lockDataDir(options.dataDir);
  try {
    const signer = loadWitnessSigner(options.dataDir);
    const core = createWitnessCore({
      signer,
      logs,
      state: readWitnessState(options.dataDir),
      persist: (state) => writeWitnessState(options.dataDir, state),
    });
    const server = createWitnessHttpServer(core);
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, options.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    return {
      url: `http://${address.family === 'IPv6' ? `[${address.address}]` : address.address}:${address.port}`,
      vkey: formatCosignerVkey(signer.name, signer.privateKey),
      close: () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => {
            lock.release();
            resolve();
          });
        }),
    };
  } catch (error) {
    lock.release();
    throw error;
  }
}

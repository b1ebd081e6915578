// Registry administration on a data folder, for the CLI (which never opens a store itself): publishers, key
// rotation, and fsck with the log verifier rebuilt from the keys folder.

import { hasLogKeyFile, loadOrCreateLogKey } from '../keys/key-files.ts';
import { formatVerifierString } from '../log/note.ts';
import { parseCheckpoint } from '../log/checkpoint.ts';
import { type FsckReport, runFsck } from '../registry/fsck.ts';
import { createPublisher } from '../registry/publishers.ts';
import { openRegistry } from '../registry/registry.ts';
import { bodyOf } from '../registry/transparency-log.ts';
import type { Store } from '../store/index.ts';
import { databaseFileOf, openStore } from '../store/sqlite/index.ts';

import { existsSync } from 'node:fs';
import { ToolsealError } from '../core/errors.ts';

function withStore<T>(dataDir: string, work: (store: Store) => Promise<T> | T): Promise<T> {
  const store = openStore({ dataDir });
  return Promise.resolve()
    .then(() => work(store))
    .finally(() => store.close());
}

/** Create a publisher owning `namespace`; the token is returned once (only its hash is stored). */
export function addPublisher(dataDir: string, namespace: string): Promise<{ namespace: string; token: string }> {
  return withStore(dataDir, (store) => {
    const { publisher, token } = createPublisher(store, namespace);
    return { namespace: publisher.namespace, token };
  });
}

/** Make a new signing key active and retire the current one (logged). */
export function rotateSigningKey(options: {
  dataDir: string;
  keysDir: string;
  origin: string;
}): Promise<{ retired: string; active: string }> {
  return withStore(options.dataDir, (store) =>
    openRegistry({ store, keysDir: options.keysDir, origin: options.origin }).rotateSigningKey(),
  );
}

/**
 * fsck over the data folder. Checkpoint signatures are checked when the log key is in `keysDir`: the verifier is
 * rebuilt from it and the origin the checkpoints were signed under. NOT_FOUND when there is no database.
 */
export function checkRegistry(options: { dataDir: string; keysDir: string }): Promise<FsckReport> {
  if (!existsSync(databaseFileOf(options.dataDir))) {
    return Promise.reject(new ToolsealError('NOT_FOUND', `no registry database in ${options.dataDir}`));
  }
  return withStore(options.dataDir, (store) => {
    const latest = store.latestCheckpoint();
    let verifier: string | undefined;
    if (latest !== undefined && hasLogKeyFile(options.keysDir)) {
      const { origin } = parseCheckpoint(bodyOf(latest.note));
      verifier = formatVerifierString(origin, loadOrCreateLogKey(options.keysDir, false).publicKey);
    }
    return runFsck(store, verifier);
  });
}

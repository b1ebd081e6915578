// The publish writer thread (started by publish-writer.ts): its own store connection, and a GroupCommitter over it.

import { workerData } from 'node:worker_threads';
import type { Store } from '../store/index.ts';
import { GroupCommitter, type CommitOutcome } from '../registry/group-commit.ts';
import type { PublishWriterInput, PublishWriterSetup } from './publish-writer.ts';
import { resolveLogOrigin, TransparencyLog } from '../registry/transparency-log.ts';
import { serveWorkerJobs } from './worker-thread.ts';
import { loadOrCreateLogKey } from '../keys/key-files.ts';
import { openStore } from '../store/sqlite/index.ts';

const setup = workerData as PublishWriterSetup;
let store: Store | undefined;
let committer: Promise<GroupCommitter> | undefined;

/**
 * Built at the first publish: by then the registry has created the keys (the writer never creates one) and signed the
 * log's first checkpoint, whose origin the writer keeps (resolveLogOrigin).
 */
async function openCommitter(opened: Store): Promise<GroupCommitter> {
  const clock = (): Date => new Date();
  const origin = await resolveLogOrigin(opened, setup.logOrigin, setup.origin);
  const log = new TransparencyLog(opened, loadOrCreateLogKey(setup.keysDir, false), origin, clock);
  return new GroupCommitter({ store: opened, log, keysDir: setup.keysDir, origin: setup.origin, clock });
}

await serveWorkerJobs<PublishWriterInput, CommitOutcome>(
  () => {
    store = openStore({ dataDir: setup.dataDir });
  },
  async ({ result, publisher }) => {
    committer ??= openCommitter(store!);
    return (await committer).commit(result, publisher);
  },
);

// The publish writer thread (started by publish-writer.ts): its own store connection, and a GroupCommitter over it.

import { workerData } from 'node:worker_threads';
import type { Store } from '../store/index.ts';
import { GroupCommitter, type CommitOutcome } from '../registry/group-commit.ts';
import type { PublishWriterInput, PublishWriterSetup } from './publish-writer.ts';
import { TransparencyLog } from '../registry/transparency-log.ts';
import { serveWorkerJobs } from './worker-thread.ts';
import { loadOrCreateLogKey } from '../keys/key-files.ts';
import { openStore } from '../store/sqlite/index.ts';

const setup = workerData as PublishWriterSetup;
let store: Store | undefined;
let committer: GroupCommitter | undefined;

/** Built at the first publish: by then the registry has created the keys (the writer never creates one). */
function openCommitter(opened: Store): GroupCommitter {
  const clock = (): Date => new Date();
  const log = new TransparencyLog(opened, loadOrCreateLogKey(setup.keysDir, false), setup.logOrigin, clock);
  return new GroupCommitter({ store: opened, log, keysDir: setup.keysDir, origin: setup.origin, clock });
}

await serveWorkerJobs<PublishWriterInput, CommitOutcome>(
  () => {
    store = openStore({ dataDir: setup.dataDir });
  },
  ({ result, publisher }) => {
    committer ??= openCommitter(store!);
    return committer.commit(result, publisher);
  },
);

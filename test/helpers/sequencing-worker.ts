// A thread with its own PostgreSQL store connection, for the sequencer tests (issue 16 §2): `lease-race` claims the
// sequencer lease against other racers round by round (a shared barrier starts each round), `claim` waits for the test's
// signal and then claims queued log jobs in a write transaction (finishing them), to show what a second connection gets.

import { parentPort, workerData } from 'node:worker_threads';
import { openPostgresStore } from '../../src/store/postgres/index.ts';

export type SequencingWorkerSetup =
  | {
      mode: 'lease-race';
      url: string;
      holder: string;
      rounds: number;
      ttlMs: number;
      /** How many racers share `barrier` (an Int32Array over a SharedArrayBuffer, starting at 0). */
      parties: number;
      barrier: Int32Array;
    }
  | {
      mode: 'claim';
      url: string;
      /** Set to 1 by the test when this thread is to claim. */
      go: Int32Array;
    };

/** A lease-race round as one racer saw it: the lease its claim returned. */
export interface LeaseRaceRound {
  holder: string;
  epoch: number;
}

/** What a `claim` thread claimed: the job ids, in the order returned. */
export interface ClaimResult {
  claimed: number[];
}

const setup = workerData as SequencingWorkerSetup;

/** Wait until `parties` racers have each arrived `count` times. */
function arrive(barrier: Int32Array, parties: number, count: number): void {
  Atomics.add(barrier, 0, 1);
  Atomics.notify(barrier, 0);
  for (;;) {
    const seen = Atomics.load(barrier, 0);
    if (seen >= parties * count) return;
    Atomics.wait(barrier, 0, seen, 50);
  }
}

async function run(): Promise<void> {
  const store = await openPostgresStore({ url: setup.url });
  try {
    if (setup.mode === 'lease-race') {
      const rounds: LeaseRaceRound[] = [];
      parentPort!.postMessage('ready');
      for (let round = 0; round < setup.rounds; round++) {
        arrive(setup.barrier, setup.parties, 2 * round + 1);
        const lease = await store.claimSequencerLease(setup.holder, setup.ttlMs);
        rounds.push({ holder: lease.holder, epoch: lease.epoch });
        // Every racer has claimed before the winner gives the lease up for the next round.
        arrive(setup.barrier, setup.parties, 2 * round + 2);
        if (lease.holder === setup.holder) await store.releaseSequencerLease(setup.holder);
      }
      parentPort!.postMessage(rounds);
    } else {
      parentPort!.postMessage('ready');
      Atomics.wait(setup.go, 0, 0);
      const claimed = await store.transaction(async () => {
        const jobs = await store.claimQueuedLogJobs(64);
        for (const job of jobs)
          await store.finishLogJob(job.id, 'done', Buffer.from(`claimed by the thread: ${job.id}`));
        return jobs.map((job) => job.id);
      });
      parentPort!.postMessage({ claimed } satisfies ClaimResult);
    }
  } finally {
    await store.close();
  }
}

// A failure is rethrown in the thread, so the test sees an `error` event.
run().catch((error: unknown) => {
  process.nextTick(() => {
    throw error;
  });
});

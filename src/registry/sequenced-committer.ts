// Publishes when several processes share one log (issue 16 §2): committed here while this process holds the sequencer
// lease, else handed to the sequencer through the database (sequencer.ts); either way the answer comes once the leaf is
// under a signed checkpoint, with its inclusion proof.

import { ToolsealError } from '../core/errors.ts';
import type { PublisherRecord, Store } from '../store/index.ts';
import type { CommitOutcome, GroupCommitter, PublishCommitter } from './group-commit.ts';
import { type PublishJobValue, unwrapLogJobResult } from './log-jobs.ts';
import type { PipelineOutput } from './pipeline-runner.ts';
import { isSequencerLoss, type Sequencer } from './sequencer.ts';

export class SequencedCommitter implements PublishCommitter {
  constructor(
    private readonly local: GroupCommitter,
    private readonly sequencer: Sequencer,
    private readonly store: Store,
  ) {}

  async commit(result: PipelineOutput, publisher: PublisherRecord): Promise<CommitOutcome> {
    if (this.sequencer.isSequencer()) {
      try {
        return await this.local.commit(result, publisher);
      } catch (error) {
        // The lease was lost during the commit: nothing was written; the new sequencer does it.
        if (!isSequencerLoss(error)) throw error;
      }
    }
    const value = unwrapLogJobResult<PublishJobValue>(
      await this.sequencer.submit({ kind: 'publish', publisher, result }),
    );
    // The proof comes with the outcome (the sequencer had the nodes at hand); the record is read back as stored.
    const record = await this.store.getVersion(value.name, value.version);
    if (!record || record.logIndex !== value.inclusion.index) {
      throw new ToolsealError('INTERNAL', 'the sequencer answered for a version that is not stored as it said');
    }
    return { created: value.created, record, inclusion: value.inclusion };
  }

  whenReady(): Promise<void> {
    return this.local.whenReady();
  }

  close(): Promise<void> {
    return this.local.close();
  }
}

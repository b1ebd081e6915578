// The sequencer's side of log-writing work from other processes (issue 16 §2, issue 24 §2): inside its transaction,
// each queued job runs in order — consecutive publishes as one group commit — and each outcome is written with it.

import { ToolsealError } from '../core/errors.ts';
import type { LogJobRecord, SequencingStore } from '../store/index.ts';
import { type ApprovalDeps, consumeApproval, decideApproval } from './approvals.ts';
import type { GroupCommitter, QueuedPublish } from './group-commit.ts';
import { decodeLogJob, describeJobFailure, encodeLogJobResult, type LogJob, type LogJobResult } from './log-jobs.ts';
import { type YankDeps, yankVersion } from './yank.ts';

export interface LogJobRunnerDeps {
  store: Pick<SequencingStore, 'finishLogJob'>;
  committer: GroupCommitter;
  yank: YankDeps;
  approvals: ApprovalDeps;
}

/**
 * Run `jobs` and record each outcome. A failure that says the sequencer itself cannot go on (its lease, its
 * connection) aborts the batch: the jobs stay queued for the next sequencer. A refusal fails only its own job.
 */
export async function executeLogJobs(deps: LogJobRunnerDeps, jobs: readonly LogJobRecord[]): Promise<void> {
  const results = new Map<number, LogJobResult>();
  let publishes: QueuedPublish[] = [];
  const flush = async (): Promise<void> => {
    if (publishes.length > 0) await deps.committer.commitNow(publishes);
    publishes = [];
  };
  for (const record of jobs) {
    let job: LogJob;
    try {
      job = decodeLogJob(record.kind, record.payload);
    } catch (error) {
      results.set(record.id, describeJobFailure(error));
      continue;
    }
    if (job.kind === 'publish') {
      publishes.push({
        result: job.result,
        publisher: job.publisher,
        resolve: (outcome) =>
          results.set(record.id, {
            ok: true,
            value: {
              created: outcome.created,
              name: outcome.record.name,
              version: outcome.record.version,
              inclusion: outcome.inclusion,
            },
          }),
        reject: (error) => results.set(record.id, describeJobFailure(error)),
      });
      continue;
    }
    await flush();
    results.set(record.id, await runLogJob(deps, job));
  }
  await flush();
  for (const [id, result] of results) {
    if (!result.ok && (result.code === 'SEQUENCER_UNAVAILABLE' || result.code === 'STORAGE_UNAVAILABLE')) {
      throw new ToolsealError(result.code, result.message);
    }
    await deps.store.finishLogJob(id, result.ok ? 'done' : 'failed', encodeLogJobResult(result));
  }
}

async function runLogJob(deps: LogJobRunnerDeps, job: Exclude<LogJob, { kind: 'publish' }>): Promise<LogJobResult> {
  try {
    switch (job.kind) {
      case 'yank': {
        const { alreadyYanked } = await yankVersion(deps.yank, job.publisher, job.name, job.version, job.reason);
        return { ok: true, value: { alreadyYanked } };
      }
      case 'approval-decision':
        return { ok: true, value: await decideApproval(deps.approvals, job.principal, job.id, job.body) };
      case 'approval-consumption':
        return { ok: true, value: await consumeApproval(deps.approvals, job.principal, job.id, job.body) };
    }
  } catch (error) {
    return describeJobFailure(error);
  }
}

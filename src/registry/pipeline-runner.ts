// Where a publish's pipeline runs, as the registry sees it: inline here, or on worker threads (src/runtime/).

import { type PipelineLimits, type PipelineResult, runPipeline } from '../pipeline/index.ts';

/** What a publish needs from the pipeline (the normalised manifest object stays where the pipeline ran). */
export type PipelineOutput = Omit<PipelineResult, 'manifest'>;

/** Runs the pipeline somewhere: inline, or on a pool of worker threads. */
export interface PipelineRunner {
  run(bytes: Uint8Array, limits: Partial<PipelineLimits>): Promise<PipelineOutput>;
  /** Resolves once it can run jobs; rejects with INTERNAL if it cannot (a server checks this at start). */
  whenReady(): Promise<void>;
  close(): Promise<void>;
}

/** The pipeline on the calling thread (tests, CLI, single-core machines). */
export const inlinePipeline: PipelineRunner = {
  run: async (bytes, limits) => runPipeline(bytes, limits),
  whenReady: async () => {},
  close: async () => {},
};

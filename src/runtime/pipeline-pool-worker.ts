// A pipeline worker thread (started by pipeline-pool.ts): runs runPipeline on the bytes it is sent and answers.

import { runPipeline } from '../pipeline/index.ts';
import type { PipelineOutput } from '../registry/pipeline-runner.ts';
import type { PipelineInput } from './pipeline-pool.ts';
import { serveWorkerJobs, transferableBuffers } from './worker-thread.ts';

await serveWorkerJobs<PipelineInput, PipelineOutput>(
  () => {},
  ({ bytes, limits }) => {
    const { name, version, canonicalBytes, digest, size, renamedTools } = runPipeline(bytes, limits);
    return { name, version, canonicalBytes, digest, size, renamedTools };
  },
  // The canonical bytes are moved back when they own their buffer (a view into a larger one is copied).
  ({ canonicalBytes }) => transferableBuffers(canonicalBytes),
);

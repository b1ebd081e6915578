// A pipeline worker thread (started by pipeline-pool.ts): runs runPipeline on the bytes it is sent and answers.

import { parentPort } from 'node:worker_threads';
import { isToolsealError } from '../errors.ts';
import { runPipeline } from '../pipeline/index.ts';
import type { PipelineJob, PipelineReply, PipelineWorkerMessage } from './pipeline-pool.ts';

const port = parentPort;
if (!port) throw new Error('pipeline-pool-worker.ts runs only as a worker thread');

port.on('message', ({ id, bytes, limits }: PipelineJob) => {
  let reply: PipelineReply;
  const transfer: ArrayBuffer[] = [];
  try {
    const { name, version, canonicalBytes, digest, size, renamedTools } = runPipeline(bytes, limits);
    reply = { id, output: { name, version, canonicalBytes, digest, size, renamedTools } };
    if (canonicalBytes.byteOffset === 0 && canonicalBytes.byteLength === canonicalBytes.buffer.byteLength) {
      transfer.push(canonicalBytes.buffer as ArrayBuffer);
    }
  } catch (error) {
    reply = isToolsealError(error)
      ? { id, refusal: { code: error.code, message: error.message, pointer: error.pointer } }
      : { id, failure: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply, transfer);
});

port.postMessage({ ready: true } satisfies PipelineWorkerMessage);

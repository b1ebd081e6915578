// Public face of the worker threads: the pipeline pool and the publish writer (the registry's ports, on threads).

export { defaultPipelineWorkers, startPipelinePool, type PipelinePoolOptions } from './pipeline-pool.ts';
export { startPublishWriter, type PublishWriterOptions } from './publish-writer.ts';

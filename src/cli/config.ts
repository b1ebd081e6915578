// Where a command finds its data and keys: flags first, then TOOLSEAL_* environment variables, then defaults.

import { UsageError } from './output.ts';

export function resolveDataDir(flag: string | undefined): string {
  return flag ?? process.env['TOOLSEAL_DATA'] ?? 'data';
}

export function resolveKeysDir(flag: string | undefined): string {
  return flag ?? process.env['TOOLSEAL_KEYS'] ?? 'keys';
}

export function resolvePort(flag: string | undefined): number {
  const text = flag ?? process.env['TOOLSEAL_PORT'] ?? '8787';
  const port = Number(text);
  if (!/^[0-9]+$/.test(text) || port > 65535)
    throw new UsageError(`port must be 0..65535, got ${JSON.stringify(text)}`);
  return port;
}

export function resolveRegistryUrl(flag: string | undefined): string {
  const url = flag ?? process.env['TOOLSEAL_REGISTRY'];
  if (!url) throw new UsageError('--registry URL is required (or set TOOLSEAL_REGISTRY)');
  try {
    return new URL(url).origin;
  } catch {
    throw new UsageError(`--registry is not a URL: ${JSON.stringify(url)}`);
  }
}

export function resolveToken(flag: string | undefined): string {
  const token = flag ?? process.env['TOOLSEAL_TOKEN'];
  if (!token) throw new UsageError('--token T is required (or set TOOLSEAL_TOKEN)');
  return token;
}

export function parsePositiveInteger(text: string | undefined, name: string): number | undefined {
  if (text === undefined) return undefined;
  if (!/^[1-9][0-9]*$/.test(text)) throw new UsageError(`${name} must be a positive integer`);
  return Number(text);
}

/** Pipeline worker threads for the server: a count from 0 (run the pipeline on the event loop) to 16. */
export function resolvePipelineWorkers(flag: string | undefined, fallback: number): number {
  const text = flag ?? process.env['TOOLSEAL_PIPELINE_WORKERS'];
  if (text === undefined) return fallback;
  if (!/^[0-9]+$/.test(text) || Number(text) > 16)
    throw new UsageError(`--pipeline-workers must be 0..16, got ${JSON.stringify(text)}`);
  return Number(text);
}

// `toolseal serve --dev`: on a registry with no publisher, a local dev publisher (token saved beside the data,
// mode 0600) and every example manifest published, so a newcomer has something to fetch, verify and audit.

import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isToolsealError } from '../core/errors.ts';
import type { Registry } from '../registry/registry.ts';

export const DEV_NAMESPACE = 'io.github.acme';
const DEV_TOKEN_FILE = 'dev-token.txt';

export interface DevSeed {
  /** The dev publisher's token (from this start, or saved by an earlier one), if any. */
  token: string | undefined;
  tokenFile: string;
  /** One line per example: published (with its digest), or why not. */
  published: string[];
}

/** Seed an empty registry (nothing happens when it already has a publisher); report the dev token either way. */
export async function seedDevRegistry(registry: Registry, dataDir: string, examplesDir: string): Promise<DevSeed> {
  const tokenFile = join(dataDir, DEV_TOKEN_FILE);
  const published: string[] = [];
  if ((await registry.countPublishers()) === 0) {
    const { publisher, token } = await registry.createPublisher(DEV_NAMESPACE);
    writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
    const files = existsSync(examplesDir) ? readdirSync(examplesDir).filter((name) => name.endsWith('.json')) : [];
    for (const file of files.sort()) {
      try {
        const outcome = await registry.publish(readFileSync(join(examplesDir, file)), publisher);
        published.push(`published ${outcome.record.name}@${outcome.record.version} ${outcome.record.digest}`);
      } catch (error) {
        published.push(
          `could not publish ${file}: ${isToolsealError(error) ? `${error.code} ${error.message}` : String(error)}`,
        );
      }
    }
  }
  const token = existsSync(tokenFile) ? readFileSync(tokenFile, 'utf8').trim() : undefined;
  return { token, tokenFile, published };
}

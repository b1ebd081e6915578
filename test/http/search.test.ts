// GET /v1/manifests?q= matches a manifest's name, and any version's description or tool name, title or description
// (what the web page's search box sends); `%` and `_` are literal, and a word found nowhere finds nothing.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  cleanupTempDirs,
  createTestEnv,
  manifestBytes,
  postManifest,
  sampleTool,
  type TestEnv,
} from '../helpers/registry-helpers.ts';

let env: TestEnv;

async function search(q: string): Promise<string[]> {
  const response = await env.app.request(`/v1/manifests?q=${encodeURIComponent(q)}`);
  expect(response.status).toBe(200);
  const body = (await response.json()) as { items: { name: string }[] };
  return body.items.map((item) => item.name);
}

beforeAll(async () => {
  env = await createTestEnv();
  const publish = async (options: Parameters<typeof manifestBytes>[0]): Promise<void> => {
    const response = await postManifest(env.app, manifestBytes(options), env.token);
    expect(response.status).toBe(201);
  };
  await publish({ name: 'io.github.acme/weather', tools: [sampleTool('forecast', 'Predicts rainfall for a city.')] });
  await publish({
    name: 'io.github.acme/ledger',
    description: 'Double-entry bookkeeping',
    tools: [{ ...sampleTool('post_entry', 'Post an entry.'), title: 'Journal writer' }],
  });
  await publish({ name: 'io.github.acme/percent', tools: [sampleTool('rate', 'Returns 5% of a value.')] });
});

afterAll(async () => {
  await env.close();
  cleanupTempDirs();
});

describe('manifest search', () => {
  it('finds a manifest by a word of a tool description, a tool title, a tool name or its own description', async () => {
    expect(await search('rainfall')).toEqual(['io.github.acme/weather']);
    expect(await search('journal')).toEqual(['io.github.acme/ledger']);
    expect(await search('post_entry')).toEqual(['io.github.acme/ledger']);
    expect(await search('bookkeeping')).toEqual(['io.github.acme/ledger']);
    expect(await search('weather')).toEqual(['io.github.acme/weather']);
  });

  it('treats % and _ literally and finds nothing for a word found nowhere', async () => {
    expect(await search('5%')).toEqual(['io.github.acme/percent']);
    expect(await search('%')).toEqual(['io.github.acme/percent']);
    expect(await search('post_')).toEqual(['io.github.acme/ledger']);
    expect(await search('rain_all')).toEqual([]); // a wildcard _ would match rainfall
    expect(await search('zzzz')).toEqual([]);
  });
});

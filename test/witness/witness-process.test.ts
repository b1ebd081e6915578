// A real `toolseal witness` process: init prints a type-0x04 vkey; serve cosigns; after SIGKILL (also in the middle
// of a stream of requests) a restart remembers at least every size it answered 200 for, and never goes back.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseCosignerVkey, parseTlogSize } from '../../src/log/index.ts';
import {
  createTestLog,
  makeFolder,
  postCheckpoint,
  removeFolders,
  runToolseal,
  startWitnessProcess,
  type WitnessProcess,
} from './helpers.ts';

const processes: WitnessProcess[] = [];
afterAll(() => {
  for (const p of processes) p.child.kill('SIGKILL');
  removeFolders();
});

async function start(dataDir: string, logs: string[]): Promise<WitnessProcess> {
  const witness = await startWitnessProcess(dataDir, logs);
  processes.push(witness);
  return witness;
}

async function latestSize(url: string, request: string): Promise<number> {
  const answer = await postCheckpoint(url, request);
  expect(answer.status).toBe(409);
  return parseTlogSize(answer.text) as number;
}

describe('toolseal witness', () => {
  it('init prints the vkey, refuses a second init, and serve needs a --log', async () => {
    const dataDir = makeFolder();
    const init = await runToolseal(['witness', 'init', '--data', dataDir, '--name', 'witness.example/w1']);
    expect(init.code).toBe(0);
    const key = parseCosignerVkey(init.stdout.trim());
    expect(key.name).toBe('witness.example/w1');
    expect(readFileSync(join(dataDir, 'witness.private.pem')).length > 0).toBe(true);
    const again = await runToolseal(['witness', 'init', '--data', dataDir, '--name', 'witness.example/w1']);
    expect(again.code).toBe(1);
    expect(JSON.parse(again.stderr).code).toBe('BAD_REQUEST');
    const noLog = await runToolseal(['witness', 'serve', '--data', dataDir, '--listen', '127.0.0.1:0']);
    expect(noLog.code).toBe(1);
  });

  it('state survives SIGKILL, also in the middle of a stream of requests', async () => {
    const dataDir = makeFolder();
    const init = await runToolseal(['witness', 'init', '--data', dataDir, '--name', 'witness.example/w2']);
    const vkey = init.stdout.trim();
    const log = createTestLog('log.example/k');
    const first = await start(dataDir, [log.vkey]);
    expect(first.vkey).toBe(vkey);
    log.append(4);
    expect((await postCheckpoint(first.url, log.request(0))).status).toBe(200);
    first.child.kill('SIGKILL');
    expect((await first.exited).signal).toBe('SIGKILL');

    const second = await start(dataDir, [log.vkey]); // takes over the dead process's lock
    expect(await latestSize(second.url, log.request(0))).toBe(4);
    // A stream of extensions, each from the last cosigned size; kill -9 while it runs.
    let cosigned = 4;
    let stop = false;
    const stream = (async () => {
      while (!stop) {
        log.append(1);
        const answer = await postCheckpoint(second.url, log.request(cosigned)).catch(() => undefined);
        if (answer === undefined) return;
        expect(answer.status).toBe(200);
        cosigned = log.size();
      }
    })();
    while (cosigned < 10) await new Promise((resolve) => setTimeout(resolve, 5));
    second.child.kill('SIGKILL');
    await second.exited;
    stop = true;
    await stream;

    const third = await start(dataDir, [log.vkey]);
    const remembered = await latestSize(third.url, log.request(0));
    expect(remembered).toBeGreaterThanOrEqual(cosigned); // every 200 was persisted before it was sent
    expect(remembered).toBeLessThanOrEqual(log.size());
    expect((await postCheckpoint(third.url, log.request(remembered))).status).toBe(200);
    third.child.kill('SIGTERM');
    expect(await third.exited).toEqual({ code: 0, signal: null });
  });
});

// toolseal.lock: stable text, strict parsing, atomic writes.

import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  emptyLockfile,
  formatLockfile,
  getLockEntry,
  parseLockfile,
  readLockfile,
  setLockEntry,
  writeLockfile,
  type LockEntry,
} from '../../src/host/index.ts';
import { temporaryDirectory, throwsWithCode } from '../verify/helpers.ts';

const entry = (n: number): LockEntry => ({
  digest: `sha256:${String(n).repeat(64).slice(0, 64)}`,
  kid: `kid-${n}`,
  logIndex: n,
  registry: 'http://127.0.0.1:8787',
});

describe('lockfile text', () => {
  it('has a fixed key order, sorted manifests, 2-space indent and a trailing newline', () => {
    let lock = emptyLockfile('http://127.0.0.1:8787');
    lock = setLockEntry(lock, 'io.github.acme/payments', '1.2.0', entry(2));
    lock = setLockEntry(lock, 'io.github.acme/contacts', '2.0.0', entry(1));
    const text = formatLockfile(lock);
    expect(text).toBe(
      [
        '{',
        '  "lockfileVersion": 1,',
        '  "registry": "http://127.0.0.1:8787",',
        '  "manifests": {',
        '    "io.github.acme/contacts@2.0.0": {',
        `      "digest": "${entry(1).digest}",`,
        '      "kid": "kid-1",',
        '      "logIndex": 1,',
        '      "registry": "http://127.0.0.1:8787"',
        '    },',
        '    "io.github.acme/payments@1.2.0": {',
        `      "digest": "${entry(2).digest}",`,
        '      "kid": "kid-2",',
        '      "logIndex": 2,',
        '      "registry": "http://127.0.0.1:8787"',
        '    }',
        '  }',
        '}',
        '',
      ].join('\n'),
    );
    expect(formatLockfile(parseLockfile(text))).toBe(text);
    // Insertion order does not matter.
    const reversed = setLockEntry(
      setLockEntry(emptyLockfile('http://127.0.0.1:8787'), 'io.github.acme/contacts', '2.0.0', entry(1)),
      'io.github.acme/payments',
      '1.2.0',
      entry(2),
    );
    expect(formatLockfile(reversed)).toBe(text);
  });

  it('setLockEntry replaces an entry and never mutates its input', () => {
    const first = setLockEntry(emptyLockfile(), 'io.github.acme/payments', '1.2.0', entry(1));
    const second = setLockEntry(first, 'io.github.acme/payments', '1.2.0', entry(2));
    expect(getLockEntry(first, 'io.github.acme/payments', '1.2.0')).toEqual(entry(1));
    expect(getLockEntry(second, 'io.github.acme/payments', '1.2.0')).toEqual(entry(2));
    expect(getLockEntry(second, 'io.github.acme/payments', '1.3.0')).toBeUndefined();
    expect(getLockEntry(undefined, 'io.github.acme/payments', '1.2.0')).toBeUndefined();
  });

  it('is parsed strictly, refusing with BAD_REQUEST and the pointer of the problem', () => {
    const valid = JSON.parse(
      formatLockfile(setLockEntry(emptyLockfile(), 'io.github.acme/payments', '1.2.0', entry(1))),
    ) as {
      manifests: Record<string, Record<string, unknown>>;
    } & Record<string, unknown>;
    const cases: [unknown, string][] = [
      [{ ...valid, lockfileVersion: 2 }, '/lockfileVersion'],
      [{ ...valid, extra: true }, '/extra'],
      [{ ...valid, registry: 'ftp://x' }, '/registry'],
      [{ ...valid, manifests: { 'io.github.acme/payments': entry(1) } }, '/manifests/io.github.acme~1payments'],
      [
        { ...valid, manifests: { 'io.github.acme/payments@1.2.0': { ...entry(1), digest: 'sha256:abc' } } },
        '/manifests/io.github.acme~1payments@1.2.0/digest',
      ],
      [
        { ...valid, manifests: { 'io.github.acme/payments@1.2.0': { ...entry(1), logIndex: -1 } } },
        '/manifests/io.github.acme~1payments@1.2.0/logIndex',
      ],
      [
        { ...valid, manifests: { 'io.github.acme/payments@1.2.0': { ...entry(1), note: 'x' } } },
        '/manifests/io.github.acme~1payments@1.2.0/note',
      ],
    ];
    for (const [value, pointer] of cases) {
      expect(throwsWithCode(() => parseLockfile(JSON.stringify(value)), 'BAD_REQUEST').pointer).toBe(pointer);
    }
    throwsWithCode(() => parseLockfile('{"lockfileVersion":1,"lockfileVersion":1,"manifests":{}}'), 'DUPLICATE_KEY');
  });
});

describe('lockfile files', () => {
  it('reads a missing file as undefined and writes atomically (no temporary file left behind)', async () => {
    const dir = temporaryDirectory('toolseal-lock-');
    const path = join(dir, 'toolseal.lock');
    expect(await readLockfile(path)).toBeUndefined();
    const lock = setLockEntry(emptyLockfile('http://127.0.0.1:8787'), 'io.github.acme/payments', '1.2.0', entry(3));
    await writeLockfile(path, lock);
    expect(readFileSync(path, 'utf8')).toBe(formatLockfile(lock));
    expect(await readLockfile(path)).toEqual(lock);
    writeFileSync(path, 'old content');
    await writeLockfile(path, lock);
    expect(readFileSync(path, 'utf8')).toBe(formatLockfile(lock));
    expect(readdirSync(dir)).toEqual(['toolseal.lock']);
  });
});

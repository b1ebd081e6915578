// C2SP tlog-witness add-checkpoint bodies: the spec's example request and response, round trips, malformed bodies.

import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  formatAddCheckpointRequest,
  formatTlogSize,
  parseAddCheckpointRequest,
  parseCosignatureLines,
  parseTlogSize,
} from '../../src/log/index.ts';
import { codeOf } from './helpers.ts';

const example = JSON.parse(
  readFileSync(new URL('../vectors/witness/add-checkpoint-example.json', import.meta.url), 'utf8'),
) as { requestBody: string; oldSize: number; proofLines: number; checkpointSize: number; responseBody: string };

describe('add-checkpoint bodies', () => {
  it('parses the tlog-witness example request and formats it back byte for byte', () => {
    const request = parseAddCheckpointRequest(new TextEncoder().encode(example.requestBody));
    expect(request.oldSize).toBe(example.oldSize);
    expect(request.proof).toHaveLength(example.proofLines);
    expect(request.checkpoint.split('\n')[1]).toBe(String(example.checkpointSize));
    expect(formatAddCheckpointRequest(request)).toBe(example.requestBody);
  });

  it('parses the tlog-witness example response into its three lines', () => {
    expect(parseCosignatureLines(example.responseBody)).toHaveLength(3);
    expect(parseCosignatureLines('garbage\n')).toBeUndefined();
    expect(parseCosignatureLines('')).toBeUndefined();
  });

  it.each([
    ['no old line', 'new 1\n\ncp\n'],
    ['a leading zero', 'old 01\n\ncp\n'],
    ['no blank line', 'old 1\ncp\n'],
    ['a short hash', 'old 1\nAAAA\n\ncp\n'],
    ['64 proof lines', `old 1\n${'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=\n'.repeat(64)}\ncp\n`],
    ['no checkpoint', 'old 1\n\n'],
  ])('refuses %s', (_what, body) => {
    expect(codeOf(() => parseAddCheckpointRequest(body))).toBe('BAD_REQUEST');
  });

  it('size bodies round-trip and refuse anything else', () => {
    fc.assert(
      fc.property(fc.nat(), (n) => {
        expect(parseTlogSize(formatTlogSize(n))).toBe(n);
      }),
    );
    for (const bad of ['', '1', '01\n', '-1\n', '1 \n', 'x\n']) expect(parseTlogSize(bad)).toBeUndefined();
  });
});

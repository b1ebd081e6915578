// Usage errors: one JSON line {"code":"USAGE","message"} on stderr, exit 2, with a one-line message that points at
// `toolseal <command> --help` instead of embedding the help text.

import { describe, expect, it } from 'vitest';
import { formatUsageMessage } from '../../src/cli/output.ts';
import { jsonLine, makeFolder, toolseal } from './cli-helpers.ts';

async function usageMessage(args: string[]): Promise<string> {
  const result = await toolseal(args, { cwd: makeFolder() });
  expect(result.code, result.stderr).toBe(2);
  expect(result.stdout).toBe('');
  const body = jsonLine(result.stderr);
  expect(Object.keys(body)).toEqual(['code', 'message']);
  expect(body['code']).toBe('USAGE');
  const message = String(body['message']);
  expect(message).not.toContain('\n');
  return message;
}

describe('USAGE errors', () => {
  it('name the problem on one line and point at the command help, without the help text', async () => {
    expect(await usageMessage(['verify'])).toBe('missing NAME@VERSION; see toolseal verify --help');
    const bare = await usageMessage(['manifest', 'capture', '--name', 'io.github.acme/x']);
    expect(bare).toMatch(/^usage: toolseal manifest capture --name NAME .*; see toolseal manifest --help$/);
    expect(bare).not.toContain('Starts the MCP server');

    expect(await usageMessage(['canonicalize', 'a.json', 'b.json'])).toBe(
      'expected one FILE, got 2 arguments; see toolseal canonicalize --help',
    );
    expect(await usageMessage(['get', 'io.github.acme/payments@1.2.0', '--registry', 'http://127.0.0.1:1'])).toBe(
      '-o FILE is required; see toolseal get --help',
    );
    expect(
      await usageMessage(['verify', 'io.github.acme/payments@latest', '--registry', 'http://127.0.0.1:1']),
    ).toMatch(/; see toolseal verify --help$/);
    expect(await usageMessage(['pin', 'io.github.acme/payments@1.2.0', '--locked'])).toBe(
      'pin does not take --locked; see toolseal pin --help',
    );
  });

  it('an unknown option is named, with the same pointer', async () => {
    const message = await usageMessage(['canonicalize', '--bogus', 'a.json']);
    expect(message).toContain("'--bogus'");
    expect(message).toMatch(/; see toolseal canonicalize --help$/);
  });

  it('--help still prints the whole help text on stdout', async () => {
    const result = await toolseal(['verify', '--help'], { cwd: makeFolder() });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('Fetches NAME@VERSION');
  });
});

describe('formatUsageMessage', () => {
  it('keeps the first line, turns a bare usage text into its synopsis, and adds the pointer', () => {
    expect(formatUsageMessage('toolseal x FILE\n  Does things.\n  More.', 'x')).toBe(
      'usage: toolseal x FILE; see toolseal x --help',
    );
    expect(formatUsageMessage('bad flag\ntoolseal x FILE\n  Does things.', 'x')).toBe(
      'bad flag; see toolseal x --help',
    );
    expect(formatUsageMessage('bad flag.', undefined)).toBe('bad flag; see toolseal help');
  });
});

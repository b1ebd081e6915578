// The options `manifest capture` and `check` share: where the live server is (`-- COMMAND...` over stdio, or
// `--url URL` with `--header 'Name: value'`), what client capabilities to declare, and how long the list must settle.

import { parseStrict } from '../pipeline/index.ts';
import {
  CLIENT_CAPABILITY_NAMES,
  selectClientCapabilities,
  type CaptureSessionOptions,
  type CaptureSource,
  type ClientCapabilityName,
} from '../build/index.ts';
import { parsePositiveInteger, userWorkingDirectory } from './config.ts';
import { UsageError } from './output.ts';

export const captureSourceOptions = {
  url: { type: 'string' },
  header: { type: 'string', multiple: true },
  'client-capabilities': { type: 'string' },
  settle: { type: 'string' },
} as const;

export const captureSourceUsage = `  --url URL     capture a Streamable HTTP server instead of starting COMMAND over stdio
  --header 'Name: value'   a header sent with every request to --url (repeatable; never printed)
  --client-capabilities C  what the client declares: a comma list of roots, sampling, elicitation (default: all
                three, as a full client does: servers show some tools only to such clients), none, or a JSON
                ClientCapabilities object
  --settle MS   the tool list is taken once no notifications/tools/list_changed came for MS ms (default 500)
  The server started over stdio gets this environment minus every TOOLSEAL_* variable.`;

export interface CaptureSourceValues {
  url?: string | undefined;
  header?: string[] | undefined;
  'client-capabilities'?: string | undefined;
  settle?: string | undefined;
}

/** The server and session options from the parsed flags and the words after `--` (undefined: none given). */
export function readCaptureSource(
  values: CaptureSourceValues,
  command: readonly string[] | undefined,
): CaptureSource & CaptureSessionOptions {
  const session = readSessionOptions(values);
  if (values.url !== undefined) {
    if (command !== undefined && command.length > 0)
      throw new UsageError('give either --url URL or -- COMMAND, not both');
    return { url: values.url, headers: readHeaders(values.header ?? []), ...session };
  }
  if (values.header !== undefined) throw new UsageError('--header is for --url');
  const [program, ...args] = command ?? [];
  if (program === undefined) throw new UsageError('expected -- COMMAND [ARGS...] or --url URL');
  return { command: program, args, cwd: userWorkingDirectory(), ...session };
}

function readSessionOptions(values: CaptureSourceValues): CaptureSessionOptions {
  const options: CaptureSessionOptions = {};
  const settle = parsePositiveInteger(values.settle, '--settle');
  if (settle !== undefined) options.settleMs = settle;
  const declared = values['client-capabilities'];
  if (declared !== undefined) options.clientCapabilities = readClientCapabilities(declared);
  return options;
}

function readClientCapabilities(text: string): NonNullable<CaptureSessionOptions['clientCapabilities']> {
  if (text.trimStart().startsWith('{')) {
    let value: unknown;
    try {
      value = parseStrict(Buffer.from(text, 'utf8'), { maxBytes: 64 * 1024, maxDepth: 16 }).value;
    } catch {
      throw new UsageError('--client-capabilities is not a JSON object');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value))
      throw new UsageError('--client-capabilities is not a JSON object');
    return value as NonNullable<CaptureSessionOptions['clientCapabilities']>;
  }
  if (text === 'none') return {};
  const names = text.split(',').map((name) => name.trim());
  for (const name of names)
    if (!CLIENT_CAPABILITY_NAMES.includes(name as ClientCapabilityName))
      throw new UsageError(
        `--client-capabilities: unknown capability ${JSON.stringify(name)}; expected ${CLIENT_CAPABILITY_NAMES.join(', ')} or none`,
      );
  return selectClientCapabilities(names as ClientCapabilityName[]);
}

/** `Name: value` lines as headers; a malformed one is refused without echoing its value. */
function readHeaders(lines: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon < 0 ? '' : line.slice(0, colon).trim();
    if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name))
      throw new UsageError("--header must be 'Name: value' with a valid header name");
    const value = line.slice(colon + 1).trim();
    if (/[\r\n\0]/.test(value)) throw new UsageError(`--header ${name}: the value holds a line break or NUL`);
    headers[name] = value;
  }
  return headers;
}

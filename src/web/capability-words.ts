// A tool's capability declaration and annotations in plain words (docs/manifest-format.md "Capabilities": an absent
// member makes no claim, an empty list declares none), and amounts in minor units as ISO 4217 major units.

import type { Manifest } from '../pipeline/index.ts';
import { formatMinorAmount } from './assets/approval-words.js';

// Amounts in minor units as major units: defined in the module the approvals page also runs in the browser.
export { formatMinorAmount };

type ManifestTool = Manifest['tools'][number];
export type ToolCapabilities = NonNullable<ManifestTool['capabilities']>;
export type ToolAnnotations = NonNullable<ManifestTool['annotations']>;

/** One area of a declaration, said in words: what is declared, or that nothing is claimed. */
export interface CapabilityArea {
  /** `network`, `filesystem.read`, `filesystem.write`, `secrets`, `money`. */
  area: string;
  /** `declared` lists what the tool touches (possibly nothing); `no-claim` means unknown, not none. */
  claim: 'declared' | 'no-claim';
  phrases: string[];
}

/** A host pattern as the place a tool connects to. */
export function describeHost(host: string): string {
  if (host === '*') return 'opens connections to any host';
  if (host.startsWith('*.')) return `opens connections to any host under ${host.slice(2)}`;
  return `opens connections to ${host}`;
}

/** The money a tool may move, one phrase per currency. */
export function describeMoney(money: NonNullable<ToolCapabilities['money']>): string[] {
  const currencies = money.currencies ?? [];
  if (currencies.length === 0) return ['moves no money'];
  const ceiling = money.maxAmountMinorPerCall;
  if (ceiling === undefined) return currencies.map((code) => `moves ${code} with no declared ceiling per call`);
  if (ceiling === 0) return currencies.map((code) => `handles ${code} but moves no amount`);
  return currencies.map((code) => `moves up to ${formatMinorAmount(ceiling, code)} per call`);
}

function listArea(area: string, list: readonly string[] | undefined, none: string, each: (item: string) => string) {
  if (list === undefined) return { area, claim: 'no-claim' as const, phrases: [] };
  return { area, claim: 'declared' as const, phrases: list.length === 0 ? [none] : list.map(each) };
}

/** Every area of a declaration, in the order of the format: network, files read, files written, secrets, money. */
export function describeCapabilities(capabilities: ToolCapabilities | undefined): CapabilityArea[] {
  const caps = capabilities ?? {};
  const money = caps.money?.currencies === undefined ? undefined : caps.money;
  return [
    listArea('network', caps.network?.hosts, 'opens no network connections', describeHost),
    listArea('filesystem.read', caps.filesystem?.read, 'reads no files', (path) => `reads ${path}`),
    listArea('filesystem.write', caps.filesystem?.write, 'writes no files', (path) => `writes ${path}`),
    listArea(
      'secrets',
      caps.secrets?.env,
      'needs no secrets',
      (name) => `reads the secret ${name} from the environment`,
    ),
    money === undefined
      ? { area: 'money', claim: 'no-claim', phrases: [] }
      : { area: 'money', claim: 'declared', phrases: describeMoney(money) },
  ];
}

/** What "no claim" means for an area, in words. */
export function describeNoClaim(area: string): string {
  const what: Record<string, string> = {
    network: 'the network',
    'filesystem.read': 'files it reads',
    'filesystem.write': 'files it writes',
    secrets: 'secrets',
    money: 'money',
  };
  return `makes no claim about ${what[area] ?? area} (unknown, not none)`;
}

/** MCP ToolAnnotations (hints, not guarantees) in words. */
export function describeAnnotations(annotations: ToolAnnotations | undefined): string[] {
  if (annotations === undefined) return [];
  const words: string[] = [];
  const hint = (value: boolean | undefined, yes: string, no: string): void => {
    if (value !== undefined) words.push(value ? yes : no);
  };
  hint(annotations.readOnlyHint, 'read-only', 'may change its environment');
  hint(annotations.destructiveHint, 'may be destructive', 'not destructive');
  hint(annotations.idempotentHint, 'idempotent (repeating a call changes nothing more)', 'not idempotent');
  hint(annotations.openWorldHint, 'reaches an open world (external systems)', 'closed world');
  if (annotations.title !== undefined) words.push(`display title "${annotations.title}"`);
  return words;
}

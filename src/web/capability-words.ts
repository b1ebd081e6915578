// A tool's capability declaration and annotations in plain words (docs/manifest-format.md "Capabilities": an absent
// member makes no claim, an empty list declares none), and amounts in minor units as ISO 4217 major units.

import type { Manifest } from '../pipeline/index.ts';
import * as words from './assets/approval-words.js';
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

// The words are defined once, in the module the approvals page also runs in the browser; typed here.

/** A host pattern as the place a tool connects to. */
export const describeHost: (host: string) => string = words.describeHost;

/** The money a tool may move, one phrase per currency. */
export const describeMoney: (money: NonNullable<ToolCapabilities['money']>) => string[] = words.describeMoney;

/** Every area of a declaration, in the order of the format: network, files read, files written, secrets, money. */
export const describeCapabilities: (capabilities: ToolCapabilities | undefined) => CapabilityArea[] =
  words.describeCapabilities;

/** What "no claim" means for an area, in words. */
export const describeNoClaim: (area: string) => string = words.describeNoClaim;

/** MCP ToolAnnotations (hints, not guarantees) in words. */
export const describeAnnotations: (annotations: ToolAnnotations | undefined) => string[] = words.describeAnnotations;

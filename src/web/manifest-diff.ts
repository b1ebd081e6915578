// The difference between two versions of a manifest, tool by tool (tools matched by name): every changed field with
// its RFC 6901 JSON pointer and both values, and the capability changes (docs/manifest-format.md "Capabilities")
// said in words, the ones that widen what a tool may touch first: a new host, secret or path, a higher ceiling.
// Changes to the signed `server` (issue 27 §5) come apart and first: a new remote URL or package identifier is a
// capability change (which server the signature names). Pure (no hono): the page (diff-page.tsx), `toolseal diff`
// and `manifest capture --base` share it.

import type { JsonValue } from '../core/json.ts';
import { collectFieldChanges, equalJson, type FieldChange } from '../dispatch/json-changes.ts';
import { formatPointer } from '../core/json-pointer.ts';
import type { Manifest, ManifestServer, ServerPackage, ServerRemote } from '../pipeline/index.ts';
import { describeHost, formatMinorAmount, type ToolCapabilities } from './capability-words.ts';

export type { FieldChange } from '../dispatch/json-changes.ts';

type ManifestTool = Manifest['tools'][number];

export interface ToolDiff {
  name: string;
  kind: 'added' | 'removed' | 'changed' | 'unchanged';
  /** The tool's pointer in the newer version (in the older one for a removed tool). */
  pointer: string;
  changes: FieldChange[];
}

export interface CapabilityChange {
  tool: string;
  /** `wider`: the tool may now touch more (the sign of a rug pull); `narrower`: less. */
  direction: 'wider' | 'narrower';
  text: string;
  pointer: string;
}

/**
 * A change to the signed `server` in words. `wider`: the signature now names a server it did not (a new remote URL, a
 * new package, another package registry) or no server at all; `changed`: the same package or remote, run or reached
 * otherwise (its version, digest, arguments, environment, transport, headers) or another repository; `narrower`: a
 * remote or package dropped, or a server signed where there was none.
 */
export interface ServerChange {
  direction: 'wider' | 'changed' | 'narrower';
  text: string;
  pointer: string;
}

export interface ManifestDiff {
  /** The signed server's changes in words, wider first, then changed, then narrower (shown before everything else). */
  server: ServerChange[];
  /** Every changed field under `/server`, with its pointer. */
  serverFields: FieldChange[];
  /** Manifest-level fields (the version itself and `/server` left out). */
  manifest: FieldChange[];
  tools: ToolDiff[];
  /** Wider changes first, then narrower ones, each in tool order. */
  capabilities: CapabilityChange[];
}

/** Compare `from` (the older version) with `to`. */
export function diffManifests(from: Manifest, to: Manifest): ManifestDiff {
  const manifest: FieldChange[] = [];
  const serverFields: FieldChange[] = [];
  const { tools: fromTools, version: _fromVersion, server: fromServer, ...fromRest } = from;
  const { tools: toTools, version: _toVersion, server: toServer, ...toRest } = to;
  collectFieldChanges(fromRest as unknown as JsonValue, toRest as unknown as JsonValue, [], manifest);
  if (fromServer === undefined || toServer === undefined) {
    if (fromServer !== toServer)
      serverFields.push({
        pointer: '/server',
        before: fromServer as unknown as JsonValue | undefined,
        after: toServer as unknown as JsonValue | undefined,
      });
  } else {
    collectFieldChanges(fromServer as unknown as JsonValue, toServer as unknown as JsonValue, ['server'], serverFields);
  }
  const tools: ToolDiff[] = [];
  const capabilities: CapabilityChange[] = [];
  toTools.forEach((tool, index) => {
    const before = fromTools.find((candidate) => candidate.name === tool.name);
    const pointer = formatPointer(['tools', index]);
    const changes: FieldChange[] = [];
    if (before !== undefined)
      collectFieldChanges(before as unknown as JsonValue, tool as unknown as JsonValue, [], changes);
    const prefixed = changes.map((change) => ({ ...change, pointer: pointer + change.pointer }));
    const kind = before === undefined ? 'added' : changes.length > 0 ? 'changed' : 'unchanged';
    tools.push({ name: tool.name, kind, pointer, changes: prefixed });
    capabilities.push(...compareCapabilities(tool.name, pointer, before, tool));
  });
  fromTools.forEach((tool, index) => {
    if (toTools.some((candidate) => candidate.name === tool.name)) return;
    const pointer = formatPointer(['tools', index]);
    tools.push({ name: tool.name, kind: 'removed', pointer, changes: [] });
    capabilities.push({ tool: tool.name, direction: 'narrower', text: 'tool removed', pointer });
  });
  const wider = capabilities.filter((change) => change.direction === 'wider');
  return {
    server: compareServers(fromServer, toServer),
    serverFields,
    manifest,
    tools,
    capabilities: [...wider, ...capabilities.filter((c) => c.direction === 'narrower')],
  };
}

const SERVER_DIRECTIONS: readonly ServerChange['direction'][] = ['wider', 'changed', 'narrower'];

/** The signed server's changes in words: remotes by type and URL, packages by registry type and identifier. */
function compareServers(from: ManifestServer | undefined, to: ManifestServer | undefined): ServerChange[] {
  if (from === undefined && to === undefined) return [];
  if (to === undefined)
    return [
      { direction: 'wider', text: 'no longer signs its server: any command or URL may run it', pointer: '/server' },
    ];
  if (from === undefined)
    return [{ direction: 'narrower', text: `now signs its server (${describeServer(to)})`, pointer: '/server' }];
  const changes: ServerChange[] = [];
  const oldRemotes = from.remotes ?? [];
  const newRemotes = to.remotes ?? [];
  newRemotes.forEach((remote, index) => {
    const pointer = formatPointer(['server', 'remotes', index]);
    const before = oldRemotes.find((candidate) => remoteKey(candidate) === remoteKey(remote));
    if (before === undefined)
      changes.push({ direction: 'wider', text: `new remote: ${describeRemote(remote)}`, pointer });
    else if (!isSameJson(before, remote))
      changes.push({
        direction: 'changed',
        text: `remote ${describeRemote(remote)}: headers or variables changed`,
        pointer,
      });
  });
  oldRemotes.forEach((remote, index) => {
    if (!newRemotes.some((candidate) => remoteKey(candidate) === remoteKey(remote)))
      changes.push({
        direction: 'narrower',
        text: `remote dropped: ${describeRemote(remote)}`,
        pointer: formatPointer(['server', 'remotes', index]),
      });
  });
  const oldPackages = from.packages ?? [];
  const newPackages = to.packages ?? [];
  newPackages.forEach((pkg, index) => {
    const pointer = formatPointer(['server', 'packages', index]);
    const before = oldPackages.find((candidate) => packageKey(candidate) === packageKey(pkg));
    if (before === undefined) {
      changes.push({ direction: 'wider', text: `new package: ${describePackage(pkg)}`, pointer });
      return;
    }
    if ((before.registryBaseUrl ?? '') !== (pkg.registryBaseUrl ?? ''))
      changes.push({
        direction: 'wider',
        text: `package ${pkg.identifier} now comes from ${pkg.registryBaseUrl ?? 'the default registry'} (was ${before.registryBaseUrl ?? 'the default registry'})`,
        pointer: `${pointer}/registryBaseUrl`,
      });
    if (before.identifier !== pkg.identifier)
      changes.push({
        direction: 'changed',
        text: `image ${packageName(pkg)}: ${before.identifier} → ${pkg.identifier}`,
        pointer: `${pointer}/identifier`,
      });
    if (before.version !== pkg.version)
      changes.push({
        direction: 'changed',
        text: `package ${pkg.identifier}: version ${before.version ?? '(none)'} → ${pkg.version ?? '(none)'}`,
        pointer: `${pointer}/version`,
      });
    const { registryBaseUrl: _a, version: _b, identifier: _e, ...beforeRest } = before;
    const { registryBaseUrl: _c, version: _d, identifier: _f, ...afterRest } = pkg;
    if (!isSameJson(beforeRest, afterRest))
      changes.push({
        direction: 'changed',
        text: `package ${pkg.identifier}: how it is run changed (file digest, arguments, environment or transport)`,
        pointer,
      });
  });
  oldPackages.forEach((pkg, index) => {
    if (!newPackages.some((candidate) => packageKey(candidate) === packageKey(pkg)))
      changes.push({
        direction: 'narrower',
        text: `package dropped: ${describePackage(pkg)}`,
        pointer: formatPointer(['server', 'packages', index]),
      });
  });
  if (!isSameJson(from.repository ?? null, to.repository ?? null))
    changes.push({
      direction: 'changed',
      text: `repository ${from.repository?.url ?? '(none)'} → ${to.repository?.url ?? '(none)'}`,
      pointer: '/server/repository',
    });
  return SERVER_DIRECTIONS.flatMap((direction) => changes.filter((change) => change.direction === direction));
}

function remoteKey(remote: ServerRemote): string {
  return `${remote.type} ${remote.url}`;
}

/** The same package: registry type and identifier; an OCI image by its name (a new digest is a new release of it). */
function packageKey(pkg: ServerPackage): string {
  return `${pkg.registryType} ${packageName(pkg)}`;
}

function packageName(pkg: ServerPackage): string {
  return pkg.registryType === 'oci' ? pkg.identifier.replace(/@sha256:[0-9a-f]+$/, '') : pkg.identifier;
}

function describeRemote(remote: ServerRemote): string {
  return `${remote.type} ${remote.url}`;
}

function describePackage(pkg: ServerPackage): string {
  return `${pkg.registryType} ${pkg.identifier}${pkg.version === undefined ? '' : ` ${pkg.version}`}`;
}

function describeServer(server: ManifestServer): string {
  const parts = [...(server.packages ?? []).map(describePackage), ...(server.remotes ?? []).map(describeRemote)];
  return parts.length === 0 ? 'no package or remote' : parts.join(', ');
}

function isSameJson(a: unknown, b: unknown): boolean {
  return equalJson(a as JsonValue, b as JsonValue);
}

/** The list areas of a declaration: where they live, and each item in words. */
const LIST_AREAS: readonly {
  path: readonly string[];
  label: string;
  read: (caps: ToolCapabilities) => readonly string[] | undefined;
  phrase: (item: string) => string;
}[] = [
  { path: ['network', 'hosts'], label: 'its network hosts', read: (c) => c.network?.hosts, phrase: describeHost },
  {
    path: ['filesystem', 'read'],
    label: 'the files it reads',
    read: (c) => c.filesystem?.read,
    phrase: (p) => `reads ${p}`,
  },
  {
    path: ['filesystem', 'write'],
    label: 'the files it writes',
    read: (c) => c.filesystem?.write,
    phrase: (p) => `writes ${p}`,
  },
  {
    path: ['secrets', 'env'],
    label: 'its secrets',
    read: (c) => c.secrets?.env,
    phrase: (s) => `needs the secret ${s}`,
  },
  {
    path: ['money', 'currencies'],
    label: 'the currencies it moves',
    read: (c) => c.money?.currencies,
    phrase: (code) => `moves ${code}`,
  },
];

function compareCapabilities(
  tool: string,
  toolPointer: string,
  before: ManifestTool | undefined,
  after: ManifestTool,
): CapabilityChange[] {
  const changes: CapabilityChange[] = [];
  const push = (direction: CapabilityChange['direction'], text: string, path: readonly string[]): void => {
    changes.push({ tool, direction, text, pointer: toolPointer + formatPointer(['capabilities', ...path]) });
  };
  const was = before?.capabilities ?? {};
  const now = after.capabilities ?? {};
  for (const area of LIST_AREAS) {
    const oldList = before === undefined ? [] : area.read(was);
    const newList = area.read(now);
    if (newList === undefined) {
      if (oldList !== undefined && before !== undefined)
        push(
          'wider',
          `no longer declares ${area.label} (was: ${describeList(oldList, area.phrase)}): now unknown`,
          area.path,
        );
      continue;
    }
    if (oldList === undefined) {
      push('narrower', `now declares ${area.label}: ${describeList(newList, area.phrase)}`, area.path);
      continue;
    }
    const prefix = before === undefined ? 'new tool: ' : 'new: ';
    for (const item of newList.filter((x) => !oldList.includes(x)))
      push('wider', prefix + area.phrase(item), area.path);
    for (const item of oldList.filter((x) => !newList.includes(x)))
      push('narrower', `no longer ${area.phrase(item)}`, area.path);
  }
  if (before !== undefined) compareCeiling(was, now, (direction, text) => push(direction, text, ['money']));
  else if (after.capabilities === undefined) push('wider', 'new tool that declares no capabilities (unknown)', []);
  else if (now.money?.maxAmountMinorPerCall !== undefined)
    push('wider', `new tool: moves up to ${formatCeiling(now.money.maxAmountMinorPerCall, now)} per call`, ['money']);
  return changes;
}

function describeList(list: readonly string[], phrase: (item: string) => string): string {
  return list.length === 0 ? 'none' : list.map(phrase).join(', ');
}

function formatCeiling(amount: number, caps: ToolCapabilities): string {
  const currencies = caps.money?.currencies ?? [];
  return currencies.length === 0
    ? `${amount} minor units`
    : currencies.map((code) => formatMinorAmount(amount, code)).join(' / ');
}

/** A higher per-call ceiling, or none where there was one, is wider; a lower one narrower. */
function compareCeiling(
  was: ToolCapabilities,
  now: ToolCapabilities,
  push: (direction: CapabilityChange['direction'], text: string) => void,
): void {
  const oldCeiling = was.money?.maxAmountMinorPerCall;
  const newCeiling = now.money?.maxAmountMinorPerCall;
  if (oldCeiling === newCeiling || (now.money?.currencies ?? []).length === 0) return;
  if (newCeiling === undefined) {
    push('wider', `no per-call money ceiling any more (was ${formatCeiling(oldCeiling!, was)})`);
  } else if (oldCeiling === undefined) {
    push('narrower', `now moves at most ${formatCeiling(newCeiling, now)} per call`);
  } else {
    const direction = newCeiling > oldCeiling ? 'wider' : 'narrower';
    const verb = direction === 'wider' ? 'raised' : 'lowered';
    push(
      direction,
      `money ceiling ${verb} from ${formatCeiling(oldCeiling, was)} to ${formatCeiling(newCeiling, now)} per call`,
    );
  }
}

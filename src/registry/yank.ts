// Yank: a publisher marks its name@version yanked with a reason; the bytes stay served and the yank is a log entry
// (docs/transparency-log.md), in a signed checkpoint before the answer. A reason is plain text: no control characters
// (C0, DEL, C1), bidi controls, tag characters or zero-width characters, which could hide or reorder what it says.

import { ToolsealError } from '../core/errors.ts';
import type { Sha256Digest } from '../core/digest.ts';
import { formatYankEntry, MAX_YANK_REASON_LENGTH } from '../log/entries.ts';
import { formatManifestRef } from '../protocol/manifest-ref.ts';
import type { PublisherRecord, Store, VersionRecord } from '../store/index.ts';
import { assertPublisherCurrent } from './publishers.ts';
import type { TransparencyLog } from './transparency-log.ts';

export interface YankOutcome {
  /** The version as stored after the yank (the first reason, when it was yanked before). */
  record: VersionRecord;
  /** True when the version was already yanked: nothing changed, and the reason given now was not recorded. */
  alreadyYanked: boolean;
}

export interface YankDeps {
  store: Store;
  log: TransparencyLog;
  clock: () => Date;
}

/**
 * Mark name@version yanked by `publisher`, logging the event and signing a checkpoint that includes it, all in one
 * transaction (a failure, e.g. STORAGE_FULL, leaves nothing written). Yanking again changes nothing and says so.
 */
export async function yankVersion(
  deps: YankDeps,
  publisher: PublisherRecord,
  name: string,
  version: string,
  reason: string,
): Promise<YankOutcome> {
  const { store, log } = deps;
  const namespace = name.slice(0, name.indexOf('/'));
  if (namespace.toLowerCase() !== publisher.namespace.toLowerCase()) {
    throw new ToolsealError('FORBIDDEN', `namespace ${namespace} does not belong to this publisher`);
  }
  checkYankReason(reason);
  const outcome = await store.transaction(async () => {
    await assertPublisherCurrent(store, publisher);
    const existing = await store.getVersion(name, version);
    if (!existing) throw new ToolsealError('NOT_FOUND', `${name}@${version} is not in this registry`);
    let alreadyYanked = true;
    if (existing.status !== 'yanked') {
      const yankedAt = deps.clock().toISOString();
      const leaf = formatYankEntry({
        subject: formatManifestRef(name, version),
        digest: existing.digest as Sha256Digest,
        reason,
        yankedAt,
      });
      await store.markYanked(existing.id, reason, yankedAt, await log.appendLeaf('yank', leaf));
      alreadyYanked = false;
    }
    const record = (await store.getVersion(name, version))!;
    // Also when a crash left an earlier yank's leaf beyond the latest checkpoint.
    const latest = await store.latestCheckpoint();
    if (record.yankLogIndex !== null && record.yankLogIndex >= (latest?.size ?? 0)) await log.signLatestCheckpoint();
    return { record, alreadyYanked };
  });
  await log.recordLatestCheckpoint();
  return outcome;
}

/** BAD_REQUEST (at /reason) unless `reason` is 1 to 1000 characters of plain text (`what` names its owner). */
export function checkYankReason(reason: string, what = 'a yank'): void {
  if (reason.trim().length === 0 || reason.length > MAX_YANK_REASON_LENGTH) {
    throw new ToolsealError('BAD_REQUEST', `${what} needs a reason (1 to ${MAX_YANK_REASON_LENGTH} characters)`, {
      pointer: '/reason',
    });
  }
  let position = 0;
  for (const character of reason) {
    const codePoint = character.codePointAt(0)!;
    if (isHiddenCodePoint(codePoint)) {
      const written = `U+${codePoint.toString(16).toUpperCase().padStart(4, '0')}`;
      throw new ToolsealError(
        'BAD_REQUEST',
        `the reason holds ${written} at character ${position + 1}: no control, bidi, tag or zero-width characters`,
        { pointer: '/reason' },
      );
    }
    position++;
  }
}

/**
 * C0 controls (tab and newline too), DEL, C1 controls; the Arabic letter mark and the other bidi controls (LRM, RLM,
 * embeddings and overrides, isolates); zero-width characters (ZWSP, ZWNJ, ZWJ, word joiner, invisible operators,
 * the BOM, the Mongolian vowel separator); line and paragraph separators; tag characters.
 */
function isHiddenCodePoint(codePoint: number): boolean {
  return (
    codePoint <= 0x1f ||
    (codePoint >= 0x7f && codePoint <= 0x9f) ||
    codePoint === 0x061c ||
    codePoint === 0x180e ||
    (codePoint >= 0x200b && codePoint <= 0x200f) ||
    (codePoint >= 0x2028 && codePoint <= 0x202e) ||
    (codePoint >= 0x2060 && codePoint <= 0x2069) ||
    codePoint === 0xfeff ||
    (codePoint >= 0xe0000 && codePoint <= 0xe007f)
  );
}

// The mirror folder on disk: every served file is written atomically (src/lock/atomic-file.ts: temp, fsync, rename),
// only when its bytes change, tiles also as a `.gz` sibling (C2SP tlog-tiles SHOULD; nginx gzip_static).

import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { gzipSync } from 'node:zlib';
import { equalBytes } from '../core/bytes.ts';
import { writeFileAtomic } from '../lock/atomic-file.ts';
import { isTileFile } from './mirror-layout.ts';

/** Where verified-but-not-yet-placed entry bundles wait (not served; emptied at the start of every run). */
const STAGING_FOLDER = '.toolseal-mirror.staging';
/** What src/lock/atomic-file.ts names a temporary file. */
const TEMPORARY_FILE = /^\..+\.[0-9]+\.[0-9a-f]{12}\.tmp$/;

export class MirrorFolder {
  /** The served files this run wrote (created or changed), in order, relative to the folder. */
  readonly written: string[] = [];

  constructor(readonly root: string) {}

  private pathOf(file: string): string {
    return join(this.root, ...file.split('/'));
  }

  /** The file's bytes, or undefined when it does not exist. */
  async read(file: string): Promise<Uint8Array | undefined> {
    try {
      return new Uint8Array(await readFile(this.pathOf(file)));
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  /** Write `bytes` to `file` unless it already holds exactly them; a tile also gets its `.gz`. True when written. */
  async write(file: string, bytes: Uint8Array): Promise<boolean> {
    const existing = await this.read(file);
    const changed = existing === undefined || !equalBytes(existing, bytes);
    if (changed) {
      await mkdir(dirname(this.pathOf(file)), { recursive: true });
      await writeFileAtomic(this.pathOf(file), bytes);
      this.written.push(file);
    }
    if (isTileFile(file) && (changed || (await this.read(`${file}.gz`)) === undefined)) {
      // Deterministic (zlib writes no timestamp), so a rerun writes the same bytes.
      await writeFileAtomic(this.pathOf(`${file}.gz`), gzipSync(bytes, { level: 9 }));
      this.written.push(`${file}.gz`);
    }
    return changed;
  }

  /**
   * An empty staging folder for this run. When one is there already, the last run was interrupted: what it
   * staged is dropped, and so are the temporary files of atomic writes it left (`.<name>.<pid>.<hex>.tmp`).
   */
  async resetStaging(): Promise<void> {
    const staging = this.pathOf(STAGING_FOLDER);
    if (existsSync(staging)) {
      await rm(staging, { recursive: true, force: true });
      for (const entry of await readdir(this.root, { recursive: true, withFileTypes: true })) {
        if (entry.isFile() && TEMPORARY_FILE.test(entry.name)) {
          await rm(join(entry.parentPath, entry.name), { force: true });
        }
      }
    }
    await mkdir(staging, { recursive: true });
  }

  async stage(name: string, bytes: Uint8Array): Promise<void> {
    await writeFileAtomic(this.pathOf(`${STAGING_FOLDER}/${name}`), bytes);
  }

  async readStaged(name: string): Promise<Uint8Array> {
    return new Uint8Array(await readFile(this.pathOf(`${STAGING_FOLDER}/${name}`)));
  }

  /** Move a staged file into place as `file` (atomic rename), or drop it when `file` already holds its bytes. */
  async place(name: string, file: string): Promise<void> {
    const staged = this.pathOf(`${STAGING_FOLDER}/${name}`);
    const bytes = await this.readStaged(name);
    const existing = await this.read(file);
    if (existing !== undefined && equalBytes(existing, bytes)) {
      await rm(staged, { force: true });
      if ((await this.read(`${file}.gz`)) === undefined) await this.write(file, bytes);
      return;
    }
    await mkdir(dirname(this.pathOf(file)), { recursive: true });
    await rename(staged, this.pathOf(file));
    this.written.push(file);
    await writeFileAtomic(this.pathOf(`${file}.gz`), gzipSync(bytes, { level: 9 }));
    this.written.push(`${file}.gz`);
  }

  /** Every mirrored attestation file (`v1/manifests/{ns}/{name}/{version}/attestation`) with its name@version. */
  async listAttestations(): Promise<{ file: string; key: { name: string; version: string } }[]> {
    const found: { file: string; key: { name: string; version: string } }[] = [];
    const manifests = this.pathOf('v1/manifests');
    if (!existsSync(manifests)) return found;
    for (const entry of await readdir(manifests, { recursive: true, withFileTypes: true })) {
      if (!entry.isFile() || entry.name !== 'attestation') continue;
      const segments = relative(manifests, entry.parentPath).split(sep);
      if (segments.length !== 3) continue;
      const [namespace, name, version] = segments as [string, string, string];
      found.push({
        file: ['v1/manifests', namespace, name, version, 'attestation'].join('/'),
        key: { name: `${namespace}/${name}`, version },
      });
    }
    return found;
  }

  async removeStaging(): Promise<void> {
    await rm(this.pathOf(STAGING_FOLDER), { recursive: true, force: true });
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

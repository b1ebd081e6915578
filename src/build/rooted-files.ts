// The only files a manifest build reads: regular files whose real path lies under the root (README "Schemas split
// across files"). `..` that leaves the root, symlinks that lead out and `file:` URLs outside are refused.

import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ToolsealError } from '../core/errors.ts';
import { quoteRef, refuseAt, type DocumentRef, type RefSite } from './documents.ts';

/** O_NOFOLLOW (no symlink as the last component) and O_NONBLOCK (a FIFO cannot stall the build), where they exist. */
const openFlags = constants.O_RDONLY | (constants.O_NOFOLLOW ?? 0) | (constants.O_NONBLOCK ?? 0);

export class RootedFiles {
  private constructor(
    /** The root's real path (every symlink resolved). */
    readonly root: string,
    private readonly maxBytes: number,
  ) {}

  /** The root folder as given (`--root`, or the manifest's folder); it must exist. */
  static async open(root: string, maxBytes: number): Promise<RootedFiles> {
    let real: string;
    try {
      real = await realpath(root);
    } catch (cause) {
      throw new ToolsealError('FILE_NOT_FOUND', `root folder ${JSON.stringify(root)} not found`, { cause });
    }
    if (!(await stat(real)).isDirectory())
      throw new ToolsealError('FILE_NOT_FOUND', `root ${JSON.stringify(root)} is not a folder`);
    return new RootedFiles(real, maxBytes);
  }

  /** The manifest the user named: it is read like any other file, so it must lie under the root too. */
  async locateManifest(path: string): Promise<DocumentRef> {
    let real: string;
    try {
      real = await realpath(path);
    } catch (cause) {
      throw new ToolsealError('FILE_NOT_FOUND', `manifest ${JSON.stringify(path)} not found`, { cause });
    }
    if (!this.contains(real))
      throw new ToolsealError('EXTERNAL_REF', `manifest ${JSON.stringify(path)} is not under the root folder`);
    return this.documentAt(real);
  }

  /**
   * The file a `file:` URL names (already resolved against the document that wrote the ref), or a refusal:
   * EXTERNAL_REF when it leaves the root (lexically or through a symlink), FILE_NOT_FOUND when nothing is there.
   */
  async locate(url: URL, ref: string, site: RefSite): Promise<DocumentRef> {
    const quoted = quoteRef(ref);
    if (url.host !== '' && url.host !== 'localhost')
      throw refuseAt('EXTERNAL_REF', site, `$ref ${quoted} names a host; only files under the root are read`);
    let lexical: string;
    try {
      lexical = fileURLToPath(url);
    } catch (cause) {
      throw refuseAt('EXTERNAL_REF', site, `$ref ${quoted} is not a usable file path`, cause);
    }
    if (lexical.includes('\0')) throw refuseAt('EXTERNAL_REF', site, `$ref ${quoted} is not a usable file path`);
    if (!this.contains(lexical))
      throw refuseAt(
        'EXTERNAL_REF',
        site,
        `$ref ${quoted} leads outside the root folder; only files under it are read`,
      );
    let real: string;
    try {
      real = await realpath(lexical);
    } catch (cause) {
      const code = (cause as { code?: unknown }).code;
      if (code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP')
        throw refuseAt('FILE_NOT_FOUND', site, `$ref ${quoted}: file ${this.label(lexical)} not found`, cause);
      throw cause;
    }
    if (!this.contains(real)) {
      throw refuseAt(
        'EXTERNAL_REF',
        site,
        `$ref ${quoted}: ${this.label(lexical)} is a symlink that leads outside the root folder`,
      );
    }
    return this.documentAt(real);
  }

  /** Read a located file, checking again that it still lies under the root; a regular file within the size limit. */
  async read(doc: DocumentRef): Promise<Uint8Array> {
    const path = fileURLToPath(doc.url);
    const real = await realpath(path);
    if (real !== path || !this.contains(real))
      throw new ToolsealError('EXTERNAL_REF', 'file changed while the build ran: it now leads outside the root folder');
    const handle = await open(path, openFlags);
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new ToolsealError('FILE_NOT_FOUND', 'is not a regular file');
      if (info.size > this.maxBytes)
        throw new ToolsealError('TOO_LARGE', `file is ${info.size} bytes; the limit is ${this.maxBytes}`);
      const data = await handle.readFile();
      if (data.byteLength > this.maxBytes)
        throw new ToolsealError('TOO_LARGE', `file is over ${this.maxBytes} bytes; the limit is ${this.maxBytes}`);
      return data;
    } finally {
      await handle.close();
    }
  }

  /** A path as messages show it: relative to the root, with `/` separators. */
  label(path: string): string {
    const rel = relative(this.root, path);
    return rel === '' ? '.' : rel.split(sep).join('/');
  }

  private contains(path: string): boolean {
    const rel = relative(this.root, path);
    return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
  }

  private documentAt(real: string): DocumentRef {
    const url = pathToFileURL(real);
    return { id: url.href, kind: 'file', url, label: this.label(real) };
  }
}

// The build's DocumentSource over @apidevtools/json-schema-ref-parser (README "Schemas split across files"): every
// document is read through the library's plugin interface, configured so it can read nothing on its own.
//
// The library's own `file` and `http` resolvers and its JSON/YAML/text/binary parsers are switched off, and
// `resolve.external` is false. It is handed only opaque ids (`toolseal-build:N`) for documents this module has
// already checked, so no path or URL of the user's ever reaches its own URL handling. Two resolvers of ours read
// them: `rootedFile` (under the root, re-checked at read time) and, only with --allow-http, `boundedHttps`. The
// parser is the pipeline's strict parse (duplicate keys, unsafe numbers, BOM... are refused in schema files too).
// Its `bundle()` is not used; see bundle-schema.ts for why.

import { $RefParser, type FileInfo, type ParserOptions } from '@apidevtools/json-schema-ref-parser';
import { ToolsealError } from '../core/errors.ts';
import type { JsonValue } from '../core/json.ts';
import { checkEnvelope } from '../pipeline/envelope.ts';
import { defaultParseLimits, parseStrict } from '../pipeline/parse.ts';
import {
  quoteRef,
  refuseAt,
  type BuildLimits,
  type DocumentRef,
  type DocumentSource,
  type RefSite,
} from './documents.ts';
import { fetchHttpsDocument } from './https-documents.ts';
import { RootedFiles } from './rooted-files.ts';

const OPAQUE_SCHEME = 'toolseal-build:';
const schemePattern = /^([A-Za-z][A-Za-z0-9+.-]*):/;

export interface SourceOptions {
  /** The folder every file must lie under (its real path). */
  root: string;
  /** Allow `https:` refs (never `http:`). */
  allowHttp: boolean;
  limits: BuildLimits;
  /** The fetch for https documents (tests inject one). */
  fetch?: typeof fetch;
}

export class RefParserSource implements DocumentSource {
  private readonly documents: DocumentRef[] = [];
  private readonly indexById = new Map<string, number>();
  private readonly loaded = new Map<string, Promise<JsonValue>>();
  /** Our own refusal behind a failed library call, by opaque id (the library wraps what plugins throw). */
  private readonly failures = new Map<string, unknown>();
  private readonly parserOptions: ParserOptions;

  private constructor(
    private readonly files: RootedFiles,
    private readonly options: SourceOptions,
  ) {
    this.parserOptions = this.createParserOptions();
  }

  /** Open the root and locate the manifest (which must lie under it). */
  static async open(
    manifestPath: string,
    options: SourceOptions,
  ): Promise<{ source: RefParserSource; manifest: DocumentRef }> {
    const files = await RootedFiles.open(options.root, options.limits.maxDocumentBytes);
    const manifest = await files.locateManifest(manifestPath);
    return { source: new RefParserSource(files, options), manifest };
  }

  /** Every document read so far, as messages name them (the manifest first). */
  get labels(): string[] {
    return this.documents.map((doc) => doc.label);
  }

  async resolve(ref: string, from: DocumentRef, site: RefSite): Promise<DocumentRef> {
    const quoted = quoteRef(ref);
    const hash = ref.indexOf('#');
    const target = hash < 0 ? ref : ref.slice(0, hash);
    const scheme = schemePattern.exec(target)?.[1]?.toLowerCase();
    if (from.kind === 'file') {
      if (/^[\\/]/.test(target))
        throw refuseAt(
          'EXTERNAL_REF',
          site,
          `$ref ${quoted} is an absolute path; refer to files relative to the manifest`,
        );
      if (scheme === 'https' && !this.options.allowHttp)
        throw refuseAt('EXTERNAL_REF', site, `$ref ${quoted} needs the network; it is only read with --allow-http`);
      if (scheme !== undefined && scheme !== 'file' && scheme !== 'https')
        throw refuseAt(
          'EXTERNAL_REF',
          site,
          `$ref ${quoted} is not a file under the root (nor https: with --allow-http)`,
        );
    }
    const url = parseUrl(target, from.url, quoted, site, scheme !== undefined);
    if (url.protocol === 'file:') {
      if (from.kind !== 'file')
        throw refuseAt(
          'EXTERNAL_REF',
          site,
          `$ref ${quoted} in a document fetched over https may not read local files`,
        );
      return this.files.locate(url, ref, site);
    }
    if (url.protocol !== 'https:' || !this.options.allowHttp)
      throw refuseAt(
        'EXTERNAL_REF',
        site,
        `$ref ${quoted} is not a file under the root (nor https: with --allow-http)`,
      );
    if (url.username !== '' || url.password !== '')
      throw refuseAt('EXTERNAL_REF', site, `$ref ${quoted} carries credentials; they are never sent`);
    url.hash = '';
    return { id: url.href, kind: 'https', url, label: url.href };
  }

  load(doc: DocumentRef, site: RefSite): Promise<JsonValue> {
    let value = this.loaded.get(doc.id);
    if (value === undefined) {
      value = this.read(doc, site);
      this.loaded.set(doc.id, value);
    }
    return value;
  }

  private async read(doc: DocumentRef, site: RefSite): Promise<JsonValue> {
    if (this.documents.length >= this.options.limits.maxDocuments)
      throw refuseAt(
        'EXPANSION_LIMIT',
        site,
        `the build would read more than ${this.options.limits.maxDocuments} documents`,
      );
    const index = this.documents.push(doc) - 1;
    this.indexById.set(doc.id, index);
    const opaque = `${OPAQUE_SCHEME}${index}`;
    try {
      return (await new $RefParser().parse(opaque, this.parserOptions)) as JsonValue;
    } catch (error) {
      const failure = this.failures.get(opaque) ?? error;
      // The manifest's own refusals keep their pointers into the manifest; a schema file's name the file.
      if (index === 0 || !(failure instanceof ToolsealError)) throw failure;
      const inner = failure.pointer === undefined ? '' : ` (at ${failure.pointer} in that file)`;
      throw refuseAt(failure.code, site, `${doc.label}: ${failure.message}${inner}`, failure);
    }
  }

  private documentFor(file: FileInfo): DocumentRef | undefined {
    if (!file.url.startsWith(OPAQUE_SCHEME)) return undefined;
    return this.documents[Number(file.url.slice(OPAQUE_SCHEME.length))];
  }

  /** Run a plugin step, remembering our own refusal so that `read` can rethrow it unwrapped. */
  private async remember<T>(file: FileInfo, step: () => Promise<T>): Promise<T> {
    try {
      return await step();
    } catch (error) {
      this.failures.set(file.url, error);
      throw error;
    }
  }

  private createParserOptions(): ParserOptions {
    const resolverFor = (kind: DocumentRef['kind'], read: (doc: DocumentRef) => Promise<Uint8Array>) => ({
      order: 1,
      canRead: (file: FileInfo) => this.documentFor(file)?.kind === kind,
      read: (file: FileInfo) =>
        this.remember(file, async () => {
          const doc = this.documentFor(file);
          if (doc?.kind !== kind) throw new ToolsealError('INTERNAL', 'unknown build document');
          return Buffer.from(await read(doc));
        }),
    });
    const { limits } = this.options;
    const https = (doc: DocumentRef) =>
      fetchHttpsDocument(doc.url, {
        maxBytes: limits.maxDocumentBytes,
        timeoutMs: limits.httpTimeoutMs,
        ...(this.options.fetch === undefined ? {} : { fetch: this.options.fetch }),
      });
    return {
      resolve: {
        external: false,
        file: false,
        http: false,
        rootedFile: resolverFor('file', (doc) => this.files.read(doc)),
        ...(this.options.allowHttp ? { boundedHttps: resolverFor('https', https) } : {}),
      },
      parse: {
        json: false,
        yaml: false,
        text: false,
        binary: false,
        strictJson: {
          order: 1,
          allowEmpty: true,
          canParse: true,
          parse: (file: FileInfo) =>
            this.remember(file, async () => parseSchemaDocument(file, this.documentFor(file) === this.documents[0])),
        },
      },
      continueOnError: false,
    };
  }
}

/** The pipeline's strict parse; the manifest must also pass the closed envelope, as it will in the pipeline. */
function parseSchemaDocument(file: FileInfo, isManifest: boolean): JsonValue {
  const data = file.data;
  const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : new Uint8Array(data);
  const parsed = parseStrict(bytes, { maxBytes: Number.MAX_SAFE_INTEGER, maxDepth: defaultParseLimits.maxDepth });
  if (isManifest) checkEnvelope(parsed);
  const { value } = parsed;
  if ((typeof value === 'object' && value !== null) || typeof value === 'boolean') return value;
  throw new ToolsealError('UNSUPPORTED_REF', 'the document is not a JSON Schema (an object or a boolean)');
}

function parseUrl(target: string, base: URL, quoted: string, site: RefSite, absolute: boolean): URL {
  try {
    return new URL(target, base);
  } catch (cause) {
    // An absolute URI this build cannot even parse certainly names nothing under the root.
    if (absolute) throw refuseAt('EXTERNAL_REF', site, `$ref ${quoted} is not a file under the root`, cause);
    throw refuseAt('UNSUPPORTED_REF', site, `$ref ${quoted} is not a valid URI reference`, cause);
  }
}

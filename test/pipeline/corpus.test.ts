// Real MCP tool definitions (test/vectors/corpus) and our sample manifests (manifests/): accepted, and their bytes stable.

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { runPipeline, type JsonValue } from '../../src/pipeline/index.ts';
import {
  corpusManifestBytes,
  corpusManifestName,
  expectRefusal,
  fromUtf8,
  listFiles,
  readJsonFile,
  referenceJcs,
  repoPath,
  vectorPath,
} from '../helpers/pipeline-helpers.ts';

interface CorpusDigests {
  digests: Record<string, { name: string; digest: string; size: number; tools: number }>;
  refused: Record<string, { code: string; pointer: string }>;
}

interface ManifestDigests {
  digests: Record<string, { name: string; version: string; digest: string; size: number; renamedTools: unknown[] }>;
}

const corpusFiles = listFiles(vectorPath('corpus'), '.tools.json');
const corpusExpected = readJsonFile<CorpusDigests>(vectorPath('corpus-digests.json'));
const manifestFiles = listFiles(repoPath('manifests'), '.json');
const manifestExpected = readJsonFile<ManifestDigests>(vectorPath('manifest-digests.json'));

const sha256 = (bytes: Uint8Array) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('test/vectors/corpus as manifests', () => {
  it('every corpus file has an expected outcome recorded, and every record names a corpus file', () => {
    expect(corpusFiles.length).toBeGreaterThanOrEqual(10);
    expect([...Object.keys(corpusExpected.digests), ...Object.keys(corpusExpected.refused)].sort()).toEqual(
      corpusFiles,
    );
  });

  it('mcp-spec-examples.tools.json is refused: calculate_sum appears twice (NAME_COLLISION at /tools/3/name)', () => {
    const refusal = expectRefusal(
      () => runPipeline(corpusManifestBytes('mcp-spec-examples.tools.json')),
      'NAME_COLLISION',
      '/tools/3/name',
    );
    expect(refusal.message).toContain('calculate_sum');
    expect(corpusExpected.refused['mcp-spec-examples.tools.json']).toEqual({
      code: 'NAME_COLLISION',
      pointer: '/tools/3/name',
    });
  });

  for (const file of corpusFiles.filter((f) => f !== 'mcp-spec-examples.tools.json')) {
    it(`${file} passes with the recorded digest, stable across runs`, () => {
      const bytes = corpusManifestBytes(file);
      const first = runPipeline(bytes);
      const second = runPipeline(corpusManifestBytes(file));
      const expected = corpusExpected.digests[file];
      expect(expected, `no recorded digest for ${file}`).toBeDefined();
      expect({ name: first.name, digest: first.digest, size: first.size, tools: first.manifest.tools.length }).toEqual({
        ...expected,
        name: corpusManifestName(file),
      });
      expect(second.digest).toBe(first.digest);
      expect(Buffer.from(second.canonicalBytes).equals(Buffer.from(first.canonicalBytes))).toBe(true);
      // The digest is sha256 of exactly these bytes, and the bytes are JCS by an independent implementation.
      expect(sha256(first.canonicalBytes)).toBe(first.digest);
      expect(fromUtf8(first.canonicalBytes)).toBe(referenceJcs(first.manifest as unknown as JsonValue));
      expect(first.size).toBe(first.canonicalBytes.byteLength);
    });
  }
});

describe('manifests/*.json', () => {
  it('every sample manifest has a recorded digest, and every record names a sample manifest', () => {
    expect(manifestFiles.length).toBeGreaterThan(0);
    expect(Object.keys(manifestExpected.digests).sort()).toEqual(manifestFiles);
  });

  for (const file of manifestFiles) {
    it(`${file} passes with the recorded digest`, () => {
      const bytes = readFileSync(repoPath('manifests', file));
      const result = runPipeline(bytes);
      expect({
        name: result.name,
        version: result.version,
        digest: result.digest,
        size: result.size,
        renamedTools: result.renamedTools,
      }).toEqual(manifestExpected.digests[file]);
      expect(runPipeline(bytes).digest).toBe(result.digest);
      expect(sha256(result.canonicalBytes)).toBe(result.digest);
      expect(fromUtf8(result.canonicalBytes)).toBe(referenceJcs(result.manifest as unknown as JsonValue));
      // The canonical bytes are a fixed point.
      expect(runPipeline(result.canonicalBytes).digest).toBe(result.digest);
    });
  }
});

// `manifest from-server-json` (issue 27 §1): a vendor's server.json becomes the signed server member of a draft.

import { readFileSync } from 'node:fs';
import { load as loadYaml } from 'js-yaml';
import { describe, expect, it } from 'vitest';
import type { JsonObject } from '../../src/core/json.ts';
import {
  attachServerJson,
  draftManifestFromServerJson,
  readToolsOfManifest,
} from '../../src/build/from-server-json.ts';
import { encodeJson, expectRefusal, repoPath, vectorPath } from '../helpers/pipeline-helpers.ts';

const fixtureDir = repoPath('test', 'fixtures', 'server-manifests');
const serverJsonBytes = readFileSync(`${fixtureDir}/everything.server.json`);
const capturedTools = readToolsOfManifest(readFileSync(`${fixtureDir}/everything-npm.json`));

describe('draftManifestFromServerJson', () => {
  it('takes name, version, description and the reach fields; lists what a manifest has no place for', () => {
    const draft = draftManifestFromServerJson(serverJsonBytes);
    const serverJson = JSON.parse(serverJsonBytes.toString('utf8')) as Record<string, unknown>;
    expect(Object.keys(draft.manifest)).toEqual(['name', 'version', 'description', 'tools', 'server']);
    expect(draft.manifest['tools']).toEqual([]);
    expect(draft.manifest['server']).toEqual({
      title: serverJson['title'],
      websiteUrl: serverJson['websiteUrl'],
      repository: serverJson['repository'],
      packages: serverJson['packages'],
    });
    expect(draft.leftOut).toEqual(['/$schema', '/_meta']);
    expect(draft.result).toBeUndefined();
    expect(JSON.parse(draft.text)).toEqual(draft.manifest);
  });

  it('with tools, the draft is publishable: the pipeline ran and the server is in the signed bytes', () => {
    const draft = draftManifestFromServerJson(serverJsonBytes, { tools: capturedTools });
    const signed = JSON.parse(new TextDecoder().decode(draft.result?.canonicalBytes)) as Record<string, unknown>;
    expect(signed['server']).toEqual(draft.manifest['server']);
    expect(draft.result?.name).toBe('io.github.modelcontextprotocol/everything');
  });

  it('overrides a name a manifest cannot carry, and refuses it otherwise at /name', () => {
    const upper = encodeJson({ ...JSON.parse(serverJsonBytes.toString('utf8')), name: 'io.github.User/Weather' });
    expectRefusal(() => draftManifestFromServerJson(upper), 'INVALID_MANIFEST', '/name');
    expect(draftManifestFromServerJson(upper, { name: 'io.github.user/weather' }).manifest['name']).toBe(
      'io.github.user/weather',
    );
  });

  it('refuses the OpenAPI document’s own publish example (its npm package has no transport) at the manifest pointer', () => {
    const openapi = loadYaml(readFileSync(vectorPath('mcp-registry', 'openapi.yaml'), 'utf8')) as {
      paths: Record<
        string,
        { post?: { requestBody: { content: Record<string, { examples: Record<string, { value: unknown }> }> } } }
      >;
    };
    const example = openapi.paths['/v0.1/publish']?.post?.requestBody.content['application/json']?.examples[
      'basic_server'
    ]?.value as Record<string, unknown>;
    expectRefusal(
      () => draftManifestFromServerJson(encodeJson(example)),
      'INVALID_MANIFEST',
      '/server/packages/0/transport',
    );
  });

  it('refuses a version range in a package and hidden characters, as publish would', () => {
    const serverJson = JSON.parse(serverJsonBytes.toString('utf8')) as { packages: Record<string, unknown>[] };
    const ranged = { ...serverJson, packages: [{ ...serverJson.packages[0], version: '^2026.8.31' }] };
    expectRefusal(
      () => draftManifestFromServerJson(encodeJson(ranged)),
      'INVALID_MANIFEST',
      '/server/packages/0/version',
    );
    const hidden = {
      ...serverJson,
      packages: [{ ...serverJson.packages[0], identifier: '@modelcontextprotocol/server-everything\u202e' }],
    };
    expectRefusal(
      () => draftManifestFromServerJson(encodeJson(hidden)),
      'HIDDEN_CHARACTER',
      '/server/packages/0/identifier',
    );
  });
});

describe('attachServerJson (manifest build --server-json)', () => {
  const manifest = JSON.parse(readFileSync(`${fixtureDir}/everything-npm.json`, 'utf8')) as JsonObject;
  const { server: _signed, ...withoutServer } = manifest;

  it('replaces the server member with the server.json reach fields and signs the result', () => {
    const attached = attachServerJson(withoutServer, serverJsonBytes);
    const serverJson = JSON.parse(serverJsonBytes.toString('utf8')) as Record<string, unknown>;
    expect(attached.manifest['server']).toEqual({
      title: serverJson['title'],
      websiteUrl: serverJson['websiteUrl'],
      repository: serverJson['repository'],
      packages: serverJson['packages'],
    });
    const signed = JSON.parse(new TextDecoder().decode(attached.result.canonicalBytes)) as Record<string, unknown>;
    expect(signed['server']).toEqual(attached.manifest['server']);
  });

  it('refuses a server.json of another server or version', () => {
    expectRefusal(
      () => attachServerJson({ ...withoutServer, version: '2026.8.30' }, serverJsonBytes),
      'INVALID_MANIFEST',
      '/version',
    );
    expectRefusal(
      () => attachServerJson({ ...withoutServer, name: 'io.github.acme/other' }, serverJsonBytes),
      'INVALID_MANIFEST',
      '/name',
    );
  });
});

describe('the registry’s own server.json examples (vendored)', () => {
  const example = (file: string) => readFileSync(vectorPath('mcp-registry', 'examples', file));

  it('with-package: drafts a manifest whose server is the example’s package, as the official schema has it', () => {
    const draft = draftManifestFromServerJson(example('valid-with-package.json'), { tools: capturedTools });
    const serverJson = JSON.parse(example('valid-with-package.json').toString('utf8')) as JsonObject;
    expect(draft.manifest['server']).toEqual({ packages: serverJson['packages'] });
    expect(draft.result?.name).toBe('io.github.user/local-weather');
  });

  it('with-remote: refused, since its variable is the whole host (toolseal signs remotes that name their host)', () => {
    expectRefusal(
      () => draftManifestFromServerJson(example('valid-with-remote.json')),
      'INVALID_MANIFEST',
      '/server/remotes/0/url',
    );
  });

  it('package-version-latest: refused at the package version', () => {
    expectRefusal(
      () => draftManifestFromServerJson(example('invalid-package-version-latest.json')),
      'INVALID_MANIFEST',
      '/server/packages/0/version',
    );
  });
});

// `toolseal keys rotate`: a new signing key becomes active; the old one is retired but kept in the JWKS.
// `toolseal keys pem`: the PEM (RFC 7468 §13) of a P-256 Sigstore bundle key of a JWKS, for `cosign … --key`.

import { parseArgs } from 'node:util';
import { exportSpkiPem, selectUsableBundleKeys } from '../attest/index.ts';
import { rotateSigningKey } from '../server/index.ts';
import { resolveDatabaseUrl, resolveDataDir, resolveKeysDir } from './config.ts';
import { UsageError, writeStdout, type ExitCode } from './output.ts';
import { ToolsealError } from '../core/errors.ts';
import { readJwksFile } from './verify.ts';

export const keysUsage = `toolseal keys rotate [--data DIR | --database URL] [--keys DIR]
  Generates a new Ed25519 signing key and makes it active; the previous key is retired (it stays in
  /.well-known/jwks.json with its validity window). The rotation is recorded in the transparency log.
  Prints {"retired": kid, "active": kid}. A running server picks the new key up on its next publish.
  DIR is relative to the folder the command was run from. --database URL (or TOOLSEAL_DATABASE_URL) instead
  of --data: a PostgreSQL registry.
toolseal keys pem --jwks FILE --kid KID
  Prints the PEM public key of the P-256 Sigstore bundle key KID (a bundle's verificationMaterial.publicKey.hint)
  from a JWKS file (the registry's /.well-known/jwks.json): the key \`cosign verify-blob-attestation --key\` takes.
  Only a P-256 key named by its RFC 7638 thumbprint is used (docs/sigstore.md).`;

export async function runKeysCommand(args: string[]): Promise<ExitCode> {
  const { values, positionals } = parseArgs({
    args,
    options: {
      data: { type: 'string' },
      database: { type: 'string' },
      keys: { type: 'string' },
      jwks: { type: 'string' },
      kid: { type: 'string' },
    },
    allowPositionals: true,
  });
  if (positionals.length === 1 && positionals[0] === 'pem') return printBundleKeyPem(values.jwks, values.kid);
  if (positionals.length !== 1 || positionals[0] !== 'rotate')
    throw new UsageError(`expected the subcommand rotate or pem, got ${JSON.stringify(positionals.join(' '))}`);
  const result = await rotateSigningKey({
    dataDir: resolveDatabaseUrl(values.database) ?? resolveDataDir(values.data),
    keysDir: resolveKeysDir(values.keys),
    origin: process.env['TOOLSEAL_ORIGIN'] ?? 'http://127.0.0.1',
  });
  await writeStdout(`${JSON.stringify(result)}\n`);
  return 0;
}

async function printBundleKeyPem(jwks: string | undefined, kid: string | undefined): Promise<ExitCode> {
  if (jwks === undefined || kid === undefined) throw new UsageError('keys pem needs --jwks FILE and --kid KID');
  const key = selectUsableBundleKeys(await readJwksFile(jwks)).get(kid);
  if (key === undefined) throw new ToolsealError('UNKNOWN_KEY', `the JWKS has no P-256 bundle key ${kid}`);
  await writeStdout(exportSpkiPem(key.publicKey));
  return 0;
}

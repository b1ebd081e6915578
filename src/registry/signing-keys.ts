// The registry's attestation signing keys (RFC 7517 JWKS, RFC 8037 Ed25519): the first key generated, registered and
// logged on first start; rotation retires the active key (kept in the JWKS with its `exp`) and logs the new one; a
// key file whose registration failed is deleted, so the keys folder never holds an orphan private key.

import { rmSync } from 'node:fs';
import { buildJwks, type Jwks, type KeyValidity, type PublicJwk, type SigningKey } from '../attest/index.ts';
import { generateSigningKey, loadSigningKey, signingKeyFile } from '../keys/key-files.ts';
import { formatKeyEntry } from '../log/entries.ts';
import type { KeyStore, StoreTransactions } from '../store/index.ts';
import type { TransparencyLog } from './transparency-log.ts';

export interface SigningKeyDeps {
  store: KeyStore & StoreTransactions & { getLogSize(): Promise<number> };
  log: TransparencyLog;
  keysDir: string;
  clock: () => Date;
}

/** The active key and the retired ones, with their windows (what the JWKS publishes). */
export async function listKeyValidities(store: KeyStore): Promise<KeyValidity[]> {
  return (await store.listSigningKeys()).map((key) => ({
    kid: key.kid,
    publicJwk: JSON.parse(key.publicJwk) as PublicJwk,
    notBefore: key.notBefore,
    notAfter: key.notAfter,
  }));
}

export async function buildRegistryJwks(store: KeyStore): Promise<Jwks> {
  return buildJwks(await listKeyValidities(store));
}

/** The active key's private half, when one is registered (its file must load). */
export async function loadActiveSigningKey(
  deps: Pick<SigningKeyDeps, 'store' | 'keysDir'>,
): Promise<SigningKey | undefined> {
  const active = (await deps.store.listSigningKeys()).find((key) => key.notAfter === null);
  return active ? loadSigningKey(deps.keysDir, active.kid) : undefined;
}

/**
 * First start: a signing key is generated, registered and logged (its leaf; the caller signs the checkpoint). With
 * several processes starting on one new database, the first to get the writer lock registers its key and the others
 * load it (the keys folder is shared).
 */
export async function registerFirstSigningKey(deps: SigningKeyDeps): Promise<SigningKey> {
  const key = generateSigningKey(deps.keysDir);
  const registered = await removeKeyFileOnFailure(deps.keysDir, key, () =>
    deps.store.transaction(async () => {
      const existing = await loadActiveSigningKey(deps);
      if (existing) return existing;
      const notBefore = Math.floor(deps.clock().getTime() / 1000);
      const leaf = formatKeyEntry({ kid: key.kid, publicJwk: key.publicJwk, notBefore, retires: null });
      const logIndex = await deps.log.appendLeaf('key', leaf);
      await deps.store.insertSigningKey({
        kid: key.kid,
        publicJwk: JSON.stringify(key.publicJwk),
        notBefore,
        notAfter: null,
        logIndex,
      });
      return key;
    }),
  );
  if (registered !== key) rmSync(signingKeyFile(deps.keysDir, key.kid), { force: true });
  return registered;
}

/** Make a new key active and retire the current one (kept in the JWKS with its `exp`); logged, in a signed checkpoint. */
export async function rotateSigningKey(deps: SigningKeyDeps): Promise<{ retired: string; active: string }> {
  const fresh = generateSigningKey(deps.keysDir);
  const retired = await removeKeyFileOnFailure(deps.keysDir, fresh, () =>
    deps.store.transaction(async () => {
      const current = (await deps.store.listSigningKeys()).find((key) => key.notAfter === null);
      const now = deps.clock().getTime() / 1000;
      const notBefore = Math.floor(now);
      // The old key stays valid through the current second, so nothing it signed just now is orphaned.
      const notAfter = Math.floor(now) + 1;
      if (current) await deps.store.retireSigningKey(current.kid, notAfter);
      const leaf = formatKeyEntry({
        kid: fresh.kid,
        publicJwk: fresh.publicJwk,
        notBefore,
        retires: current ? { kid: current.kid, notAfter } : null,
      });
      const logIndex = await deps.log.appendLeaf('key', leaf);
      await deps.store.insertSigningKey({
        kid: fresh.kid,
        publicJwk: JSON.stringify(fresh.publicJwk),
        notBefore,
        notAfter: null,
        logIndex,
      });
      return current?.kid ?? '';
    }),
  );
  await deps.log.awaitCheckpointIncluding((await deps.store.getLogSize()) - 1);
  return { retired, active: fresh.kid };
}

async function removeKeyFileOnFailure<T>(keysDir: string, key: SigningKey, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    rmSync(signingKeyFile(keysDir, key.kid), { force: true });
    throw error;
  }
}

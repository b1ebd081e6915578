// Semantic Versioning 2.0.0 precedence (semver.org §11): the one version order of `latest`, the API's version
// lists and the web pages (docs/manifest-format.md). Numeric identifiers compare exactly, however many digits (the
// pipeline refuses leading zeros); versions of equal precedence (differing only in build metadata, §10) are ordered
// by their build metadata in UTF-16 code units, so the order is total and the same everywhere.

interface ParsedVersion {
  core: [string, string, string];
  prerelease: string[];
  build: string;
}

function parseVersion(version: string): ParsedVersion {
  const plus = version.indexOf('+');
  const withoutBuild = plus < 0 ? version : version.slice(0, plus);
  const dash = withoutBuild.indexOf('-');
  const core = (dash < 0 ? withoutBuild : withoutBuild.slice(0, dash)).split('.') as [string, string, string];
  const prerelease = dash < 0 ? [] : withoutBuild.slice(dash + 1).split('.');
  return { core, prerelease, build: plus < 0 ? '' : version.slice(plus + 1) };
}

/** Two digit strings without leading zeros, numerically: the longer is larger, else the first differing digit. */
function compareNumeric(x: string, y: string): number {
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

/**
 * Negative when a < b, positive when a > b, 0 only for the same string: SemVer 2.0.0 precedence, then (equal
 * precedence) build metadata in UTF-16 code-unit order, no build metadata first.
 */
export function compareVersions(a: string, b: string): number {
  const precedence = comparePrecedence(a, b);
  if (precedence !== 0) return precedence;
  const left = parseVersion(a).build;
  const right = parseVersion(b).build;
  return left < right ? -1 : left > right ? 1 : 0;
}

/** SemVer 2.0.0 §11 precedence: 0 when equal in precedence (build metadata is ignored, §10). */
export function comparePrecedence(a: string, b: string): number {
  const left = parseVersion(a);
  const right = parseVersion(b);
  for (let i = 0; i < 3; i++) {
    const difference = compareNumeric(left.core[i]!, right.core[i]!);
    if (difference !== 0) return difference;
  }
  // §11.3: a pre-release version has lower precedence than the normal version.
  if (left.prerelease.length === 0 || right.prerelease.length === 0)
    return right.prerelease.length - left.prerelease.length;
  for (let i = 0; i < Math.min(left.prerelease.length, right.prerelease.length); i++) {
    const x = left.prerelease[i]!;
    const y = right.prerelease[i]!;
    if (x === y) continue;
    const xNumeric = /^[0-9]+$/.test(x);
    const yNumeric = /^[0-9]+$/.test(y);
    // §11.4: numeric identifiers compare numerically and sort before alphanumeric ones.
    if (xNumeric && yNumeric) return compareNumeric(x, y);
    if (xNumeric !== yNumeric) return xNumeric ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return left.prerelease.length - right.prerelease.length;
}

export function isPrerelease(version: string): boolean {
  return (version.split('+', 1)[0] ?? '').includes('-');
}

/**
 * The version `latest` means: the highest release, or the highest pre-release when there is no release (in the
 * order of compareVersions, so of two releases equal in precedence the one with the later build metadata).
 */
export function pickLatestVersion(versions: readonly string[]): string | undefined {
  const releases = versions.filter((version) => !isPrerelease(version));
  const pool = releases.length > 0 ? releases : versions;
  let best: string | undefined;
  for (const version of pool) if (best === undefined || compareVersions(version, best) > 0) best = version;
  return best;
}

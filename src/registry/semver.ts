// Semantic Versioning 2.0.0 precedence (semver.org §11), for `latest` and listings.

interface ParsedVersion {
  core: [number, number, number];
  prerelease: string[];
}

function parseVersion(version: string): ParsedVersion {
  const withoutBuild = version.split('+', 1)[0] ?? version;
  const dash = withoutBuild.indexOf('-');
  const core = (dash < 0 ? withoutBuild : withoutBuild.slice(0, dash)).split('.').map(Number) as [
    number,
    number,
    number,
  ];
  const prerelease = dash < 0 ? [] : withoutBuild.slice(dash + 1).split('.');
  return { core, prerelease };
}

/** Negative when a < b, positive when a > b, 0 when equal in precedence (build metadata is ignored, §10). */
export function compareVersions(a: string, b: string): number {
  const left = parseVersion(a);
  const right = parseVersion(b);
  for (let i = 0; i < 3; i++) {
    const difference = left.core[i]! - right.core[i]!;
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
    if (xNumeric && yNumeric) return Number(x) - Number(y);
    if (xNumeric !== yNumeric) return xNumeric ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return left.prerelease.length - right.prerelease.length;
}

export function isPrerelease(version: string): boolean {
  return (version.split('+', 1)[0] ?? '').includes('-');
}

/** The version `latest` means: the highest release, or the highest pre-release when there is no release. */
export function pickLatestVersion(versions: readonly string[]): string | undefined {
  const releases = versions.filter((version) => !isPrerelease(version));
  const pool = releases.length > 0 ? releases : versions;
  let best: string | undefined;
  for (const version of pool) if (best === undefined || compareVersions(version, best) > 0) best = version;
  return best;
}

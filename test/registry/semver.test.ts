// The one version order (src/registry/semver.ts): SemVer 2.0.0 §11 precedence, exact for numeric identifiers of
// any length, and total (build metadata breaks ties) so `latest`, the API's lists and the web pages agree.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { comparePrecedence, compareVersions, pickLatestVersion } from '../../src/registry/semver.ts';

const numeric = fc.oneof(fc.constant('0'), fc.bigInt({ min: 1n, max: 10n ** 30n }).map(String));
const identifier = fc.oneof(numeric, fc.stringMatching(/^[0-9A-Za-z-]*[A-Za-z-][0-9A-Za-z-]*$/));
const version = fc
  .tuple(
    fc.tuple(numeric, numeric, numeric),
    fc.array(identifier, { maxLength: 3 }),
    fc.array(fc.stringMatching(/^[0-9A-Za-z-]+$/), { maxLength: 2 }),
  )
  .map(
    ([core, pre, build]) =>
      `${core.join('.')}${pre.length > 0 ? `-${pre.join('.')}` : ''}${build.length > 0 ? `+${build.join('.')}` : ''}`,
  );

describe('compareVersions', () => {
  it('orders the example of semver.org §11.4', () => {
    const ordered = [
      '1.0.0-alpha',
      '1.0.0-alpha.1',
      '1.0.0-alpha.beta',
      '1.0.0-beta',
      '1.0.0-beta.2',
      '1.0.0-beta.11',
      '1.0.0-rc.1',
      '1.0.0',
      '1.0.1',
      '1.2.0',
      '1.10.0',
      '2.0.0',
    ];
    expect([...ordered].reverse().sort(compareVersions)).toEqual(ordered);
  });

  it('compares numbers past 2^53 exactly (Number would call these equal)', () => {
    expect(compareVersions('9007199254740993.0.0', '9007199254740992.0.0')).toBeGreaterThan(0);
    expect(compareVersions('1.0.0-90071992547409931', '1.0.0-90071992547409930')).toBeGreaterThan(0);
  });

  it('is total: build metadata breaks a tie of precedence, and only the same string compares 0', () => {
    expect(comparePrecedence('1.0.0+b', '1.0.0+a')).toBe(0);
    expect(['1.0.0+b', '1.0.0', '1.0.0+a'].sort(compareVersions)).toEqual(['1.0.0', '1.0.0+a', '1.0.0+b']);
    fc.assert(
      fc.property(version, version, (a, b) => {
        const forward = Math.sign(compareVersions(a, b));
        expect(forward).toBe(-Math.sign(compareVersions(b, a)) || 0);
        expect(forward === 0).toBe(a === b);
      }),
    );
  });

  it('is transitive, so every sort gives the same list', () => {
    fc.assert(
      fc.property(fc.array(version, { maxLength: 8 }), (versions) => {
        const sorted = [...versions].sort(compareVersions);
        expect([...versions].reverse().sort(compareVersions)).toEqual(sorted);
        for (let i = 1; i < sorted.length; i++)
          expect(compareVersions(sorted[i - 1]!, sorted[i]!)).toBeLessThanOrEqual(0);
      }),
    );
  });
});

describe('pickLatestVersion', () => {
  it('the highest release, else the highest pre-release', () => {
    expect(pickLatestVersion(['1.10.0', '1.9.0', '2.0.0-rc.1'])).toBe('1.10.0');
    expect(pickLatestVersion(['2.0.0-rc.1', '2.0.0-rc.10', '2.0.0-rc.2'])).toBe('2.0.0-rc.10');
    expect(pickLatestVersion([])).toBeUndefined();
  });
});

// The capability declaration in plain words (src/web/capability-words.ts): declared, none, and no claim
// (docs/manifest-format.md "Declared, none, and absent"), and amounts in ISO 4217 minor units.

import { describe, expect, it } from 'vitest';
import {
  describeAnnotations,
  describeCapabilities,
  describeNoClaim,
  formatMinorAmount,
} from '../../src/web/capability-words.ts';

describe('capability words', () => {
  it('says each declared item, "none" for an empty list, and "no claim" for an absent one', () => {
    const areas = describeCapabilities({
      network: { hosts: ['api.stripe.com:443', '*.example.com', '*'] },
      filesystem: { read: ['/data/**'], write: [] },
      money: { currencies: ['USD'], maxAmountMinorPerCall: 50000 },
    });
    expect(areas).toEqual([
      {
        area: 'network',
        claim: 'declared',
        phrases: [
          'opens connections to api.stripe.com:443',
          'opens connections to any host under example.com',
          'opens connections to any host',
        ],
      },
      { area: 'filesystem.read', claim: 'declared', phrases: ['reads /data/**'] },
      { area: 'filesystem.write', claim: 'declared', phrases: ['writes no files'] },
      { area: 'secrets', claim: 'no-claim', phrases: [] },
      { area: 'money', claim: 'declared', phrases: ['moves up to 500.00 USD per call'] },
    ]);
    expect(describeNoClaim('secrets')).toBe('makes no claim about secrets (unknown, not none)');
  });

  it('says money without a ceiling, a zero ceiling, and no currencies', () => {
    const money = (m: object) => describeCapabilities({ money: m })[4]?.phrases;
    expect(money({ currencies: ['EUR'] })).toEqual(['moves EUR with no declared ceiling per call']);
    expect(money({ currencies: ['EUR'], maxAmountMinorPerCall: 0 })).toEqual(['handles EUR but moves no amount']);
    expect(money({ currencies: [] })).toEqual(['moves no money']);
    expect(describeCapabilities({ money: {} })[4]?.claim).toBe('no-claim');
  });

  it('writes minor units as major units exactly, per currency', () => {
    expect(formatMinorAmount(50000, 'USD')).toBe('500.00 USD');
    expect(formatMinorAmount(5, 'EUR')).toBe('0.05 EUR');
    expect(formatMinorAmount(1999, 'JPY')).toBe('1999 JPY');
    expect(formatMinorAmount(1500, 'BHD')).toBe('1.500 BHD');
    expect(formatMinorAmount(9007199254740991, 'USD')).toBe('90071992547409.91 USD');
  });

  it('says annotations as hints', () => {
    expect(describeAnnotations({ readOnlyHint: true, openWorldHint: false, title: 'T' })).toEqual([
      'read-only',
      'closed world',
      'display title "T"',
    ]);
    expect(describeAnnotations(undefined)).toEqual([]);
  });
});

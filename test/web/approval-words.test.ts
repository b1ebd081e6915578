// The amount of an approval request in words: major units for the ISO 4217 currencies known, minor units otherwise,
// the currency read at the signed pointer or the tool's only currency.

import { describe, expect, it } from 'vitest';
import type { ManifestTool } from '../../src/pipeline/index.ts';
import { describeAmount, revealHiddenCharacters } from '../../src/web/approval-words.ts';
import { refundTool } from '../client/approvals-fixture.ts';

describe('describeAmount', () => {
  it('writes amounts in major units for known ISO 4217 currencies, minor units otherwise', () => {
    const tool = refundTool as unknown as ManifestTool;
    expect(describeAmount(tool, { amount: 4200, currency: 'USD' })).toBe('42.00 USD (4200 minor units)');
    expect(describeAmount(tool, { amount: 5, currency: 'USD' })).toBe('0.05 USD (5 minor units)');
    expect(describeAmount(tool, { amount: 4200, currency: 'JPY' })).toBe('4200 JPY (4200 minor units)');
    expect(describeAmount(tool, { amount: 4200, currency: 'KWD' })).toBe('4.200 KWD (4200 minor units)');
    expect(describeAmount(tool, { amount: 4200, currency: 'ZZZ' })).toBe('4200 minor units of ZZZ');
    const single = { ...refundTool, capabilities: { money: { currencies: ['EUR'], amountArgument: '/a' } } };
    expect(describeAmount(single as unknown as ManifestTool, { a: 100 })).toBe('1.00 EUR (100 minor units)');
    expect(describeAmount({ ...tool, capabilities: {} }, { amount: 1 })).toBeUndefined();
  });

  it('says when the amount is not one, or the currency is not bound', () => {
    const tool = refundTool as unknown as ManifestTool;
    expect(describeAmount(tool, { currency: 'USD' })).toBe('missing (not an amount in minor units)');
    expect(describeAmount(tool, { amount: 1.5, currency: 'USD' })).toBe('1.5 (not an amount in minor units)');
    expect(describeAmount(tool, { amount: 10 })).toBe('10 minor units (currency one of USD, JPY)');
  });
});

describe('revealHiddenCharacters', () => {
  it('writes controls, bidi, separators and invisible characters, nothing else', () => {
    expect(revealHiddenCharacters('a\u202Eb\u001b[0m\u2028\u200d\u00ad\t\u0085é€😀')).toBe(
      'a\\u{202E}b\\u{1B}[0m\\u{2028}\\u{200D}\\u{AD}\\u{9}\\u{85}é€😀',
    );
  });
});

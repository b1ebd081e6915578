// core/errors: the one error type, its public JSON form, the code list, and the two describing helpers.

import { describe, expect, it } from 'vitest';
import { describeError, ERROR_CODES, isErrorCode, toError, ToolsealError } from '../../src/core/errors.ts';

describe('ToolsealError', () => {
  it('serialises to code, message and pointer only (never the cause, which may carry paths)', () => {
    const error = new ToolsealError('MISSING_REF', 'nothing there', {
      pointer: '/tools/0',
      cause: new Error('/srv/x'),
    });
    expect(JSON.stringify(error)).toBe('{"code":"MISSING_REF","message":"nothing there","pointer":"/tools/0"}');
    expect(new ToolsealError('NOT_FOUND', 'no').toJSON()).toEqual({ code: 'NOT_FOUND', message: 'no' });
  });

  it('knows its codes: each once, and nothing else is one', () => {
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
    expect(isErrorCode('DUPLICATE_KEY')).toBe(true);
    expect(isErrorCode('duplicate_key')).toBe(false);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode(undefined)).toBe(false);
  });
});

describe('describeError and toError', () => {
  it('prefixes a ToolsealError with its code, and gives any other value as its text', () => {
    expect(describeError(new ToolsealError('PROOF_INVALID', 'no'))).toBe('PROOF_INVALID: no');
    expect(describeError(new Error('plain'))).toBe('plain');
    expect(describeError(7)).toBe('7');
  });

  it('keeps an Error as it is and wraps anything else', () => {
    const error = new Error('x');
    expect(toError(error)).toBe(error);
    expect(toError('text').message).toBe('text');
  });
});

// `--metrics-listen` and `--log-format` as serve and guard read them: 127.0.0.1 unless a host is named, ports in
// range, anything else a usage error.

import { describe, expect, it } from 'vitest';
import { resolveLogFormat, resolveMetricsListen } from '../../src/cli/config.ts';

describe('resolveMetricsListen', () => {
  it('defaults the host to 127.0.0.1 and keeps a named one', () => {
    expect(resolveMetricsListen('9464', 'TOOLSEAL_TEST_UNSET')).toEqual({ host: '127.0.0.1', port: 9464 });
    expect(resolveMetricsListen('0.0.0.0:9464', 'TOOLSEAL_TEST_UNSET')).toEqual({ host: '0.0.0.0', port: 9464 });
    expect(resolveMetricsListen('[::1]:0', 'TOOLSEAL_TEST_UNSET')).toEqual({ host: '::1', port: 0 });
    expect(resolveMetricsListen(undefined, 'TOOLSEAL_TEST_UNSET')).toBeUndefined();
  });
  it('refuses what is not [HOST:]PORT', () => {
    for (const text of ['65536', 'host:', ':80', 'a:b:80', '80x', '::1:80'])
      expect(() => resolveMetricsListen(text, 'TOOLSEAL_TEST_UNSET'), text).toThrow(/--metrics-listen/);
  });
});

describe('resolveLogFormat', () => {
  it('is text or json', () => {
    expect(resolveLogFormat('json')).toBe('json');
    expect(resolveLogFormat('text')).toBe('text');
    expect(() => resolveLogFormat('xml')).toThrow(/--log-format/);
  });
});

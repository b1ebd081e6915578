// The HTTP guard's header rules: end-to-end fields pass, hop-by-hop ones (RFC 9110 §7.6.1) and the guard's own hop
// do not; Host and Origin are checked against DNS rebinding.

import { describe, expect, it } from 'vitest';
import {
  describeLoopback,
  findRebindingRefusal,
  selectClientResponseHeaders,
  selectUpstreamRequestHeaders,
} from '../../../src/guard/http/http-headers.ts';

describe('selectUpstreamRequestHeaders', () => {
  it('passes Authorization and the MCP fields, drops hop-by-hop fields, those Connection names, and the guard’s hop', () => {
    const selected = selectUpstreamRequestHeaders({
      host: '127.0.0.1:8765',
      origin: 'http://localhost:8765',
      connection: 'keep-alive, x-hop',
      'keep-alive': 'timeout=5',
      'x-hop': 'secret-for-the-guard',
      te: 'trailers',
      'transfer-encoding': 'chunked',
      'content-length': '10',
      'accept-encoding': 'gzip',
      'proxy-authorization': 'Basic eA==',
      authorization: 'Bearer t',
      'mcp-session-id': 's1',
      'mcp-protocol-version': '2025-11-25',
      'last-event-id': 'e9',
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      cookie: 'a=1; b=2',
    });
    expect(selected).toEqual({
      authorization: 'Bearer t',
      'mcp-session-id': 's1',
      'mcp-protocol-version': '2025-11-25',
      'last-event-id': 'e9',
      accept: 'application/json, text/event-stream',
      'content-type': 'application/json',
      cookie: 'a=1; b=2',
    });
  });
});

describe('selectClientResponseHeaders', () => {
  it('passes Mcp-Session-Id, Content-Type and every Set-Cookie; drops framing, encoding, Location and the server’s CORS', () => {
    expect(
      selectClientResponseHeaders({
        'content-type': 'text/event-stream',
        'mcp-session-id': 's1',
        'www-authenticate': 'Bearer realm="x"',
        'set-cookie': ['a=1', 'b=2'],
        'transfer-encoding': 'chunked',
        'content-length': '5',
        'content-encoding': 'gzip',
        location: 'https://elsewhere.example/',
        connection: 'keep-alive',
        'keep-alive': 'timeout=5',
        'access-control-allow-origin': '*',
      }),
    ).toEqual({
      'content-type': 'text/event-stream',
      'mcp-session-id': 's1',
      'www-authenticate': 'Bearer realm="x"',
      'set-cookie': ['a=1', 'b=2'],
    });
  });
});

describe('findRebindingRefusal', () => {
  const identity = describeLoopback(8765, ['https://App.Example']);

  it('accepts the guard’s loopback Host, with no Origin, its own origins, and the allowed ones', () => {
    for (const host of ['127.0.0.1:8765', 'localhost:8765', 'LOCALHOST:8765'])
      expect(findRebindingRefusal({ host }, identity)).toBeUndefined();
    for (const origin of ['http://127.0.0.1:8765', 'http://localhost:8765', 'https://app.example'])
      expect(findRebindingRefusal({ host: '127.0.0.1:8765', origin }, identity)).toBeUndefined();
  });

  it('refuses another Host (a rebound name, another port, none) and any other Origin', () => {
    for (const host of ['attacker.example:8765', '127.0.0.1:8766', '127.0.0.1', undefined])
      expect(findRebindingRefusal(host === undefined ? {} : { host }, identity)).toContain('Host');
    for (const origin of ['http://evil.example', 'http://127.0.0.1:8766', 'https://localhost:8765', 'null', 'file://'])
      expect(findRebindingRefusal({ host: '127.0.0.1:8765', origin }, identity)).toContain('Origin');
  });
});

// Requests refused before the app sees them, answered like every other refusal: an RFC 9457 problem+json with a
// code. What Node's HTTP parser refuses (RFC 9112 message syntax: 400; a header section over its limit: 431, RFC 6585
// §5; a request not received in time: 408, RFC 9110 §15.5.9) arrives on the node:http `clientError` event with only a
// socket, so the answer is a complete raw HTTP/1.1 response written on it; what @hono/node-server refuses while
// building the Request (a backslash in the path, a Host it cannot use) comes to its errorHandler.

import { maxHeaderSize, STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { RequestError } from '@hono/node-server';
import type { ErrorCode } from '../core/errors.ts';
import { PROBLEM_CONTENT_TYPE } from '../protocol/problem.ts';
import { endAfterDraining, enforceLingerBytes, isLingering } from './lingering-close.ts';
import { formatProblem } from './problem.ts';

type ParserError = Error & { code?: string; reason?: string };

/**
 * Answer a `clientError` on `socket`: a problem response when the socket can still take one and no response of an
 * earlier request on it is still being written (`busy`), then a lingering close; a socket error, or a connection that
 * cannot be answered, is just closed. Errors on a connection already closing only count towards its byte bound.
 */
export function answerParserError(error: ParserError, socket: Socket, busy: boolean): void {
  if (isLingering(socket)) {
    enforceLingerBytes(socket);
    return;
  }
  const code = codeOfParserError(error);
  if (code === undefined || busy || !socket.writable) {
    socket.destroy();
    return;
  }
  endAfterDraining(socket, formatRawProblemResponse(code, describeParserError(code, error)));
}

/** The code for a parser refusal, or undefined for what is no request at all (a reset, a failed write…). */
export function codeOfParserError(error: ParserError): ErrorCode | undefined {
  switch (error.code) {
    case 'HPE_HEADER_OVERFLOW':
      return 'HEADERS_TOO_LARGE';
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return 'TOO_LARGE';
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'REQUEST_TIMEOUT';
    default:
      return error.code?.startsWith('HPE_') ? 'BAD_REQUEST' : undefined;
  }
}

/** A complete HTTP/1.1 response carrying the problem for `code`, closing the connection (RFC 9112 §9.6). */
export function formatRawProblemResponse(code: ErrorCode, detail: string): string {
  const { status, text } = formatProblem(code, detail);
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ''}`,
    `Date: ${new Date().toUTCString()}`,
    `Content-Type: ${PROBLEM_CONTENT_TYPE}`,
    `Content-Length: ${Buffer.byteLength(text)}`,
    'Connection: close',
    '',
    text,
  ].join('\r\n');
}

/** The @hono/node-server errorHandler: its own refusals of a request target or Host as 400 problems. */
export function answerAdapterError(error: unknown): Response {
  const { status, text } =
    error instanceof RequestError
      ? formatProblem('BAD_REQUEST', `the request cannot be served: ${describeAdapterError(error)}`)
      : formatProblem('INTERNAL', 'internal error');
  return new Response(text, { status, headers: { 'Content-Type': PROBLEM_CONTENT_TYPE } });
}

function describeParserError(code: ErrorCode, error: ParserError): string {
  switch (code) {
    case 'HEADERS_TOO_LARGE':
      return `the request's header section exceeds ${maxHeaderSize} bytes`;
    case 'TOO_LARGE':
      return 'the chunk extensions of the request body exceed the limit';
    case 'REQUEST_TIMEOUT':
      return 'the request was not received in time';
    default: {
      // llhttp's reasons are fixed phrases ("Invalid char in url path"); anything else is not echoed.
      const reason = typeof error.reason === 'string' && /^[A-Za-z ]{1,80}$/.test(error.reason) ? error.reason : '';
      return reason === '' ? 'the request is not valid HTTP/1.1' : `the request is not valid HTTP/1.1: ${reason}`;
    }
  }
}

function describeAdapterError(error: RequestError): string {
  return /^[A-Za-z :]{1,80}$/.test(error.message) ? error.message : 'invalid request target';
}

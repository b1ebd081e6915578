// Newline-delimited framing: lines split across chunks, several per chunk, the length limit, blank and non-JSON lines.

import { describe, expect, it } from 'vitest';
import { LineSplitter, parseLine, terminateLine } from '../../../src/guard/stdio/stdio-framing.ts';

const text = (lines: Buffer[]): string[] => lines.map((line) => line.toString('utf8'));

describe('LineSplitter', () => {
  it('returns every complete line with its newline, and keeps a partial line for the next chunk', () => {
    const splitter = new LineSplitter(1024);
    expect(text(splitter.push(Buffer.from('{"a":1}\n{"b":')))).toEqual(['{"a":1}\n']);
    expect(text(splitter.push(Buffer.from('2}')))).toEqual([]);
    expect(text(splitter.push(Buffer.from('\n\n{"c":3}\n')))).toEqual(['{"b":2}\n', '\n', '{"c":3}\n']);
    expect(text(splitter.push(Buffer.from('')))).toEqual([]);
  });

  it('does not copy a line that arrives whole in one chunk', () => {
    const chunk = Buffer.from('{"a":1}\n');
    const [line] = new LineSplitter(1024).push(chunk);
    expect(line!.buffer).toBe(chunk.buffer);
  });

  it('throws a RangeError once a pending line is longer than the limit, and accepts one at the limit', () => {
    const splitter = new LineSplitter(8);
    expect(splitter.push(Buffer.from('12345678'))).toEqual([]);
    expect(text(splitter.push(Buffer.from('\n')))).toEqual(['12345678\n']);
    expect(() => splitter.push(Buffer.from('123456789'))).toThrow(RangeError);
    expect(() => new LineSplitter(8).push(Buffer.from('1234\n123456789'))).toThrow(/longer than 8 bytes/);
  });
});

describe('parseLine and terminateLine', () => {
  it('decodes JSON, skips blank lines, and gives an Error for a line that is not JSON', () => {
    expect(parseLine(Buffer.from(' {"jsonrpc":"2.0","id":1}\r\n'))).toEqual({ jsonrpc: '2.0', id: 1 });
    expect(parseLine(Buffer.from('[1,2]\n'))).toEqual([1, 2]);
    expect(parseLine(Buffer.from('  \n'))).toBeUndefined();
    expect(parseLine(Buffer.from('{nope\n'))).toBeInstanceOf(Error);
  });

  it('ends a line with exactly one newline', () => {
    const line = Buffer.from('{}\n');
    expect(terminateLine(line)).toBe(line);
    expect(terminateLine(Buffer.from('{}')).toString('utf8')).toBe('{}\n');
  });
});

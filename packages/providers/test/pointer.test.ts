import { describe, expect, it } from 'vitest';
import { pointerTokens, readPointer, valuesAt } from '../src/pointer.ts';
import { parseJsonLossless } from '../src/template-body.ts';

const at = (value: unknown, pointer: string) => valuesAt(value, pointerTokens(pointer));

describe('JSON pointers', () => {
  it('parses RFC 6901: "" is the whole value, ~1 and ~0 unescaped, a bad ~ or a missing / refused', () => {
    expect(pointerTokens('')).toEqual([]);
    expect(pointerTokens('/')).toEqual(['']);
    expect(pointerTokens('/event-data/message/headers/message-id')).toEqual([
      'event-data',
      'message',
      'headers',
      'message-id',
    ]);
    expect(pointerTokens('/a~1b/m~0n/~01')).toEqual(['a/b', 'm~n', '~1']);
    expect(() => pointerTokens('repository/full_name')).toThrow(/must be empty or start with "\/"/);
    expect(() => pointerTokens('/a~')).toThrow(TypeError);
    expect(() => pointerTokens('/a~2')).toThrow(/not followed by 0 or 1/);
  });

  it('reads one value: own keys, canonical array indices, nothing through a scalar or a prototype', () => {
    const body = { entry: [{ id: 'e1' }, { id: 'e2' }], n: 0, s: '' };
    expect(readPointer(body, pointerTokens('/entry/1/id'))).toBe('e2');
    expect(readPointer(body, pointerTokens('/entry/01/id'))).toBeUndefined();
    expect(readPointer(body, pointerTokens('/entry/id'))).toBeUndefined();
    expect(readPointer(body, pointerTokens('/n'))).toBe(0);
    expect(readPointer(body, pointerTokens('/s'))).toBe('');
    expect(readPointer(body, pointerTokens('/s/length'))).toBeUndefined();
    expect(readPointer(body, pointerTokens('/toString'))).toBeUndefined();
    expect(readPointer([{ portalId: 7 }], pointerTokens('/0/portalId'))).toBe(7);
    expect(readPointer(body, [])).toBe(body);
  });

  it('reads every value: * is each element of an array, in order, and nothing where no array is', () => {
    const body = {
      data: {
        to: ['a@example.com', 'b@example.com'],
        email_addresses: [{ email_address: 'c@example.com' }, {}, { email_address: 'd@example.com' }],
      },
      items: [{ tags: ['x', 'y'] }, { tags: ['z'] }],
      one: { id: 1 },
    };
    expect(at(body, '/data/to/*')).toEqual(['a@example.com', 'b@example.com']);
    expect(at(body, '/data/email_addresses/*/email_address')).toEqual(['c@example.com', 'd@example.com']);
    expect(at(body, '/items/*/tags/*')).toEqual(['x', 'y', 'z']);
    expect(at(body, '/items/1/tags/0')).toEqual(['z']);
    expect(at(body, '/one/*/id')).toEqual([]);
    expect(at(body, '/one/id')).toEqual([1]);
    expect(at(body, '/missing/*')).toEqual([]);
    expect(at(null, '/a')).toEqual([]);
    expect(at('text', '')).toEqual(['text']);
  });

  it('stops at a number kept as its source text, and returns it whole', () => {
    const body = parseJsonLossless('t', '{"id":90071992547409931234,"ids":[1,2]}');
    expect(JSON.stringify(at(body, '/id'))).toBe('[90071992547409931234]');
    expect(at(body, '/id/rawJSON')).toEqual([]);
    expect(JSON.stringify(at(body, '/ids/*'))).toBe('[1,2]');
  });
});

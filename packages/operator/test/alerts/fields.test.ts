import { describe, expect, it } from 'vitest';
import { pointerTokens } from '@webhook-inbox/providers/pointer';
import { fieldsOf } from '../../src/alerts/fields.ts';

const tree = (...pointers: string[]) => fieldsOf(pointers.map(pointerTokens));

describe('fieldsOf', () => {
  it('nests the pointers in the order listed; a * adds no level (the excerpt reads an array wherever one is)', () => {
    const fields = tree('/id', '/entry/*/id', '/entry/*/changes/*/field', '/amount/value', '/entry/*/time');
    expect(fields).toEqual({
      id: true,
      entry: { id: true, changes: { field: true }, time: true },
      amount: { value: true },
    });
    expect(Object.keys(fields)).toEqual(['id', 'entry', 'amount']);
    expect(tree('/orders_to_redact/*')).toEqual({ orders_to_redact: true });
  });

  it('refuses a pointer that leads through another one’s field, or repeats it', () => {
    expect(() => tree('/a', '/a/b')).toThrow(/overlaps/);
    expect(() => tree('/a/b', '/a')).toThrow(/overlaps/);
    expect(() => tree('/a', '/a')).toThrow(/overlaps/);
  });
});

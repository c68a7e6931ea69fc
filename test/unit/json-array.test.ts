import { describe, expect, it } from 'vitest';
import { JsonArrayText, splitJsonArray } from '../../src/platform/json/array.ts';

/** Content blobs are read record by record (platform/json/array.ts): the elements must be exactly those JSON.parse sees. */
describe('a JSON array read element by element', () => {
  const same = (text: string) => expect([...new JsonArrayText(text)]).toEqual(JSON.parse(text));

  it('yields the elements JSON.parse yields, whatever they hold', () => {
    same('[]');
    same(' [ ] ');
    same('[{"Id":"a","CreationTime":"2026-11-25T10:00:00","Nested":{"x":[1,{"y":"]}"}]}}, {"Id":"b"}]');
    same('[1, "a,]", {"x":[1,{}]}, null, true, -2.5e3, [[]]]');
    same('[{"Text":"a \\"quoted\\" value, with \\\\ and \\\\\\" and \\u0000 and \\u00e9"}]');
    same('\n[\n  {"Id": "x"} ,\n  {"Id": "y"}\n]\n');
    same(JSON.stringify(Array.from({ length: 300 }, (_, i) => ({ Id: `id-${i}`, Path: 'C:\\dir\\', Quote: '"' + '\\'.repeat(i % 4) }))));
  });

  it('counts its elements without parsing them, and yields undefined for an element that is not JSON', () => {
    const a = new JsonArrayText('[{"Id":"a"}, {bad}, {"Id":"c"}]');
    expect(a.length).toBe(3);
    expect([...a]).toEqual([{ Id: 'a' }, undefined, { Id: 'c' }]);
  });

  it('refuses a body cut short or that is not an array (the HTTP client retries such a body)', () => {
    for (const text of ['[{"Id":"a"}', '[{"Id":"a"},', '[{"Id":"a}]', '{"Id":"a"}', '[1] x', '']) expect(() => splitJsonArray(text), text).toThrow(SyntaxError);
  });
});

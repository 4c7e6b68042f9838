import fc from 'fast-check';
import { Marker } from '../../src/gateway/marker';

const FRAME =
  'event: content_block_delta\ndata: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}\n\n';

describe('Marker: a byte string found from its rarest byte', () => {
  const markers = ['"message_', '"content_block_stop"', '"usage"', '"finish_reason":"', 'a', '""'];

  test.each(markers)('%s: found where Buffer search finds it, first and last', (text) => {
    for (const frame of [FRAME, undefined]) {
      const marker = new Marker(text, frame);
      const needle = Buffer.from(text);
      // Pieces that make near misses: the marker cut at every point, its bytes doubled, and stream text.
      const pieces = [
        text,
        ...Array.from({ length: text.length }, (_, i) => text.slice(0, i)),
        ...Array.from({ length: text.length }, (_, i) => text.slice(i)),
        FRAME,
        '"',
        'x',
        '\n',
      ];
      fc.assert(
        fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
          const buf = Buffer.from(parts.join(''));
          expect(marker.indexIn(buf)).toBe(buf.indexOf(needle));
          expect(marker.lastIndexIn(buf)).toBe(buf.lastIndexOf(needle));
          const from = Math.floor(buf.length / 2);
          expect(marker.indexIn(buf, from)).toBe(buf.indexOf(needle, from));
        }),
        { numRuns: 300 },
      );
    }
  });

  test('multi-byte text: found at its byte offset', () => {
    const marker = new Marker('"stop"', FRAME);
    const buf = Buffer.from('ü✓ "stop" ü "stop"');
    expect(marker.indexIn(buf)).toBe(buf.indexOf('"stop"'));
    expect(marker.lastIndexIn(buf)).toBe(buf.lastIndexOf('"stop"'));
  });
});

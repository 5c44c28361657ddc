import { describe, expect, it } from 'vitest';
import { foldText, wordsOf } from '../../src/catalog/text.ts';

describe('foldText', () => {
  it('lower-cases printable ASCII', () => {
    expect(foldText('Nike AIR Max 90 "Sneaker Hub"')).toBe('nike air max 90 "sneaker hub"');
  });

  it('lower-cases other text in NFC, without full case folding', () => {
    expect(foldText('E\u0301COLE')).toBe('\u00e9cole');
    expect(foldText('\u0130stanbul')).toBe('i\u0307stanbul');
    expect(foldText('STRAßE')).toBe('straße');
  });
});

describe('wordsOf', () => {
  it('splits printable ASCII on anything but letters and digits, lower-cased, without empty words', () => {
    expect(wordsOf(' -Nike AIR--max  90! ')).toEqual(['nike', 'air', 'max', '90']);
  });

  it('folds other text, drops combining marks and splits on anything but letters and digits', () => {
    expect(wordsOf(' Café—CRÈME  brûlée ')).toEqual(['cafe', 'creme', 'brulee']);
    expect(wordsOf('Ünïcödé-✓ 東京')).toEqual(['unicode', '東京']);
  });
});

import { formatAmount } from '../../src/contract/amount';

describe('formatAmount: one way to write money, whatever the machine', () => {
  test('groups thousands and always shows the cents of a currency that has them', () => {
    expect(formatAmount(120.5, 'EUR')).toBe('EUR 120.50');
    expect(formatAmount(1436, 'EUR')).toBe('EUR 1,436.00');
    expect(formatAmount(1636.75, 'EUR')).toBe('EUR 1,636.75');
    expect(formatAmount(1234567.5, 'USD')).toBe('USD 1,234,567.50');
    expect(formatAmount(0.3, 'EUR')).toBe('EUR 0.30');
  });

  test("follows the currency's minor unit, never rounding away a decimal the amount has", () => {
    expect(formatAmount(1500, 'JPY')).toBe('JPY 1,500');
    expect(formatAmount(1500.5, 'JPY')).toBe('JPY 1,500.5');
    expect(formatAmount(1.5, 'KWD')).toBe('KWD 1.500');
  });

  test('a code the runtime does not know gets two decimals', () => {
    expect(formatAmount(2, 'ZZZ')).toBe('ZZZ 2.00');
  });
});

// An approval request in words (issue 13 §3 "approvals show", docs/manifest-format.md "Money"), shared as is by the
// CLI, the server and the approvals page in the browser (a plain ES module, so it is defined once): vendors' and
// hosts' text with its hidden characters shown (controls, bidi and other format characters, separators, invisibles
// as \u{HEX}), amounts in minor units as ISO 4217 major units, and the amount a money tool's call moves, read at the
// tool's signed amountArgument and currencyArgument pointers (RFC 6901), in major units for the currencies known
// here and in minor units for any other code. Pure: no I/O, no DOM.

/** Characters a terminal would act on and a reader cannot see: controls, bidi and other format characters, separators. */
const HIDDEN = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu;

/**
 * `text` with every hidden character written as `\u{HEX}` (a newline too: split multi-line text first).
 * @param {string} text
 * @returns {string}
 */
export function revealHiddenCharacters(text) {
  return text.replace(HIDDEN, (char) => `\\u{${char.codePointAt(0).toString(16).toUpperCase()}}`);
}

/** ISO 4217 currencies whose minor unit is not a hundredth (the list-one amendments as of 2025). */
const MINOR_UNIT_DIGITS = Object.freeze({
  BIF: 0,
  CLP: 0,
  DJF: 0,
  GNF: 0,
  ISK: 0,
  JPY: 0,
  KMF: 0,
  KRW: 0,
  PYG: 0,
  RWF: 0,
  UGX: 0,
  UYI: 0,
  VND: 0,
  VUV: 0,
  XAF: 0,
  XOF: 0,
  XPF: 0,
  BHD: 3,
  IQD: 3,
  JOD: 3,
  KWD: 3,
  LYD: 3,
  OMR: 3,
  TND: 3,
  CLF: 4,
  UYW: 4,
});

/**
 * `50000` minor units of USD as `500.00 USD` (exact: integer digits only, no floating point).
 * @param {number} amountMinor
 * @param {string} currency
 * @returns {string}
 */
export function formatMinorAmount(amountMinor, currency) {
  const digits = Object.hasOwn(MINOR_UNIT_DIGITS, currency) ? MINOR_UNIT_DIGITS[currency] : 2;
  const text = String(amountMinor);
  if (digits === 0) return `${text} ${currency}`;
  const padded = text.padStart(digits + 1, '0');
  return `${padded.slice(0, -digits)}.${padded.slice(-digits)} ${currency}`;
}

/** ISO 4217 codes written in major units (formatMinorAmount knows their exponents); any other code stays minor. */
const KNOWN_CURRENCIES = new Set(
  (
    'AED ARS AUD BGN BHD BIF BRL CAD CHF CLF CLP CNY COP CZK DJF DKK EGP EUR GBP GNF HKD HUF IDR ILS INR IQD ISK ' +
    'JOD JPY KES KMF KRW KWD LYD MAD MXN MYR NGN NOK NZD OMR PEN PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SEK SGD ' +
    'THB TND TRY TWD UAH UGX USD UYI UYW VND VUV XAF XOF XPF ZAR'
  ).split(' '),
);

const isObject = (value) => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The amount a money tool's call moves, e.g. `42.00 USD (4200 minor units)`; undefined without money pointers.
 * @param {{ capabilities?: unknown }} tool the signed tool
 * @param {unknown} args the call's (material) arguments
 * @returns {string | undefined}
 */
export function describeAmount(tool, args) {
  const money = isObject(tool.capabilities) ? tool.capabilities.money : undefined;
  if (!isObject(money) || typeof money.amountArgument !== 'string') return undefined;
  const amount = valueAt(args, money.amountArgument);
  const currencies = Array.isArray(money.currencies) ? money.currencies : [];
  const currency =
    typeof money.currencyArgument === 'string'
      ? valueAt(args, money.currencyArgument)
      : currencies.length === 1
        ? currencies[0]
        : undefined;
  if (typeof amount !== 'number' || !Number.isSafeInteger(amount) || amount < 0) {
    return `${JSON.stringify(amount) ?? 'missing'} (not an amount in minor units)`;
  }
  if (typeof currency !== 'string') return `${amount} minor units (currency one of ${currencies.join(', ')})`;
  if (!KNOWN_CURRENCIES.has(currency)) return `${amount} minor units of ${currency}`;
  return `${formatMinorAmount(amount, currency)} (${amount} minor units)`;
}

/** The value at an RFC 6901 pointer (§4: `~1` is `/`, `~0` is `~`), or undefined when there is none. */
function valueAt(root, pointer) {
  if (pointer === '') return root;
  if (!pointer.startsWith('/') || /~(?![01])/.test(pointer)) return undefined;
  let value = root;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(value)) value = /^(?:0|[1-9][0-9]*)$/.test(token) ? value[Number(token)] : undefined;
    else if (isObject(value)) value = Object.hasOwn(value, token) ? value[token] : undefined;
    else return undefined;
  }
  return value;
}

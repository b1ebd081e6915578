// An approval request in words (issue 13 §3 "approvals show", docs/manifest-format.md "Money"), shared as is by the
// CLI, the server and the approvals page in the browser (a plain ES module, so it is defined once): vendors' and
// hosts' text with its hidden characters shown (controls, bidi and other format characters, separators, invisibles
// as \u{HEX}), amounts in minor units as ISO 4217 major units, and the amount a money tool's call moves, read at the
// tool's signed amountArgument and currencyArgument pointers (RFC 6901), in major units for the currencies known
// here and in minor units for any other code; and a tool's capabilities and annotations in words (typed for the
// server in ../capability-words.ts). Pure: no I/O, no DOM.

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

// ── capabilities in words (docs/manifest-format.md "Capabilities"): an absent member makes no claim, an empty list
// declares none. Read defensively: in the browser the tool is whatever the registry answered.

/**
 * A host pattern as the place a tool connects to.
 * @param {string} host
 * @returns {string}
 */
export function describeHost(host) {
  if (host === '*') return 'opens connections to any host';
  if (host.startsWith('*.')) return `opens connections to any host under ${host.slice(2)}`;
  return `opens connections to ${host}`;
}

/**
 * The money a tool may move, one phrase per currency.
 * @param {{ currencies?: readonly string[], maxAmountMinorPerCall?: number }} money
 * @returns {string[]}
 */
export function describeMoney(money) {
  const currencies = Array.isArray(money.currencies) ? money.currencies.filter((c) => typeof c === 'string') : [];
  if (currencies.length === 0) return ['moves no money'];
  const ceiling = money.maxAmountMinorPerCall;
  if (typeof ceiling !== 'number') return currencies.map((code) => `moves ${code} with no declared ceiling per call`);
  if (ceiling === 0) return currencies.map((code) => `handles ${code} but moves no amount`);
  return currencies.map((code) => `moves up to ${formatMinorAmount(ceiling, code)} per call`);
}

/** @returns {string[] | undefined} the strings of a list, or undefined when it is not one (no claim) */
function stringsOf(list) {
  return Array.isArray(list) ? list.filter((item) => typeof item === 'string') : undefined;
}

function listArea(area, list, none, each) {
  if (list === undefined) return { area, claim: 'no-claim', phrases: [] };
  return { area, claim: 'declared', phrases: list.length === 0 ? [none] : list.map(each) };
}

/**
 * Every area of a declaration, in the order of the format: network, files read, files written, secrets, money.
 * @param {unknown} capabilities
 * @returns {{ area: string, claim: 'declared' | 'no-claim', phrases: string[] }[]}
 */
export function describeCapabilities(capabilities) {
  const caps = isObject(capabilities) ? capabilities : {};
  const member = (object, key) => (isObject(object) ? object[key] : undefined);
  const money = isObject(caps.money) && Array.isArray(caps.money.currencies) ? caps.money : undefined;
  return [
    listArea('network', stringsOf(member(caps.network, 'hosts')), 'opens no network connections', describeHost),
    listArea(
      'filesystem.read',
      stringsOf(member(caps.filesystem, 'read')),
      'reads no files',
      (path) => `reads ${path}`,
    ),
    listArea(
      'filesystem.write',
      stringsOf(member(caps.filesystem, 'write')),
      'writes no files',
      (path) => `writes ${path}`,
    ),
    listArea(
      'secrets',
      stringsOf(member(caps.secrets, 'env')),
      'needs no secrets',
      (name) => `reads the secret ${name} from the environment`,
    ),
    money === undefined
      ? { area: 'money', claim: 'no-claim', phrases: [] }
      : { area: 'money', claim: 'declared', phrases: describeMoney(money) },
  ];
}

const NO_CLAIM_WHAT = Object.freeze({
  network: 'the network',
  'filesystem.read': 'files it reads',
  'filesystem.write': 'files it writes',
  secrets: 'secrets',
  money: 'money',
});

/**
 * What "no claim" means for an area, in words.
 * @param {string} area
 * @returns {string}
 */
export function describeNoClaim(area) {
  return `makes no claim about ${Object.hasOwn(NO_CLAIM_WHAT, area) ? NO_CLAIM_WHAT[area] : area} (unknown, not none)`;
}

/**
 * MCP ToolAnnotations (hints, not guarantees) in words.
 * @param {unknown} annotations
 * @returns {string[]}
 */
export function describeAnnotations(annotations) {
  if (!isObject(annotations)) return [];
  const words = [];
  const hint = (value, yes, no) => {
    if (typeof value === 'boolean') words.push(value ? yes : no);
  };
  hint(annotations.readOnlyHint, 'read-only', 'may change its environment');
  hint(annotations.destructiveHint, 'may be destructive', 'not destructive');
  hint(annotations.idempotentHint, 'idempotent (repeating a call changes nothing more)', 'not idempotent');
  hint(annotations.openWorldHint, 'reaches an open world (external systems)', 'closed world');
  if (typeof annotations.title === 'string') words.push(`display title "${annotations.title}"`);
  return words;
}

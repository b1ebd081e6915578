// The approvals pages' script (issue 13 §3, docs/approvals.md): the operator's token is asked for in a password
// input and kept in this module's memory only (never storage, a cookie or the URL), sent as an RFC 6750 §2.1 bearer
// token to the same-origin API (`GET /v1/approvals?status=…`, `GET /v1/approvals/{id}`, `POST …/decision`), and
// everything the registry answers is rendered with DOM nodes and textContent only, its hidden characters shown
// visibly as `toolseal approvals show` prints them. The page's HTML carries no approval data.

import {
  describeAmount,
  describeAnnotations,
  describeCapabilities,
  describeNoClaim,
  revealHiddenCharacters,
} from './approval-words.js';

const STATUSES = ['pending', 'approved', 'denied', 'consumed', 'expired'];
let token; // in memory only: a reload asks again

// ── DOM ───────────────────────────────────────────────────────────────────

/** An element with attributes and children (strings become text nodes: nothing is ever parsed as markup). */
function el(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, value);
  for (const child of children) node.append(typeof child === 'string' ? document.createTextNode(child) : child);
  return node;
}

/** Vendor or host text, each line with its hidden characters shown (newlines kept). */
function shown(value) {
  return typeof value === 'string' ? value.split('\n').map(revealHiddenCharacters).join('\n') : '';
}

function pretty(value) {
  return shown(JSON.stringify(value, null, 2) ?? 'null');
}

function time(value) {
  const text = typeof value === 'string' ? value : '';
  const node = el(
    'time',
    { datetime: text },
    shown(text.replace(/^(\d{4}-\d\d-\d\d)T(\d\d:\d\d:\d\d).*Z$/, '$1 $2 UTC')),
  );
  return node;
}

function setMessage(target, kind, text) {
  target.replaceChildren(el('p', { class: `notice ${kind}`, 'data-message': kind }, text));
}

// ── the API ───────────────────────────────────────────────────────────────

/** A failed answer as `CODE: detail` (RFC 9457 problem details; the code is the registry's stable one). */
class Refusal extends Error {
  constructor(code, detail) {
    super(`${code}: ${detail}`);
    this.code = code;
  }
}

async function callApi(path, init = {}) {
  const headers = { Accept: 'application/json', Authorization: `Bearer ${token}`, ...(init.headers ?? {}) };
  const response = await fetch(path, { ...init, headers, cache: 'no-store', credentials: 'omit', redirect: 'error' });
  let body;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  if (response.ok && body !== undefined) return body;
  const code = typeof body?.code === 'string' ? body.code : `HTTP_${response.status}`;
  throw new Refusal(shown(code), shown(typeof body?.detail === 'string' ? body.detail : response.statusText));
}

const approvalApiPath = (id) => `/v1/approvals/${encodeURIComponent(id)}`;
const approvalPagePath = (id) => `/ui/approvals/${encodeURIComponent(id)}`;

// ── the token ─────────────────────────────────────────────────────────────

/** Wire the token form: on submit the token is taken from the input (which is then cleared) and `load` runs. */
function askForToken(load) {
  const form = document.querySelector('[data-token-form]');
  const input = form.querySelector('input[type=password]');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    token = input.value.trim();
    input.value = '';
    if (token !== '') load();
  });
}

// ── the list ──────────────────────────────────────────────────────────────

async function loadList(view, status) {
  setMessage(view, 'info', 'Loading…');
  try {
    const query = status === '' ? '' : `?status=${encodeURIComponent(status)}`;
    const answer = await callApi(`/v1/approvals${query}`);
    const items = answer.items ?? [];
    view.replaceChildren(renderList(items, status));
    view.dataset.state = 'loaded';
    await fillListDetails(view, items);
    view.dataset.details = 'loaded';
  } catch (error) {
    view.dataset.state = 'failed';
    setMessage(view, 'error', error instanceof Refusal ? error.message : `the registry did not answer (${error})`);
  }
}

function renderList(items, status) {
  if (items.length === 0) return el('p', { 'data-message': 'empty' }, `No ${status} approval requests.`);
  const rows = items.map((item) =>
    el(
      'tr',
      { 'data-approval': shown(item.id) },
      el(
        'td',
        { class: 'mono' },
        el('a', { href: approvalPagePath(item.id), 'data-approval-link': item.id }, shown(item.id)),
      ),
      el('td', { 'data-column': 'tool' }, '…'),
      el('td', { 'data-column': 'manifest' }, '…'),
      el('td', { 'data-column': 'host' }, '…'),
      el('td', {}, el('span', { class: `badge approval-${shown(item.status)}` }, shown(item.status))),
      el('td', {}, time(item.expiresAt)),
      el('td', { class: 'digest mono' }, shown(item.digest)),
    ),
  );
  const labels = ['Request', 'Tool', 'Manifest', 'Host', 'Status', 'Expires', 'Digest'];
  const head = el('tr', {}, ...labels.map((label) => el('th', {}, label)));
  return el('div', { class: 'table-wrap' }, el('table', {}, el('thead', {}, head), el('tbody', {}, ...rows)));
}

/**
 * The tool, manifest and host of each listed request, from the request itself (the list answer carries only its
 * state), a few at a time; a request that cannot be read says so in its row.
 */
async function fillListDetails(view, items) {
  const queue = items.map((item) => item.id).filter((id) => typeof id === 'string');
  const fill = async () => {
    for (let id = queue.shift(); id !== undefined; id = queue.shift()) {
      const row = [...view.querySelectorAll('tr[data-approval]')].find((tr) => tr.dataset.approval === shown(id));
      if (row === undefined) continue;
      const cell = (column) => row.querySelector(`[data-column=${column}]`);
      try {
        const approval = await callApi(approvalApiPath(id));
        const envelope = approval.envelope ?? {};
        cell('tool').textContent = shown(approval.tool?.name);
        cell('manifest').textContent = shown(envelope.manifest);
        cell('host').textContent = shown(envelope.audience);
      } catch {
        for (const column of ['tool', 'manifest', 'host']) cell(column).textContent = '(could not be read)';
      }
    }
  };
  await Promise.all([fill(), fill(), fill(), fill()]);
}

function startListPage(view) {
  const select = document.querySelector('[data-status-filter]');
  for (const status of STATUSES) select.append(el('option', { value: status }, status));
  select.append(el('option', { value: '' }, 'any'));
  select.value = 'pending';
  const load = () => loadList(view, select.value);
  select.addEventListener('change', () => token !== undefined && load());
  askForToken(load);
  followLinksInPage(view);
}

/** A request opened from the list is shown in this document, so the token in memory is still there. */
function followLinksInPage(view) {
  view.addEventListener('click', (event) => {
    const link = event.target.closest('a[data-approval-link]');
    if (link === null || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    history.pushState(null, '', link.getAttribute('href'));
    loadApproval(view, link.dataset.approvalLink);
  });
  window.addEventListener('popstate', () => location.reload());
}

// ── one request ───────────────────────────────────────────────────────────

async function loadApproval(view, id) {
  setMessage(view, 'info', 'Loading…');
  try {
    const approval = await callApi(approvalApiPath(id));
    view.replaceChildren(...renderApproval(approval));
    view.dataset.state = 'loaded';
    if (approval.status === 'pending') view.append(renderDecision(view, approval));
  } catch (error) {
    view.dataset.state = 'failed';
    setMessage(view, 'error', error instanceof Refusal ? error.message : `the registry did not answer (${error})`);
  }
}

function fact(label, ...value) {
  return [el('dt', {}, label), el('dd', { 'data-fact': label.toLowerCase() }, ...value)];
}

function renderApproval(approval) {
  const tool = approval.tool ?? {};
  const envelope = approval.envelope ?? {};
  const amount = describeAmount(tool, approval.material);
  const title = typeof tool.title === 'string' ? ` — ${shown(tool.title)}` : '';
  const facts = el(
    'dl',
    { class: 'facts', 'data-testid': 'approval-facts' },
    ...fact('Tool', el('span', { class: 'tool-name' }, `${shown(tool.name)}${title}`)),
    ...fact('Manifest', `${shown(envelope.manifest)} `, el('span', { class: 'mono' }, shown(envelope.manifestDigest))),
    ...fact('Audience', `${shown(envelope.audience)} (the host that asks)`),
    ...(amount === undefined ? [] : fact('Amount', revealHiddenCharacters(amount))),
    ...fact('Status', el('span', { class: `badge approval-${shown(approval.status)}` }, shown(approval.status))),
    ...fact('Created', time(approval.createdAt)),
    ...fact('Expires', time(approval.expiresAt)),
    ...renderDecided(approval),
    ...fact('Digest', el('span', { class: 'digest mono' }, shown(approval.digest))),
  );
  return [facts, renderTool(tool), ...renderArguments(approval.material)];
}

function renderDecided(approval) {
  const facts = [];
  if (typeof approval.decidedBy === 'string') facts.push(...fact('Decided', `by ${shown(approval.decidedBy)} `));
  if (typeof approval.decidedAt === 'string') facts.at(-1).append(time(approval.decidedAt));
  if (typeof approval.reason === 'string') facts.push(...fact('Reason', shown(approval.reason)));
  if (typeof approval.consumedAt === 'string') facts.push(...fact('Consumed', time(approval.consumedAt)));
  return facts;
}

function renderTool(tool) {
  const section = el('section', { class: 'tool', 'aria-labelledby': 'approval-tool' });
  section.append(el('h2', { id: 'approval-tool' }, 'The signed tool'));
  if (typeof tool.description === 'string') {
    section.append(el('p', { class: 'description', 'data-testid': 'description' }, shown(tool.description)));
  }
  section.append(el('p', { class: 'muted' }, "What it may touch (the publisher's signed declaration):"));
  section.append(
    tool.capabilities === undefined
      ? el('p', { 'data-testid': 'capabilities' }, 'declares no capabilities: what it touches is unknown, not none')
      : el(
          'ul',
          { 'data-testid': 'capabilities' },
          ...describeCapabilities(tool.capabilities).flatMap(({ area, claim, phrases }) =>
            claim === 'no-claim'
              ? [el('li', { 'data-area': area, class: 'muted' }, describeNoClaim(area))]
              : phrases.map((phrase) => el('li', { 'data-area': area }, shown(phrase))),
          ),
        ),
  );
  const annotations = describeAnnotations(tool.annotations);
  if (annotations.length > 0) {
    section.append(el('p', { class: 'muted' }, 'Annotations (hints, not guarantees):'));
    section.append(
      el('ul', { 'data-testid': 'annotations' }, ...annotations.map((words) => el('li', {}, shown(words)))),
    );
  }
  return section;
}

function renderArguments(material) {
  return [
    el('h2', {}, 'Arguments'),
    el('p', { class: 'muted' }, 'The material view: what the digest binds (informational members removed).'),
    el('pre', { class: 'material', 'data-testid': 'material' }, pretty(material)),
  ];
}

// ── deciding ──────────────────────────────────────────────────────────────

/** Approve or Deny with an optional reason; the digest sent is the one shown above. */
function renderDecision(view, approval) {
  const reason = el('input', { type: 'text', id: 'decision-reason', maxlength: '1000', autocomplete: 'off' });
  const outcome = el('div', { 'data-decision-outcome': '', 'aria-live': 'polite' });
  const button = (decision, label) => {
    const node = el('button', { type: 'button', 'data-decide': decision }, label);
    node.addEventListener('click', () => decide(view, approval, decision, reason.value, outcome));
    return node;
  };
  return el(
    'section',
    { class: 'decision', 'aria-labelledby': 'approval-decide' },
    el('h2', { id: 'approval-decide' }, 'Decide'),
    el('p', {}, 'Approving lets exactly this call (this digest) run once, before it expires.'),
    el('p', {}, el('label', { for: 'decision-reason' }, 'Reason (optional) '), reason),
    el('p', {}, button('approve', 'Approve'), ' ', button('deny', 'Deny')),
    outcome,
  );
}

async function decide(view, approval, decision, reason, outcome) {
  for (const node of view.querySelectorAll('[data-decide]')) node.disabled = true;
  const body = { decision, digest: approval.digest, ...(reason.trim() === '' ? {} : { reason: reason.trim() }) };
  try {
    const answer = await callApi(`${approvalApiPath(approval.id)}/decision`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = `${shown(answer.status)}: recorded in the log at index ${shown(String(answer.logIndex))}`;
    await loadApproval(view, approval.id);
    setMessage(view.appendChild(el('div', { 'data-decision-outcome': '' })), 'info', text);
  } catch (error) {
    for (const node of view.querySelectorAll('[data-decide]')) node.disabled = false;
    setMessage(outcome, 'error', error instanceof Refusal ? error.message : `the registry did not answer (${error})`);
  }
}

// ── start ─────────────────────────────────────────────────────────────────

const listView = document.querySelector('[data-approvals-list]');
const approvalView = document.querySelector('[data-approval-id]');
if (listView !== null) startListPage(listView);
if (approvalView !== null) askForToken(() => loadApproval(approvalView, approvalView.dataset.approvalId));

// The inspect panes but the graph and the timeline: events, state and the workflow's
// tests.
import { $, ui, el, enc, pretty, api, folded } from './core.js';
import { showAgain } from './graph.js';
import { renderTimeline } from './timeline.js';

export async function refreshSession() {
  if (!ui.session) return;
  const s = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(ui.session)}`);
  ui.events = s.events || [];
  renderEvents();
  renderState(s.state || {});
  renderTimeline();
  showAgain();
}

// ---------- events ----------

// Names as a short list: each once, with how many times when more than once
// (`lookup ×30`, not thirty times `lookup`).
function counted(names) {
  const n = new Map();
  for (const x of names) n.set(x, (n.get(x) || 0) + 1);
  return [...n].map(([x, k]) => (k > 1 ? `${x} ×${k}` : x)).join(', ');
}

function eventKind(ev) {
  const parts = (ev.content && ev.content.parts) || [];
  const a = ev.actions || {};
  const kinds = [];
  if (ev.errorCode || ev.errorMessage) kinds.push(`error ${ev.errorCode || ''}`.trim());
  if (parts.some(p => p.functionCall)) kinds.push(`calls ${counted(parts.filter(p => p.functionCall).map(p => p.functionCall.name))}`);
  if (parts.some(p => p.functionResponse)) kinds.push(`result of ${counted(parts.filter(p => p.functionResponse).map(p => p.functionResponse.name))}`);
  if (parts.some(p => typeof p.text === 'string')) kinds.push('text');
  if (a.transferToAgent) kinds.push(`transfer to ${a.transferToAgent}`);
  if (a.escalate) kinds.push('escalate');
  if (a.route !== undefined && a.route !== null) kinds.push(`route ${JSON.stringify(a.route)}`);
  if (ev.output !== undefined && ev.output !== null) kinds.push('output');
  if (a.stateDelta && Object.keys(a.stateDelta).length) kinds.push('state');
  if (a.artifactDelta && Object.keys(a.artifactDelta).length) kinds.push('artifacts');
  if (ev.partial) kinds.push('partial');
  return kinds.join(' · ') || 'no content, no actions';
}

function actionList(a) {
  const rows = [];
  const add = (k, v) => rows.push(el('dt', { text: k }), el('dd', {}, v));
  for (const [k, v] of Object.entries(a.stateDelta || {})) add(`state ${k}`, el('code', { text: JSON.stringify(v) }));
  for (const [k, v] of Object.entries(a.artifactDelta || {})) add(`artifact ${k}`, `version ${v}`);
  if (a.transferToAgent) add('transfer to', a.transferToAgent);
  if (a.escalate) add('escalate', 'yes: the enclosing loop ends');
  if (a.skipSummarization) add('skip summarization', 'yes');
  for (const [k, v] of Object.entries(a)) {
    if (['stateDelta', 'artifactDelta', 'transferToAgent', 'escalate', 'skipSummarization'].includes(k)) continue;
    if (v && typeof v === 'object' && !Object.keys(v).length) continue;
    add(k, el('code', { text: JSON.stringify(v) }));
  }
  return rows.length ? el('dl', {}, rows) : el('p', { class: 'hint', text: 'No actions.' });
}

function eventItem(ev, i) {
  return el('li', {},
    el('details', {},
      el('summary', {}, `#${i + 1} `, el('strong', { text: ev.author || '' }), ' ',
        el('span', { class: ev.errorCode ? 'err' : 'kind', text: eventKind(ev) })),
      el('h4', { text: 'Actions' }), actionList(ev.actions || {}),
      el('h4', { text: 'As ADK writes it' }), el('pre', { class: 'json', text: pretty(ev) })));
}

export function renderEvents() {
  const list = $('events');
  list.replaceChildren(...ui.events.map(eventItem));
  if (!ui.events.length) list.replaceChildren(el('li', { class: 'hint', text: 'No events yet.' }));
}

// An event that just arrived: one item more, not the whole list again (long sessions).
export function addEvent(ev) {
  ui.events.push(ev);
  const list = $('events');
  const hint = list.querySelector('li.hint');
  if (hint) hint.remove();
  list.append(eventItem(ev, ui.events.length - 1));
}

// ---------- state ----------

// The event that wrote a key, as a button that opens it in the Events tab.
function writerButton(i) {
  const ev = ui.events[i];
  return el('button', { class: 'plain link', type: 'button', text: `#${i + 1} ${ev.author}`,
    'aria-label': `Show event ${i + 1}, by ${ev.author}`,
    onclick: () => {
      $('tab-events').click();
      const item = $('events').children[i];
      if (!item) return;
      const details = item.querySelector('details');
      details.open = true;
      details.querySelector('summary').focus();
      item.scrollIntoView({ block: 'start' });
    } });
}

export function renderState(state) {
  const writer = {};
  ui.events.forEach((ev, i) => {
    for (const k of Object.keys((ev.actions && ev.actions.stateDelta) || {})) writer[k] = i;
  });
  const scopes = [
    ['app', 'app: shared by every user and session of this app', k => k.startsWith('app:')],
    ['user', 'user: shared by this user\'s sessions', k => k.startsWith('user:')],
    ['session', 'session: this conversation only', k => !k.startsWith('app:') && !k.startsWith('user:') && !k.startsWith('temp:')],
  ];
  const box = $('state');
  box.replaceChildren();
  for (const [name, title, test] of scopes) {
    const keys = Object.keys(state).filter(test).sort();
    box.append(el('h3', { text: title }));
    if (!keys.length) { box.append(el('p', { class: 'hint', text: 'No keys.' })); continue; }
    box.append(el('table', { 'aria-label': `${name} state` },
      el('thead', {}, el('tr', {}, el('th', { text: 'key' }), el('th', { text: 'value' }), el('th', { text: 'written by' }))),
      el('tbody', {}, keys.map(k => el('tr', {},
        el('td', {}, el('code', { text: k })),
        el('td', {}, folded(typeof state[k] === 'string' ? state[k] : pretty(state[k]), `the value of ${k}`)),
        el('td', {}, writer[k] !== undefined ? writerButton(writer[k])
          : (name === 'session' ? 'when the session was created' : 'another session, or at creation')))))));
  }
  box.append(el('h3', { text: 'temp: one invocation only' }),
    el('p', { class: 'hint', text: 'temp: keys live while an invocation runs and are never stored, so none are shown after it.' }));
}

// ---------- tests ----------

export async function runTests() {
  const box = $('tests');
  $('run-tests').disabled = true;
  box.replaceChildren(el('p', { class: 'hint', text: 'Running…' }));
  try {
    const files = await api(`/adk-flow/apps/${enc(ui.app)}/tests`, { method: 'POST' });
    box.replaceChildren(...files.map(f => {
      const passed = f.cases.filter(c => c.passed).length;
      return el('section', {},
        el('h3', { text: `${f.file}: ${passed} of ${f.cases.length} passed` }),
        f.errors.map(e => el('pre', { class: 'fail', text: e })),
        el('table', { class: 'cases' }, el('tbody', {}, f.cases.map(c => el('tr', {},
          el('td', { class: c.passed ? 'pass' : 'fail', text: c.passed ? 'PASS' : 'FAIL' }),
          el('td', {}, c.name, c.failures.map(x => el('pre', { class: 'failure', text: x }))),
          el('td', { class: 'num', text: `${c.ms.toFixed(1)} ms` }))))));
    }));
  } catch (e) {
    box.replaceChildren(el('pre', { class: 'fail', text: e.message }));
  } finally {
    $('run-tests').disabled = false;
  }
}

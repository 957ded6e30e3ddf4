// The inspect panes: the graph (highlight, an agent's details), events, state, the
// timeline and the workflow's tests.
import { $, ui, el, enc, pretty, api } from './core.js';

export function highlight(agent) {
  for (const node of $('graph').querySelectorAll('.af-node.af-active')) node.classList.remove('af-active');
  if (!agent) return;
  const node = $('graph').querySelector(`.af-node[data-agent="${CSS.escape(agent)}"]`);
  if (node) node.classList.add('af-active');
}

export async function refreshSession() {
  if (!ui.session) return;
  const s = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(ui.session)}`);
  ui.events = s.events || [];
  renderEvents();
  renderState(s.state || {});
  renderTimeline();
  if (ui.shownAgent) showAgent(ui.shownAgent);
}

// ---------- events ----------

function eventKind(ev) {
  const parts = (ev.content && ev.content.parts) || [];
  const a = ev.actions || {};
  const kinds = [];
  if (ev.errorCode || ev.errorMessage) kinds.push(`error ${ev.errorCode || ''}`.trim());
  if (parts.some(p => p.functionCall)) kinds.push(`calls ${parts.filter(p => p.functionCall).map(p => p.functionCall.name).join(', ')}`);
  if (parts.some(p => p.functionResponse)) kinds.push(`result of ${parts.filter(p => p.functionResponse).map(p => p.functionResponse.name).join(', ')}`);
  if (parts.some(p => typeof p.text === 'string')) kinds.push('text');
  if (a.transferToAgent) kinds.push(`transfer to ${a.transferToAgent}`);
  if (a.escalate) kinds.push('escalate');
  if (a.stateDelta && Object.keys(a.stateDelta).length) kinds.push('state');
  if (a.artifactDelta && Object.keys(a.artifactDelta).length) kinds.push('artifacts');
  return kinds.join(' · ') || 'event';
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
      actionList(ev.actions || {}),
      el('pre', { text: pretty(ev) })));
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

export function renderState(state) {
  const writer = {};
  ui.events.forEach((ev, i) => {
    for (const k of Object.keys((ev.actions && ev.actions.stateDelta) || {})) writer[k] = `#${i + 1} ${ev.author}`;
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
        el('td', {}, el('pre', { text: typeof state[k] === 'string' ? state[k] : pretty(state[k]) })),
        el('td', { text: writer[k] || (name === 'session' ? 'when the session was created' : 'another session, or at creation') }))))));
  }
  box.append(el('h3', { text: 'temp: one invocation only' }),
    el('p', { class: 'hint', text: 'temp: keys live while an invocation runs and are never stored, so none are shown after it.' }));
}

// ---------- timeline ----------

export async function renderTimeline() {
  const box = $('timeline');
  // Another app or user may have been picked meanwhile: no session, nothing to fetch.
  if (!ui.session) {
    box.replaceChildren(el('p', { class: 'hint', text: 'No session open.' }));
    return;
  }
  let spans = [];
  try { spans = await api(`/debug/trace/session/${enc(ui.session)}`); } catch (e) {
    box.replaceChildren(el('p', { class: 'hint', text: `No traces: ${e.message}` }));
    return;
  }
  if (!spans.length) {
    box.replaceChildren(el('p', { class: 'hint', text: 'No spans for this session (a new session, or serve --no-debug-traces).' }));
    return;
  }
  const byTrace = new Map();
  for (const s of spans) {
    if (!byTrace.has(s.trace_id)) byTrace.set(s.trace_id, []);
    byTrace.get(s.trace_id).push(s);
  }
  box.replaceChildren();
  let n = 0;
  for (const group of byTrace.values()) {
    n += 1;
    const start = Math.min(...group.map(s => s.start_time));
    const end = Math.max(...group.map(s => s.end_time));
    const total = Math.max(end - start, 1);
    const ids = new Map(group.map(s => [s.span_id, s]));
    const depth = s => { let d = 0; let p = s; while (p.parent_span_id != null && ids.has(p.parent_span_id) && d < 20) { p = ids.get(p.parent_span_id); d += 1; } return d; };
    const ordered = [...group].sort((a, b) => a.start_time - b.start_time || depth(a) - depth(b));
    const ms = ns => (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1);
    box.append(el('h3', { text: `Invocation ${n}: ${ms(total)} ms` }),
      el('table', { class: 'timeline' },
        el('thead', {}, el('tr', {}, el('th', { text: 'span' }), el('th', { text: 'ms' }), el('th', { text: 'tokens in/out' }), el('th', { class: 'bar-cell', text: 'when' }))),
        el('tbody', {}, ordered.map(s => {
          const a = s.attributes || {};
          const tokens = a['gen_ai.usage.input_tokens'] !== undefined
            ? `${a['gen_ai.usage.input_tokens']} / ${a['gen_ai.usage.output_tokens'] ?? '?'}` : '';
          const kind = s.name.startsWith('call_llm') || s.name.startsWith('generate_content') ? 'llm'
            : s.name.startsWith('execute_tool') ? 'tool' : '';
          const left = ((s.start_time - start) / total) * 100;
          const width = ((s.end_time - s.start_time) / total) * 100;
          return el('tr', {},
            el('td', {}, el('span', { style: `padding-left:${depth(s) * 12}px`, text: s.name })),
            el('td', { text: ms(s.end_time - s.start_time) }),
            el('td', { text: tokens }),
            el('td', { class: 'bar-cell' }, el('div', { class: `bar ${kind}` },
              el('span', { style: `left:${left.toFixed(2)}%;width:${width.toFixed(2)}%`, title: `${s.name}: ${ms(s.end_time - s.start_time)} ms` }))));
        }))));
  }
}

// ---------- agents ----------

export async function showAgent(name) {
  if (!ui.info) return;
  const a = ui.info.agents.find(x => x.name === name);
  if (!a) return;
  ui.shownAgent = name;
  const box = $('agent');
  box.hidden = false;
  const rows = [];
  const add = (k, v) => { if (v !== undefined && v !== null && v !== '') rows.push(el('dt', { text: k }), el('dd', {}, v)); };
  add('kind', a.kind);
  add('model', a.model ? `${a.model}${a.modelFrom ? ` (from ${a.modelFrom})` : ''}` : (a.kind === 'LlmAgent' ? 'the run\'s default' : null));
  add('description', a.description);
  add('tools', a.tools && a.tools.length ? a.tools.join(', ') : null);
  add('output_key', a.outputKey);
  add('sub-agents', a.subAgents.length ? a.subAgents.join(', ') : null);
  add('written in', `${a.file}:${a.line}`);
  box.replaceChildren(
    el('div', { class: 'row' }, el('h3', { text: a.name }),
      el('button', { class: 'plain', type: 'button', text: 'Close', onclick: () => { box.hidden = true; ui.shownAgent = ''; } })),
    el('dl', {}, rows),
    el('h3', { text: 'YAML' }), el('pre', { class: 'yaml', text: a.yaml }));
  if (a.instruction !== undefined) {
    const rendered = el('pre', { class: 'rendered', text: '…' });
    box.append(el('h3', { text: 'Instruction, as written' }), el('pre', { text: a.instruction }),
      el('h3', { text: 'Instruction, rendered with this session\'s state' }), rendered);
    try {
      const q = ui.session ? `?user=${enc(ui.user)}&session=${enc(ui.session)}` : '';
      const r = await api(`/adk-flow/apps/${enc(ui.app)}/agents/${enc(name)}/instruction${q}`);
      rendered.textContent = r.rendered ?? (r.error ? `Cannot render yet: ${r.error}` : '(no session)');
    } catch (e) { rendered.textContent = e.message; }
  }
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
        el('table', {}, el('tbody', {}, f.cases.map(c => el('tr', {},
          el('td', { class: c.passed ? 'pass' : 'fail', text: c.passed ? 'PASS' : 'FAIL' }),
          el('td', { text: c.name }),
          el('td', { text: `${c.ms.toFixed(1)} ms` }),
          el('td', {}, c.failures.map(x => el('pre', { text: x }))))))));
    }));
  } catch (e) {
    box.replaceChildren(el('pre', { class: 'fail', text: e.message }));
  } finally {
    $('run-tests').disabled = false;
  }
}

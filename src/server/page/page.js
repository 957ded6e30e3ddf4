// adk-flow's web page. Plain JavaScript, no framework, nothing fetched from elsewhere.
// It speaks ADK's own routes (/list-apps, sessions, /run_sse, /debug/trace, /status)
// and adk-flow's few extra ones under /adk-flow/ (see src/server/page/mod.rs).
'use strict';

const $ = id => document.getElementById(id);
const ui = {
  app: '', user: 'user', session: '', running: false,
  info: null,          // GET /adk-flow/apps/{app}
  events: [],          // the session's events, as stored (plus the running turn's)
  agentNames: new Set(),
  shownAgent: '',
};

// ---------- small helpers ----------

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') node.className = v;
    else if (k === 'text') node.textContent = v;
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v);
    else node.setAttribute(k, v === true ? '' : v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    node.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
  return node;
}

const enc = encodeURIComponent;
const pretty = v => JSON.stringify(v, null, 2);

async function api(path, options = {}) {
  const r = await fetch(path, { credentials: 'same-origin', ...options });
  const type = r.headers.get('content-type') || '';
  const body = type.includes('json') ? await r.json() : await r.text();
  if (!r.ok) {
    const detail = body && body.detail ? body.detail : (typeof body === 'string' ? body : pretty(body));
    throw new Error(`${r.status}: ${detail}`);
  }
  return body;
}

function when(seconds) {
  if (!seconds) return '';
  const d = new Date(seconds * 1000);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

function showError(message) {
  addMessage(el('li', { class: 'msg error' }, el('span', { class: 'who', text: 'error' }),
    el('div', { class: 'text', text: message })));
}

function saveLocation() {
  const q = new URLSearchParams();
  if (ui.app) q.set('app', ui.app);
  if (ui.user && ui.user !== 'user') q.set('user', ui.user);
  if (ui.session) q.set('session', ui.session);
  history.replaceState(null, '', `${location.pathname}?${q}`);
}

// ---------- session names (kept in this browser; ADK sessions have no name) ----------

function namesKey() { return `adk-flow:names:${ui.app}/${ui.user}`; }
function names() {
  try { return JSON.parse(localStorage.getItem(namesKey()) || '{}'); } catch { return {}; }
}
function setName(id, name) {
  const all = names();
  if (name) all[id] = name; else delete all[id];
  localStorage.setItem(namesKey(), JSON.stringify(all));
}
function sessionLabel(id) { return names()[id] || `Session ${id.slice(0, 8)}`; }

// ---------- apps and their status ----------

async function loadApps() {
  const apps = await api('/list-apps');
  const select = $('app');
  select.replaceChildren(...apps.map(a => el('option', { value: a, text: a })));
  const q = new URLSearchParams(location.search);
  ui.user = q.get('user') || 'user';
  $('user').value = ui.user;
  const wanted = q.get('app');
  ui.app = apps.includes(wanted) ? wanted : (apps[0] || '');
  select.value = ui.app;
  ui.session = q.get('session') || '';
  await openApp();
}

// Opening an app and listing sessions run one at a time, in order: a second change of
// app while the first is loading must not create sessions in the wrong app, or twice.
let queue = Promise.resolve();
function serial(task) {
  const next = queue.then(task, task);
  queue = next.catch(() => {});
  return next;
}

function openApp() { return serial(openAppNow); }

async function openAppNow() {
  ui.info = null;
  ui.agentNames = new Set();
  $('agent').hidden = true;
  $('graph').replaceChildren();
  await refreshStatus();
  try {
    ui.info = await api(`/adk-flow/apps/${enc(ui.app)}`);
    ui.agentNames = new Set(ui.info.agents.map(a => a.name));
    const svg = await api(`/adk-flow/apps/${enc(ui.app)}/graph.svg`);
    $('graph').innerHTML = svg;
    for (const node of $('graph').querySelectorAll('.af-node')) {
      node.setAttribute('role', 'button');
      node.addEventListener('click', () => showAgent(node.dataset.agent));
      node.addEventListener('keydown', e => {
        if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); showAgent(node.dataset.agent); }
      });
    }
    $('test-files').textContent = ui.info.tests.length
      ? `Test files: ${ui.info.tests.join(', ')}`
      : 'No .test.yaml file names this workflow.';
    $('run-tests').disabled = ui.info.tests.length === 0;
    $('tests').replaceChildren();
  } catch (e) {
    $('graph').replaceChildren(el('p', { class: 'hint', text: `No graph: ${e.message}` }));
  }
  await loadSessionsNow();
}

async function refreshStatus() {
  let status;
  try { status = await api('/status'); } catch { return; }
  const me = (status.apps || []).find(a => a.name === ui.app);
  const badge = $('app-status');
  const box = $('problems');
  if (!me) { badge.textContent = ''; box.hidden = true; return; }
  badge.className = `badge ${me.status}`;
  badge.textContent = me.status === 'ok'
    ? `${me.file} · version ${me.version}`
    : `${me.file}: the last edit does not load`;
  if (me.status === 'ok' || !me.problems.length) {
    box.hidden = true;
    box.replaceChildren();
  } else {
    box.hidden = false;
    const serving = me.version
      ? `Version ${me.version} (loaded ${when(me.loaded_at ?? me.loadedAt)}) is still serving.`
      : 'No version of this app has loaded yet.';
    box.replaceChildren(
      el('strong', { text: `${ui.app}: the last edit was rejected. ` }), serving,
      ...me.problems.map(p => el('pre', { text: problemText(p) })));
  }
  return me;
}

function problemText(p) {
  if (typeof p === 'string') return p;
  const where = [p.file, p.line, p.column ?? p.col].filter(x => x !== undefined && x !== null).join(':');
  return `${where}: ${p.severity || 'error'}: ${p.message}`;
}

// ---------- sessions ----------

function loadSessions() { return serial(loadSessionsNow); }

async function loadSessionsNow() {
  const list = $('session-list');
  let sessions = [];
  try {
    sessions = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions`);
  } catch (e) {
    list.replaceChildren(el('li', { class: 'hint', text: e.message }));
    return;
  }
  sessions.sort((a, b) => (b.lastUpdateTime || 0) - (a.lastUpdateTime || 0));
  if (!sessions.some(s => s.id === ui.session)) ui.session = sessions[0] ? sessions[0].id : '';
  list.replaceChildren(...sessions.map(s => sessionItem(s)));
  if (!ui.session) await createSession(); else await openSession(ui.session);
}

function sessionItem(s) {
  const current = s.id === ui.session;
  return el('li', { 'aria-current': current ? 'true' : 'false', 'data-session': s.id },
    el('button', { class: 'open', type: 'button', title: s.id, onclick: () => openSession(s.id) },
      el('div', { text: sessionLabel(s.id) }),
      el('div', { class: 'when', text: when(s.lastUpdateTime) })),
    el('div', { class: 'actions' },
      el('button', { class: 'plain', type: 'button', text: 'Rename', 'aria-label': `Rename ${sessionLabel(s.id)}`,
        onclick: () => {
          const name = prompt('Name of this session (kept in this browser):', names()[s.id] || '');
          if (name !== null) { setName(s.id, name.trim()); loadSessions(); }
        } }),
      el('button', { class: 'plain', type: 'button', text: 'Delete', 'aria-label': `Delete ${sessionLabel(s.id)}`,
        onclick: async () => {
          if (!confirm(`Delete ${sessionLabel(s.id)} and its events?`)) return;
          await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(s.id)}`, { method: 'DELETE' });
          setName(s.id, '');
          if (ui.session === s.id) ui.session = '';
          await loadSessions();
        } })));
}

function newSession() { return serial(createSession); }

async function createSession() {
  const s = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
  });
  ui.session = s.id;
  await loadSessionsNow();
}

async function openSession(id) {
  ui.session = id;
  saveLocation();
  for (const li of $('session-list').children) {
    li.setAttribute('aria-current', li.dataset.session === id ? 'true' : 'false');
  }
  $('chat-title').textContent = sessionLabel(id);
  $('messages').replaceChildren();
  ui.events = [];
  let s;
  try { s = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(id)}`); }
  catch (e) { showError(e.message); return; }
  ui.events = s.events || [];
  for (const ev of ui.events) renderEvent(ev, new Map());
  renderEvents();
  renderState(s.state || {});
  renderTimeline();
  if (ui.shownAgent) showAgent(ui.shownAgent);
  highlight('');
}

async function refreshSession() {
  const s = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(ui.session)}`);
  ui.events = s.events || [];
  renderEvents();
  renderState(s.state || {});
  renderTimeline();
  if (ui.shownAgent) showAgent(ui.shownAgent);
}

// ---------- chat ----------

function addMessage(node) {
  const box = $('messages');
  box.append(node);
  box.scrollTop = box.scrollHeight;
  return node;
}

function argsText(args) {
  return Object.entries(args || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ');
}

// Shows one event in the chat. `streams` maps an author to its growing partial bubble.
function renderEvent(ev, streams) {
  const author = ev.author || '';
  const parts = (ev.content && ev.content.parts) || [];
  const actions = ev.actions || {};
  if (ev.errorCode || ev.errorMessage) {
    streams.delete(author);
    addMessage(el('li', { class: 'msg error' },
      el('span', { class: 'who', text: `${author} · error ${ev.errorCode || ''}` }),
      el('div', { class: 'text', text: ev.errorMessage || ev.errorCode })));
  }
  const text = parts.filter(p => typeof p.text === 'string' && !p.thought).map(p => p.text).join('');
  if (ev.partial) {
    if (!text) return;
    let bubble = streams.get(author);
    if (!bubble) {
      bubble = addMessage(el('li', { class: 'msg model partial' },
        el('span', { class: 'who', text: author }), el('div', { class: 'text' })));
      streams.set(author, bubble);
    }
    bubble.querySelector('.text').textContent += text;
    $('messages').scrollTop = $('messages').scrollHeight;
    return;
  }
  const bubble = streams.get(author);
  streams.delete(author);
  if (text) {
    const role = author === 'user' ? 'user' : 'model';
    if (bubble) {
      bubble.classList.remove('partial');
      bubble.querySelector('.text').textContent = text;
    } else {
      addMessage(el('li', { class: `msg ${role}` },
        el('span', { class: 'who', text: author }), el('div', { class: 'text', text })));
    }
  } else if (bubble) {
    bubble.remove();
  }
  const longRunning = new Set(ev.longRunningToolIds || []);
  for (const p of parts) {
    if (p.functionCall) {
      const call = p.functionCall;
      const item = addMessage(el('li', { class: 'msg tool' },
        el('span', { class: 'who', text: `${author} calls a tool${longRunning.has(call.id) ? ' (long-running: answer it below)' : ''}` }),
        el('div', { class: 'text' }, el('code', { text: `${call.name}(${argsText(call.args)})` }))));
      if (longRunning.has(call.id)) item.append(answerForm(call));
    }
    if (p.functionResponse) {
      const r = p.functionResponse;
      addMessage(el('li', { class: 'msg tool' },
        el('span', { class: 'who', text: `${r.name} answered` }),
        el('pre', { text: pretty(r.response) })));
    }
  }
  if (actions.transferToAgent) {
    addMessage(el('li', { class: 'msg note', text: `${author} transferred to ${actions.transferToAgent}` }));
  }
  if (actions.escalate) {
    addMessage(el('li', { class: 'msg note', text: `${author} escalated: the enclosing loop ends` }));
  }
}

// The client's answer to a long-running call: a function response sent as the next message.
function answerForm(call) {
  const id = `answer-${call.id}`;
  const area = el('textarea', { id, rows: 3 });
  area.value = '{"status": "approved"}';
  return el('form', {
    onsubmit: async e => {
      e.preventDefault();
      let response;
      try { response = JSON.parse(area.value); } catch (err) { showError(`The answer is not JSON: ${err.message}`); return; }
      await runTurn({ role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response } }] },
        `answer to ${call.name}: ${area.value}`);
    },
  }, el('label', { for: id, text: `Answer to ${call.name} (JSON)` }), area,
  el('button', { type: 'submit', text: 'Send answer' }));
}

function highlight(agent) {
  for (const node of $('graph').querySelectorAll('.af-node.af-active')) node.classList.remove('af-active');
  if (!agent) return;
  const node = $('graph').querySelector(`.af-node[data-agent="${CSS.escape(agent)}"]`);
  if (node) node.classList.add('af-active');
}

async function runTurn(newMessage, shown) {
  if (ui.running || !ui.session) return;
  ui.running = true;
  $('send').disabled = true;
  addMessage(el('li', { class: 'msg user' }, el('span', { class: 'who', text: ui.user }),
    el('div', { class: 'text', text: shown })));
  const streams = new Map();
  try {
    const r = await fetch('/run_sse', {
      method: 'POST', credentials: 'same-origin',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({
        appName: ui.app, userId: ui.user, sessionId: ui.session, newMessage,
        streaming: $('streaming').checked,
      }),
    });
    if (!r.ok) {
      const body = await r.text();
      let detail = body;
      try { detail = JSON.parse(body).detail || body; } catch { /* not JSON */ }
      throw new Error(`${r.status}: ${detail}`);
    }
    const reader = r.body.getReader();
    const decoder = new TextDecoder();
    let buffer = '';
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      let cut;
      while ((cut = buffer.indexOf('\n\n')) >= 0) {
        const frame = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const data = frame.split('\n').filter(l => l.startsWith('data:')).map(l => l.slice(5).trimStart()).join('\n');
        if (!data) continue;
        const ev = JSON.parse(data);
        if (ev.error && !ev.author) { showError(ev.error); continue; }
        if (ui.agentNames.has(ev.author)) highlight(ev.author);
        renderEvent(ev, streams);
        if (!ev.partial) { ui.events.push(ev); renderEvents(); }
      }
    }
  } catch (e) {
    showError(e.message);
  } finally {
    ui.running = false;
    $('send').disabled = false;
    highlight('');
    try { await refreshSession(); } catch (e) { showError(e.message); }
    loadSessionTimes();
  }
}

async function loadSessionTimes() {
  try {
    const sessions = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions`);
    for (const s of sessions) {
      const li = $('session-list').querySelector(`li[data-session="${CSS.escape(s.id)}"] .when`);
      if (li) li.textContent = when(s.lastUpdateTime);
    }
  } catch { /* the list stays as it was */ }
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

function renderEvents() {
  const list = $('events');
  list.replaceChildren(...ui.events.map((ev, i) => el('li', {},
    el('details', {},
      el('summary', {}, `#${i + 1} `, el('strong', { text: ev.author || '' }), ' ',
        el('span', { class: ev.errorCode ? 'err' : 'kind', text: eventKind(ev) })),
      actionList(ev.actions || {}),
      el('pre', { text: pretty(ev) })))));
  if (!ui.events.length) list.replaceChildren(el('li', { class: 'hint', text: 'No events yet.' }));
}

// ---------- state ----------

function renderState(state) {
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

async function renderTimeline() {
  const box = $('timeline');
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

async function showAgent(name) {
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

async function runTests() {
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

// ---------- tabs (arrow keys move between them) ----------

function setupTabs() {
  const tabs = [...document.querySelectorAll('[role="tab"]')];
  const select = tab => {
    for (const t of tabs) {
      const on = t === tab;
      t.setAttribute('aria-selected', on ? 'true' : 'false');
      t.tabIndex = on ? 0 : -1;
      $(t.getAttribute('aria-controls')).hidden = !on;
    }
    if (tab.id === 'tab-time' && ui.session) renderTimeline();
  };
  tabs.forEach((tab, i) => {
    tab.addEventListener('click', () => select(tab));
    tab.addEventListener('keydown', e => {
      const step = { ArrowRight: 1, ArrowLeft: -1 }[e.key];
      if (!step) return;
      const next = tabs[(i + step + tabs.length) % tabs.length];
      next.focus();
      select(next);
    });
  });
}

// ---------- start ----------

document.addEventListener('DOMContentLoaded', async () => {
  setupTabs();
  $('app').addEventListener('change', async e => { ui.app = e.target.value; ui.session = ''; ui.shownAgent = ''; saveLocation(); await openApp(); });
  $('user').addEventListener('change', async e => { ui.user = e.target.value.trim() || 'user'; ui.session = ''; saveLocation(); await loadSessions(); });
  $('new-session').addEventListener('click', () => newSession().catch(e => showError(e.message)));
  $('run-tests').addEventListener('click', runTests);
  $('send-form').addEventListener('submit', e => {
    e.preventDefault();
    const text = $('message').value.trim();
    if (!text) return;
    $('message').value = '';
    runTurn({ role: 'user', parts: [{ text }] }, text);
  });
  $('message').addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('send-form').requestSubmit(); }
  });
  try { await loadApps(); } catch (e) { showError(e.message); }
  // Hot reload: the server checks the files; the page shows what it found.
  setInterval(async () => {
    const before = $('app-status').textContent;
    const me = await refreshStatus();
    if (me && me.status === 'ok' && before && before !== $('app-status').textContent) await openApp();
  }, 3000);
});

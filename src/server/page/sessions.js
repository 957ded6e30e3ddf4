// Apps (their status and hot-reload diagnostics) and sessions: listed, opened, started,
// renamed, deleted.
import { $, ui, el, enc, api, when, showError, saveLocation } from './core.js';
import { renderEvent } from './chat.js';
import { renderEvents, renderState } from './inspect.js';
import { highlight, loadGraph, showAgain } from './graph.js';
import { renderTimeline } from './timeline.js';

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
// The name ADK's dev UI gives a session, kept in its state, by session id.
const adkNames = new Map();
function sessionLabel(id) { return names()[id] || adkNames.get(id) || `Session ${id.slice(0, 8)}`; }

// ---------- apps and their status ----------

export async function loadApps() {
  const apps = await api('/list-apps');
  const select = $('app');
  select.replaceChildren(...apps.map(a => el('option', { value: a, text: a })));
  const q = new URLSearchParams(location.search);
  ui.user = q.get('user') || 'user';
  $('user').value = ui.user;
  const wanted = q.get('app');
  // Without one asked for, the first app that loads: a new user starts with one that runs.
  let failing = [];
  try { failing = ((await api('/status')).apps || []).filter(fails).map(a => a.name); } catch { /* any */ }
  ui.app = apps.includes(wanted) ? wanted : (apps.find(a => !failing.includes(a)) || apps[0] || '');
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

// Only the last of several requests made while one loads is carried out: it opens the app
// picked last (a second opening would redraw the graph under a turn that has started).
let openings = 0;
export function openApp() {
  const mine = ++openings;
  return serial(() => (mine === openings ? openAppNow() : undefined));
}

async function openAppNow() {
  document.title = ui.app ? `${ui.app} · adk-flow` : 'adk-flow';
  ui.info = null;
  ui.agentNames = new Set();
  $('agent').hidden = true;
  $('graph').replaceChildren();
  await loadAppNow();
  await loadSessionsNow();
}

// A new version of the app shown: its picture, agents and test files again; the chat,
// the session and the details shown stay.
export function reloadApp() {
  return serial(async () => {
    await loadAppNow();
    showAgain();
    // An app that did not load had no session: it gets one now; a new one's intro says
    // what the app is.
    if (!ui.session) await loadSessionsNow();
    else if (!ui.events.length) $('messages').replaceChildren(intro());
  });
}

// The app as written: its status, agents, graph and test files.
async function loadAppNow() {
  const app = ui.app;
  const me = await refreshStatus();
  if (me && fails(me)) {
    // No version has loaded: nothing to draw or run; the problems are shown above.
    ui.version = 0;
    $('graph').replaceChildren(el('p', { class: 'hint', text: `${app} does not load: the problems are above the page. The graph shows as soon as the file loads.` }));
    $('test-files').textContent = '';
    $('run-tests').disabled = true;
    $('tests').replaceChildren();
    return;
  }
  try {
    const info = await api(`/adk-flow/apps/${enc(app)}`);
    if (ui.app !== app) return;
    ui.info = info;
    ui.version = me ? me.version : 0;
    ui.agentNames = new Set(ui.info.agents.map(a => a.name));
    $('answered-by').hidden = !ui.info.answeredBy;
    $('answered-by').textContent = ui.info.answeredBy ? `models: ${ui.info.answeredBy}` : '';
    await loadGraph();
    $('test-files').textContent = ui.info.tests.length
      ? `Test files: ${ui.info.tests.join(', ')}`
      : 'No .test.yaml file names this workflow.';
    $('run-tests').disabled = ui.info.tests.length === 0;
    $('tests').replaceChildren();
  } catch (e) {
    $('graph').replaceChildren(el('p', { class: 'hint', text: `No graph: ${e.message}` }));
  }
}

// An app (as GET /status gives it) that has no version and problems: it does not load. One
// not loaded yet has no problems, and loads when first asked for.
function fails(a) { return !a.version && a.problems && a.problems.length > 0; }

export async function refreshStatus() {
  let status;
  try { status = await api('/status'); } catch {
    // The server stopped (or the network went): say so, rather than show the last status
    // as if it held; the next answer puts the status back.
    const badge = $('app-status');
    badge.className = 'badge invalid';
    badge.textContent = 'the server does not answer';
    return;
  }
  const me = (status.apps || []).find(a => a.name === ui.app);
  // The app list says which apps do not load.
  for (const a of status.apps || []) {
    const option = [...$('app').options].find(o => o.value === a.name);
    if (option) option.textContent = fails(a) ? `${a.name} (does not load)` : a.name;
  }
  ui.loads = !me || !fails(me);
  $('send').disabled = ui.running || !ui.loads;
  // An app that does not load gets no session (and its graph pane no hint) until it loads.
  $('new-session').disabled = !ui.loads;
  $('graph-hint').hidden = !ui.loads;
  $('graph-zoom').hidden = !ui.loads;
  const badge = $('app-status');
  const box = $('problems');
  if (!me) { badge.className = 'badge'; badge.textContent = ''; box.hidden = true; return; }
  badge.className = `badge ${me.status}`;
  badge.textContent = me.status === 'ok'
    ? `${me.file} · version ${me.version}`
    : `${me.file}: ${me.version ? 'the last edit does not load' : 'does not load'}`;
  if (me.status === 'ok' || !me.problems.length) {
    box.hidden = true;
    box.replaceChildren();
  } else {
    box.hidden = false;
    const serving = me.version
      ? `Version ${me.version} (loaded ${when(me.loaded_at ?? me.loadedAt)}) is still serving.`
      : 'No version of this app has loaded yet.';
    box.replaceChildren(
      el('strong', { text: me.version ? `${ui.app}: the last edit was rejected. ` : `${ui.app} does not load. ` }), serving,
      ...me.problems.map(p => el('pre', { text: problemText(p) })),
      el('div', { class: 'hint', text: 'Fix the file and save it: the page takes the new version as soon as it loads.' }));
  }
  return me;
}

function problemText(p) {
  if (typeof p === 'string') return p;
  const where = [p.file, p.line, p.column ?? p.col].filter(x => x !== undefined && x !== null).join(':');
  return `${where}: ${p.severity || 'error'}: ${p.message}`;
}

// ---------- sessions ----------

export function loadSessions() { return serial(loadSessionsNow); }

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
  for (const s of sessions) {
    const shown = s.state && s.state.__session_metadata__ && s.state.__session_metadata__.displayName;
    if (typeof shown === 'string' && shown) adkNames.set(s.id, shown);
  }
  if (!sessions.some(s => s.id === ui.session)) ui.session = sessions[0] ? sessions[0].id : '';
  list.replaceChildren(...sessions.map(s => sessionItem(s)));
  nameListed(sessions);
  if (ui.session) await openSession(ui.session);
  else if (ui.loads === false) noSession();
  else await createSession();
}

function sessionItem(s) {
  const current = s.id === ui.session;
  return el('li', { 'aria-current': current ? 'true' : 'false', 'data-session': s.id },
    el('button', { class: 'open', type: 'button', title: s.id, onclick: () => openSession(s.id) },
      el('div', { text: sessionLabel(s.id) }),
      el('div', { class: 'when', text: when(s.lastUpdateTime) })),
    el('div', { class: 'actions' },
      el('button', { class: 'plain', type: 'button', text: 'Rename', 'aria-label': `Rename ${sessionLabel(s.id)}`,
        onclick: e => rename(e.target.closest('li'), s.id) }),
      el('button', { class: 'plain', type: 'button', text: 'Delete', 'aria-label': `Delete ${sessionLabel(s.id)}`,
        onclick: async () => {
          if (!confirm(`Delete ${sessionLabel(s.id)} and its events?`)) return;
          await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(s.id)}`, { method: 'DELETE' });
          setName(s.id, '');
          if (ui.session === s.id) ui.session = '';
          await loadSessions();
          // The focus goes to the session now open (its button went with the list).
          ($('session-list').querySelector('li[aria-current="true"] button.open') || $('new-session')).focus();
        } })));
}

// Renames a session in place: its name becomes a text box; Enter (or leaving the box)
// keeps the new name, an empty one gives the default back, Escape keeps the old one.
// Focus returns to the session's Rename button.
function rename(li, id) {
  const open = li.querySelector('button.open');
  const before = sessionLabel(id);
  const box = el('input', {
    class: 'rename', type: 'text', value: before, 'aria-label': 'Session name (kept in this browser); Enter saves, Escape cancels',
    spellcheck: 'false', autocomplete: 'off',
  });
  let done = false;
  const finish = async keep => {
    if (done) return;
    done = true;
    keep = keep && box.value.trim() !== before;
    if (keep) setName(id, box.value.trim());
    box.replaceWith(open);
    if (keep) {
      await loadSessions();
      if (ui.session === id) $('chat-title').textContent = sessionLabel(id);
    }
    $('session-list').querySelector(`li[data-session="${CSS.escape(id)}"] .actions button`)?.focus();
  };
  box.addEventListener('keydown', e => {
    if (e.key === 'Enter') { e.preventDefault(); finish(true); }
    if (e.key === 'Escape') { e.preventDefault(); e.stopPropagation(); finish(false); }
  });
  box.addEventListener('blur', () => finish(true));
  open.replaceWith(box);
  box.focus();
  box.select();
}

// A new session, unless the open one has not started yet: then it is the one to type in.
export function newSession() {
  if (ui.loads === false) return Promise.resolve();
  if (ui.session && !ui.events.length && !ui.running) {
    $('message').focus();
    return Promise.resolve();
  }
  return serial(createSession);
}

async function createSession() {
  const s = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions`, {
    method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}',
  });
  ui.session = s.id;
  await loadSessionsNow();
}

// The session shown is drawn from what is stored; a turn started meanwhile waits for it
// (`ui.opening`), or its first events would be drawn twice: from the stream and as stored.
// Only the last opening draws: two at once (a click while the list reloads) would each
// clear the chat before their reads return and then both draw it.
let sessionOpenings = 0;
function openSession(id) {
  const opening = openSessionNow(id, ++sessionOpenings);
  ui.opening = opening.catch(() => {});
  return opening;
}

async function openSessionNow(id, mine) {
  ui.session = id;
  saveLocation();
  for (const li of $('session-list').children) {
    li.setAttribute('aria-current', li.dataset.session === id ? 'true' : 'false');
  }
  $('chat-title').textContent = sessionLabel(id);
  $('messages').replaceChildren();
  $('to-end').hidden = true;
  // `data-drawn` names the session whose stored events the chat shows, once drawn.
  delete $('messages').dataset.drawn;
  ui.events = [];
  let s;
  try { s = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(id)}`); }
  catch (e) {
    // Another session opened meanwhile (this one deleted, say) says nothing of this one.
    if (ui.session === id && mine === sessionOpenings) showError(e.message);
    return;
  }
  // Another session (or app, or this one again) was opened while this one loaded: it wins.
  if (ui.session !== id || mine !== sessionOpenings) return;
  ui.events = s.events || [];
  for (const ev of ui.events) renderEvent(ev, new Map());
  $('messages').dataset.drawn = id;
  if (!ui.events.length) $('messages').append(intro());
  nameAfterFirstMessage();
  renderEvents();
  renderState(s.state || {});
  renderTimeline();
  showAgain();
  highlight(null);
}

// An app that does not load, without sessions: none is made until it loads.
function noSession() {
  saveLocation();
  $('chat-title').textContent = 'No session';
  ui.events = [];
  $('messages').replaceChildren(intro());
  renderEvents();
  renderState({});
}

// What a new session says before its first message: what the app is and how to start.
function intro() {
  if (ui.loads === false) {
    return el('li', { class: 'msg intro' }, el('strong', { text: ui.app }),
      el('div', { text: 'This app does not load, so it cannot run yet: the problems are above the page, with their file, line and column. Fix the file and save it; the page takes the new version as soon as it loads.' }));
  }
  const root = ui.info && ui.info.agents.find(a => a.name === ui.info.root);
  const examples = (ui.info && ui.info.examples) || [];
  // Scripted replies come in their order whatever is typed: say so, or the second
  // example sent first gets the first one's answer.
  const answeredBy = (ui.info && ui.info.answeredBy) || '';
  const scripted = answeredBy.startsWith('--script');
  return el('li', { class: 'msg intro' },
    el('strong', { text: ui.app }), root && root.description ? `: ${root.description}` : '',
    el('div', { text: 'Type a message below to start this session. The graph lights up the agent that is answering.' }),
    scripted ? el('div', { class: 'scripted', text: `Its replies are scripted (${answeredBy.replace(/^--script-beside \((.*)\)$/, '$1')}): each session plays them in order, whatever you type.` }) : '',
    examples.length ? el('div', { class: 'examples' }, 'Or send one of these: ',
      examples.map(text => el('button', { class: 'plain example', type: 'button', text,
        onclick: () => { $('message').value = text; $('message').focus(); $('send-form').requestSubmit(); } }))) : '');
}

export async function loadSessionTimes() {
  try {
    const sessions = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions`);
    for (const s of sessions) {
      const li = $('session-list').querySelector(`li[data-session="${CSS.escape(s.id)}"] .when`);
      if (li) li.textContent = when(s.lastUpdateTime);
    }
  } catch { /* the list stays as it was */ }
}

// A session without a name is named after its first message (in this browser).
function nameAfterFirstMessage() {
  if (!ui.session) return;
  if (nameFrom(ui.session, ui.events)) $('chat-title').textContent = sessionLabel(ui.session);
}

// Names session `id` after the first message of `events` unless it has a name; true when
// it did. Its item in the list says so.
function nameFrom(id, events) {
  if (names()[id] || adkNames.has(id)) return false;
  const first = events.find(e => e.author === 'user' && e.content && (e.content.parts || []).some(p => p.text));
  if (!first) return false;
  const text = first.content.parts.map(p => p.text || '').join(' ').trim().replace(/\s+/g, ' ');
  setName(id, text.length > 40 ? `${text.slice(0, 39)}…` : text);
  const li = $('session-list').querySelector(`li[data-session="${CSS.escape(id)}"]`);
  if (li) {
    li.querySelector('button.open div').textContent = sessionLabel(id);
    for (const b of li.querySelectorAll('.actions button')) {
      b.setAttribute('aria-label', `${b.textContent} ${sessionLabel(id)}`);
    }
  }
  return true;
}

// Sessions already read for a name (by app, user and id): one without a user message is
// not fetched again each time the list is drawn.
const readForName = new Set();

// The listed sessions without a name (started elsewhere: another browser, ADK's CLI or
// API), named after their first message, read in the background (the first 30).
async function nameListed(sessions) {
  const where = `${ui.app}/${ui.user}`;
  const unnamed = sessions
    .filter(s => s.id !== ui.session && !names()[s.id] && !adkNames.has(s.id) && !readForName.has(`${where}/${s.id}`))
    .slice(0, 30);
  for (const s of unnamed) readForName.add(`${where}/${s.id}`);
  await Promise.all(unnamed.map(async s => {
    let full;
    try { full = await api(`/apps/${enc(ui.app)}/users/${enc(ui.user)}/sessions/${enc(s.id)}`); } catch { return; }
    if (`${ui.app}/${ui.user}` === where) nameFrom(s.id, full.events || []);
  }));
}

document.addEventListener('adk-flow:turn-ended', () => { nameAfterFirstMessage(); loadSessionTimes(); });

// adk-flow's web page, shared pieces: the page's state, DOM and HTTP helpers.
// Plain JavaScript modules, no framework, nothing fetched from elsewhere. The page speaks
// ADK's own routes (/list-apps, sessions, /run_sse, /debug/trace, /status) and adk-flow's
// few extra ones under /adk-flow/ (see src/server/page/mod.rs).

export const $ = id => document.getElementById(id);
export const ui = {
  app: '', user: 'user', session: '', running: false,
  version: 0,          // the version of the app the page shows (GET /status)
  loads: true,         // the app shown has a version that loaded
  info: null,          // GET /adk-flow/apps/{app}
  events: [],          // the session's events, as stored (plus the running turn's)
  opening: null,       // the session being drawn from the store (a promise), if any
  agentNames: new Set(),
  shownAgent: '',
};

// ---------- small helpers ----------

export function el(tag, attrs = {}, ...children) {
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

// The node an event comes from: the last step of its ADK 2 `nodeInfo.path`
// (`helpdesk@1/gate@2` is `gate`), else its author.
export function nodeOf(ev) {
  const path = ev.nodeInfo && ev.nodeInfo.path;
  if (!path) return ev.author || '';
  return path.split('/').pop().replace(/@\d+$/, '');
}

export const enc = encodeURIComponent;
export const pretty = v => JSON.stringify(v, null, 2);

export async function api(path, options = {}) {
  const r = await fetch(path, { credentials: 'same-origin', ...options });
  const type = r.headers.get('content-type') || '';
  const body = type.includes('json') ? await r.json() : await r.text();
  if (!r.ok) {
    const detail = body && body.detail ? body.detail : (typeof body === 'string' ? body : pretty(body));
    throw new Error(`${r.status}: ${detail}`);
  }
  return body;
}

export function when(seconds) {
  if (!seconds) return '';
  const d = new Date(seconds * 1000);
  return d.toLocaleString(undefined, { dateStyle: 'short', timeStyle: 'medium' });
}

export function showError(message) {
  addMessage(el('li', { class: 'msg error' }, el('span', { class: 'who', text: 'error' }),
    el('div', { class: 'text', text: message })));
}

export function saveLocation() {
  const q = new URLSearchParams();
  if (ui.app) q.set('app', ui.app);
  if (ui.user && ui.user !== 'user') q.set('user', ui.user);
  if (ui.session) q.set('session', ui.session);
  history.replaceState(null, '', `${location.pathname}?${q}`);
}

// Whether the chat shows its end: new messages then keep it in view; a user who scrolled
// up to read is left where they are.
export function atEnd(box = $('messages')) {
  return box.scrollHeight - box.scrollTop - box.clientHeight < 40;
}

// Adds a message to the chat, before the turn's "working" line when there is one.
export function addMessage(node) {
  const box = $('messages');
  const follow = atEnd(box);
  const pending = box.querySelector('li.pending');
  if (pending) box.insertBefore(node, pending); else box.append(node);
  if (follow) box.scrollTop = box.scrollHeight;
  else $('to-end').hidden = false;
  return node;
}

// A long text (a tool's result) folded to its first lines, with a button that shows it
// all: one large result must not push the conversation out of view.
const FOLD_LINES = 12;
const FOLD_CHARS = 1200;
export function folded(text, what) {
  const lines = text.split('\n').length;
  const pre = el('pre', { class: 'result', text });
  if (lines <= FOLD_LINES && text.length <= FOLD_CHARS) return pre;
  pre.classList.add('folded');
  const more = lines > FOLD_LINES ? `Show all ${lines} lines` : `Show all ${text.length} characters`;
  const button = el('button', { class: 'plain more', type: 'button', 'aria-expanded': 'false', text: more,
    'aria-label': `${more} of ${what}`,
    onclick: () => {
      const open = pre.classList.toggle('folded');
      button.setAttribute('aria-expanded', open ? 'false' : 'true');
      button.textContent = open ? more : 'Show less';
      button.setAttribute('aria-label', `${open ? more : 'Show less'} of ${what}`);
    } });
  return el('div', { class: 'fold' }, pre, button);
}

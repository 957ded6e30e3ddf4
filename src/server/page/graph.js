// The graph pane: the SVG `adk-flow graph --format svg` draws, the node now running
// highlighted, and a click on an agent (or a workflow's Router or JoinNode) showing it as
// written and as configured.
import { $, ui, el, enc, api, folded, pretty } from './core.js';

// Puts the app's picture in the pane; every agent and every described node is a button.
export async function loadGraph() {
  const svg = await api(`/adk-flow/apps/${enc(ui.app)}/graph.svg`);
  $('graph').innerHTML = svg;
  const nodes = new Map(((ui.info && ui.info.nodes) || []).map(n => [n.id, n]));
  for (const node of $('graph').querySelectorAll('.af-node')) {
    const open = node.dataset.agent ? () => showAgent(node.dataset.agent, true)
      : nodes.has(node.dataset.node) ? () => showNode(node.dataset.node, true) : null;
    if (!open) continue;
    node.setAttribute('role', 'button');
    node.setAttribute('tabindex', '0');
    if (!node.hasAttribute('aria-label')) {
      const n = nodes.get(node.dataset.node);
      node.setAttribute('aria-label', `${n.name}: ${n.kind}`);
    }
    node.addEventListener('click', open);
    node.addEventListener('keydown', e => {
      if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); open(); }
    });
  }
}

// The diagram's node an event comes from: the innermost step of its `nodeInfo.path` the
// picture draws (an agent, or WORKFLOW__NODE for a Router), else its author.
function graphNode(ev) {
  const g = $('graph');
  const path = ((ev.nodeInfo && ev.nodeInfo.path) || '').split('/').filter(Boolean)
    .map(s => s.replace(/@\d+$/, ''));
  for (let i = path.length - 1; i >= 0; i -= 1) {
    const agent = g.querySelector(`.af-node[data-agent="${CSS.escape(path[i])}"]`);
    if (agent) return agent;
    if (i > 0) {
      const node = g.querySelector(`.af-node[data-node="${CSS.escape(`${path[i - 1]}__${path[i]}`)}"]`);
      if (node) return node;
    }
  }
  return ev.author ? g.querySelector(`.af-node[data-agent="${CSS.escape(ev.author)}"]`) : null;
}

// Highlights the node `ev` comes from (the user's own events change nothing); `null`
// clears the highlight.
export function highlight(ev) {
  const node = ev ? graphNode(ev) : null;
  if (ev && !node) return;
  for (const n of $('graph').querySelectorAll('.af-node.af-active')) n.classList.remove('af-active');
  if (node) node.classList.add('af-active');
}

function select(selector) {
  for (const n of $('graph').querySelectorAll('.af-node.af-selected')) {
    n.classList.remove('af-selected');
    n.removeAttribute('aria-pressed');
  }
  const node = selector && $('graph').querySelector(selector);
  if (node) { node.classList.add('af-selected'); node.setAttribute('aria-pressed', 'true'); }
}

// The details box: a heading, a Close button, then `rows` and the YAML as written.
function details(title, rows, item, reveal) {
  const box = $('agent');
  box.hidden = false;
  box.replaceChildren(
    el('div', { class: 'row' }, el('h3', { text: title }),
      el('button', { class: 'plain', type: 'button', text: 'Close', 'aria-label': `Close ${title}`,
        onclick: () => { box.hidden = true; ui.shownAgent = ''; select(null); } })),
    el('dl', {}, rows),
    el('h3', { text: `YAML, ${item.file}:${item.line}` }), el('pre', { class: 'yaml', text: dedent(item.yaml) }));
  if (reveal) box.scrollIntoView({ block: 'nearest' });
  // Escape (in the details, or on the node just opened) closes the details and goes back
  // to the node.
  $('panel-graph').onkeydown = e => {
    if (e.key !== 'Escape' || box.hidden) return;
    const node = $('graph').querySelector('.af-node.af-selected');
    box.querySelector('button').click();
    if (node) node.focus();
  };
  return box;
}

function rowsOf(pairs) {
  const rows = [];
  for (const [k, v] of pairs) {
    if (v !== undefined && v !== null && v !== '') rows.push(el('dt', { text: k }), el('dd', {}, v));
  }
  return rows;
}

// YAML shown as if its block started the file (the file and line say where it is).
function dedent(text) {
  const lines = text.split('\n');
  const indent = Math.min(...lines.filter(l => l.trim()).map(l => l.length - l.trimStart().length));
  if (!indent) return text;
  return lines.map(l => l.slice(Math.min(indent, l.length - l.trimStart().length))).join('\n');
}

// An agent's model as written, and what answers instead when the server says so.
function modelText(a) {
  const written = a.model ? `${a.model}${a.modelFrom ? ` (from ${a.modelFrom})` : ''}` : (a.kind === 'LlmAgent' ? 'the run\'s default' : null);
  if (!written || !ui.info.answeredBy) return written;
  return `${written}; this server answers instead: ${ui.info.answeredBy}`;
}

// An agent: kind, model, tools and the rest, its YAML, its instruction as written and
// rendered with the open session's state. `reveal` scrolls the box into view.
export async function showAgent(name, reveal = false) {
  if (!ui.info) return;
  const a = ui.info.agents.find(x => x.name === name);
  if (!a) return;
  ui.shownAgent = name;
  select(`.af-node[data-agent="${CSS.escape(name)}"]`);
  const box = details(a.name, rowsOf([
    ['kind', a.kind],
    ['model', modelText(a)],
    ['description', a.description],
    ['tools', a.tools && a.tools.length ? a.tools.join(', ') : null],
    ['output_key', a.outputKey],
    ['output_schema', a.outputSchema ? folded(pretty(a.outputSchema), `${a.name}'s output_schema`) : null],
    ['sub-agents', a.subAgents.length ? a.subAgents.join(', ') : null],
  ]), a, reveal);
  if (a.instruction !== undefined) {
    const rendered = el('pre', { class: 'rendered', text: '…' });
    box.append(el('h3', { text: 'Instruction, as written' }), el('pre', { class: 'instruction', text: a.instruction }),
      el('h3', { text: 'Instruction, rendered with this session\'s state' }), rendered);
    try {
      const q = ui.session ? `?user=${enc(ui.user)}&session=${enc(ui.session)}` : '';
      const r = await api(`/adk-flow/apps/${enc(ui.app)}/agents/${enc(name)}/instruction${q}`);
      rendered.textContent = r.rendered ?? (r.error ? `Cannot render yet: ${r.error}` : '(no session)');
    } catch (e) { rendered.textContent = e.message; }
  }
}

// A workflow graph's Router or JoinNode: its expressions and its YAML.
export function showNode(id, reveal = false) {
  const n = ((ui.info && ui.info.nodes) || []).find(x => x.id === id);
  if (!n) return;
  ui.shownAgent = `node:${id}`;
  select(`.af-node[data-node="${CSS.escape(id)}"]`);
  const state = Object.entries(n.state || {});
  details(n.name, rowsOf([
    ['kind', n.kind],
    ['in workflow', n.workflow],
    ['route', n.route ? el('code', { text: n.route }) : null],
    ['output', n.output ? el('code', { text: n.output }) : (n.kind === 'adk_flow.Router' ? 'its input, passed on' : null)],
    ['state', state.length ? el('code', { text: state.map(([k, v]) => `${k} = ${v}`).join('\n') }) : null],
  ]), n, reveal);
}

// Shows again what was shown (after a turn, the rendered instruction may change).
export function showAgain() {
  if (!ui.shownAgent) return;
  if (ui.shownAgent.startsWith('node:')) showNode(ui.shownAgent.slice(5));
  else showAgent(ui.shownAgent);
}

// The timeline pane: each invocation of the session from its spans
// (`/debug/trace/session/{id}`): every agent, model and tool call with its latency and
// tokens, drawn on one time axis, and a summary of where the time went.
import { $, ui, el, enc, api, folded, pretty } from './core.js';

const ms = ns => (ns / 1e6).toFixed(ns < 1e7 ? 2 : 1);
// A length as a person reads it: milliseconds, or seconds past one.
const took = ns => (ns >= 1e9 ? `${(ns / 1e9).toFixed(2)} s` : `${ms(ns)} ms`);

function kindOf(s) {
  if (s.name.startsWith('call_llm') || s.name.startsWith('generate_content')) return 'k-llm';
  if (s.name.startsWith('execute_tool')) return 'k-tool';
  return 'k-agent';
}

// What the user said to start invocation `id`, from the session's events.
function askedIn(id) {
  const ev = ui.events.find(e => e.invocationId === id && e.author === 'user');
  const parts = (ev && ev.content && ev.content.parts) || [];
  const text = parts.map(p => p.text || (p.functionResponse ? `answer to ${p.functionResponse.name}` : '')).join(' ').trim();
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

function tokens(a) {
  const i = a['gen_ai.usage.input_tokens'];
  const o = a['gen_ai.usage.output_tokens'];
  return i === undefined && o === undefined ? null : [Number(i || 0), Number(o || 0)];
}

// A span's label: its name, and for a model call the agent that made it (said by the
// call, by its generate_content, or by the invoke_agent span it runs in).
function label(s, children, ids) {
  const a = s.attributes || {};
  if (s.name !== 'call_llm') return s.name;
  const inner = children.get(s.span_id) || [];
  let agent = a['gen_ai.agent.name'] || inner.map(c => (c.attributes || {})['gen_ai.agent.name']).find(Boolean);
  for (let p = ids.get(s.parent_span_id), n = 0; !agent && p && n < 20; p = ids.get(p.parent_span_id), n += 1) {
    if (p.name.startsWith('invoke_agent ')) agent = p.name.slice('invoke_agent '.length);
  }
  return agent ? `call_llm · ${agent}` : s.name;
}

// A span's own time: its length less the time its children cover (children that run at
// once, as a ParallelAgent's, are counted once).
function ownTime(s, children) {
  const spans = (children.get(s.span_id) || [])
    .map(c => [Math.max(c.start_time, s.start_time), Math.min(c.end_time, s.end_time)])
    .filter(([a, b]) => b > a)
    .sort((x, y) => x[0] - y[0]);
  let covered = 0;
  let end = -Infinity;
  for (const [a, b] of spans) {
    if (b <= end) continue;
    covered += b - Math.max(a, end);
    end = b;
  }
  return Math.max(s.end_time - s.start_time - covered, 0);
}

function invocation(group, n) {
  const start = Math.min(...group.map(s => s.start_time));
  const end = Math.max(...group.map(s => s.end_time));
  const total = Math.max(end - start, 1);
  const ids = new Map(group.map(s => [s.span_id, s]));
  const children = new Map();
  for (const s of group) {
    if (!children.has(s.parent_span_id)) children.set(s.parent_span_id, []);
    children.get(s.parent_span_id).push(s);
  }
  const depth = s => {
    let d = 0;
    let p = s;
    while (p.parent_span_id != null && ids.has(p.parent_span_id) && d < 20) { p = ids.get(p.parent_span_id); d += 1; }
    return d;
  };
  // Each span right under its parent (branches that run at once stay apart), siblings by
  // start.
  const byStart = (a, b) => a.start_time - b.start_time;
  const ordered = [];
  const seen = new Set();
  const visit = s => {
    if (seen.has(s.span_id)) return;
    seen.add(s.span_id);
    ordered.push(s);
    for (const c of [...(children.get(s.span_id) || [])].sort(byStart)) visit(c);
  };
  group.filter(s => !ids.has(s.parent_span_id)).sort(byStart).forEach(visit);
  for (const s of [...group].sort(byStart)) visit(s);
  // Where the time went: each span's own time (less its children's), by kind, so that a
  // model call holding a transfer's whole sub-agent is not counted twice.
  const models = group.filter(s => s.name === 'call_llm');
  const tools = group.filter(s => s.name.startsWith('execute_tool'));
  const own = new Map(group.map(s => [s.span_id, ownTime(s, children)]));
  const sum = list => list.reduce((t, s) => t + own.get(s.span_id), 0);
  const modelTime = sum(group.filter(s => kindOf(s) === 'k-llm'));
  const toolTime = sum(tools);
  let used = null;
  for (const s of group.filter(x => x.name.startsWith('generate_content'))) {
    const t = tokens(s.attributes || {});
    if (t) used = [(used ? used[0] : 0) + t[0], (used ? used[1] : 0) + t[1]];
  }
  const invocationId = group.map(s => (s.attributes || {})['gcp.vertex.agent.invocation_id']).find(Boolean);
  const asked = invocationId ? askedIn(invocationId) : '';
  // Calls that ran at once (a ParallelAgent's branches) may add up to more than the whole.
  const atOnce = modelTime + toolTime > total ? ' (some at once)' : '';
  const calls = (n, what, t) => (n ? `${n} ${what}${n === 1 ? '' : 's'}: ${took(t)}${atOnce}` : `no ${what}s`);
  const summary = [
    `${took(total)} in all`,
    calls(models.length, 'model call', modelTime),
    calls(tools.length, 'tool call', toolTime),
    `agents and the rest: ${took(Math.max(total - modelTime - toolTime, 0))}`,
    used ? `tokens: ${used[0]} in, ${used[1]} out` : 'no token counts reported',
  ].join(' · ');
  return el('section', { class: 'invocation' },
    el('h3', { text: asked ? `Invocation ${n}: “${asked}”` : `Invocation ${n}` }),
    el('p', { class: 'hint', text: summary }),
    el('table', { class: 'timeline' },
      el('thead', {}, el('tr', {}, el('th', { text: 'span' }), el('th', { class: 'num', text: 'time' }),
        el('th', { class: 'num tokens', text: 'tokens', title: 'tokens in / out' }), el('th', { class: 'bar-cell', text: 'when' }))),
      el('tbody', {}, ordered.flatMap(s => {
        const t = tokens(s.attributes || {});
        const left = ((s.start_time - start) / total) * 100;
        const width = ((s.end_time - s.start_time) / total) * 100;
        const name = label(s, children, ids);
        const open = opened.has(spanKey(s));
        const row = el('tr', { class: kindOf(s) },
          el('td', { class: 'span-name', title: name }, el('span', { style: `--depth:${depth(s)}` },
            el('button', { class: 'plain link', type: 'button', 'aria-expanded': open ? 'true' : 'false', text: name,
              'aria-label': `${name}: its attributes`, onclick: e => toggleDetail(e.currentTarget, s) }))),
          el('td', { class: 'num', text: took(s.end_time - s.start_time) }),
          el('td', { class: 'num tokens', text: t ? `${t[0]} / ${t[1]}` : '–' }),
          el('td', { class: 'bar-cell' }, el('div', { class: 'bar' },
            el('span', { style: `left:${left.toFixed(2)}%;width:${width.toFixed(2)}%`, title: `${name}: ${took(s.end_time - s.start_time)}` }))));
        return open ? [row, detailRow(s)] : [row];
      }))));
}

// The spans whose attributes are open: they stay open when the timeline is drawn again
// (after a turn, or when its tab is chosen again).
const opened = new Set();
const spanKey = s => `${s.trace_id}/${s.span_id}`;

// A span's attributes (what was sent to the model and what it answered, a tool's
// arguments and result, ...) in a row under its own; the JSON ADK writes as text is shown
// as JSON, long values folded.
function toggleDetail(button, s) {
  const row = button.closest('tr');
  const open = row.nextElementSibling && row.nextElementSibling.classList.contains('span-detail');
  button.setAttribute('aria-expanded', open ? 'false' : 'true');
  if (open) {
    opened.delete(spanKey(s));
    row.nextElementSibling.remove();
    return;
  }
  opened.add(spanKey(s));
  row.after(detailRow(s));
}

function detailRow(s) {
  const attrs = Object.entries(s.attributes || {});
  const value = v => {
    if (typeof v === 'string' && /^[[{]/.test(v)) { try { return pretty(JSON.parse(v)); } catch { /* text */ } }
    return typeof v === 'string' ? v : pretty(v);
  };
  return el('tr', { class: 'span-detail' }, el('td', { colspan: 4 },
    attrs.length ? el('dl', {}, attrs.flatMap(([k, v]) => [el('dt', { text: k }), el('dd', {}, folded(value(v), k))]))
      : el('p', { class: 'hint', text: 'No attributes.' })));
}

// Draws the open session's invocations, oldest first.
export async function renderTimeline() {
  const box = $('timeline');
  // Another app or user may have been picked meanwhile: no session, nothing to fetch.
  if (!ui.session) {
    box.replaceChildren(el('p', { class: 'hint', text: 'No session open.' }));
    return;
  }
  const session = ui.session;
  let spans = [];
  try { spans = await api(`/debug/trace/session/${enc(session)}`); } catch (e) {
    if (ui.session === session) box.replaceChildren(el('p', { class: 'hint', text: `No traces: ${e.message}` }));
    return;
  }
  // Another session opened while the spans came: its own drawing wins.
  if (ui.session !== session) return;
  // `data-renders` counts the drawings (a test waits on it).
  box.dataset.renders = String(Number(box.dataset.renders || 0) + 1);
  if (!spans.length) {
    box.replaceChildren(el('p', { class: 'hint', text: 'No spans for this session yet: send a message (with serve --no-debug-traces, none are kept).' }));
    return;
  }
  const byTrace = new Map();
  for (const s of spans) {
    if (!byTrace.has(s.trace_id)) byTrace.set(s.trace_id, []);
    byTrace.get(s.trace_id).push(s);
  }
  const groups = [...byTrace.values()].sort((a, b) => Math.min(...a.map(s => s.start_time)) - Math.min(...b.map(s => s.start_time)));
  box.replaceChildren(
    el('p', { class: 'legend hint' }, 'Bars: ', el('span', { class: 'key k-agent', text: 'agents' }),
      el('span', { class: 'key k-llm', text: 'model calls' }), el('span', { class: 'key k-tool', text: 'tool calls' })),
    // Spans name the model the YAML names (as ADK's do); say when another one answered.
    ui.info && ui.info.answeredBy
      ? el('p', { class: 'hint', text: `Model names in spans are the YAML's: this server answers with ${ui.info.answeredBy}.` })
      : '',
    ...groups.map((g, i) => invocation(g, i + 1)));
}

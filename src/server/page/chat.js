// The chat: one event at a time as the user sees it, a turn over /run_sse, and the
// client's answers to long-running calls.
import { $, ui, el, pretty, addMessage, showError, nodeOf, atEnd, folded } from './core.js';
import { addEvent, refreshSession } from './inspect.js';
import { highlight } from './graph.js';
import { drawMarkdown, markdown } from './markdown.js';


function argsText(args) {
  return Object.entries(args || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ');
}

// Tools that steer the run rather than do work: their calls and results are shown as the
// transfer, escalation or route they cause.
const STEERING = new Set(['transfer_to_agent', 'exit_loop', 'set_route', 'adk_flow.set_route']);

// The loop an escalation ends: the nearest LoopAgent above `agent`, by the app's agents.
function loopAbove(agent) {
  const agents = (ui.info && ui.info.agents) || [];
  let name = agent;
  for (let guard = 0; guard < 50; guard += 1) {
    const parent = agents.find(a => a.subAgents.includes(name));
    if (!parent) return '';
    if (parent.kind.startsWith('LoopAgent')) return parent.name;
    name = parent.name;
  }
  return '';
}

// The model's thoughts in a message, folded (a details element before its text).
function thoughtOf(item) {
  let box = item.querySelector('details.thought');
  if (!box) {
    box = el('details', { class: 'thought' }, el('summary', { text: 'Thoughts' }), el('div', { class: 'thought-text' }));
    item.querySelector('.text').before(box);
  }
  return box.querySelector('.thought-text');
}

// A structured reply (an agent with an output_schema answers JSON): its fields as a list,
// the JSON itself folded below; null for any other text.
function structured(agent, text) {
  const a = ui.info && ui.info.agents.find(x => x.name === agent);
  if (!a || !a.outputSchema) return null;
  let value;
  try { value = JSON.parse(text); } catch { return null; }
  return fields(value, 'Structured reply (output_schema): the JSON');
}

// An object's fields as a list (strings as text, the rest as JSON), the JSON folded below
// under `summary`; null for anything but a non-empty object.
function fields(value, summary) {
  if (!value || typeof value !== 'object' || Array.isArray(value) || !Object.keys(value).length) return null;
  return el('div', { class: 'text structured' },
    el('dl', {}, Object.entries(value).flatMap(([k, v]) => [
      el('dt', { text: k }),
      el('dd', { text: typeof v === 'string' ? v : pretty(v) })])),
    el('details', {}, el('summary', { text: summary }), el('pre', { text: pretty(value) })));
}

function bubble(cls, who, body) {
  return addMessage(el('li', { class: `msg ${cls}` }, el('span', { class: 'who', text: who }), body));
}

// Shows one event in the chat. `streams` maps an author to its growing partial bubble.
export function renderEvent(ev, streams) {
  const author = ev.author || '';
  const node = nodeOf(ev);
  const parts = (ev.content && ev.content.parts) || [];
  const actions = ev.actions || {};
  $('messages').querySelector('li.intro')?.remove();
  if (ev.errorCode || ev.errorMessage) {
    streams.delete(author);
    bubble('error', `${node} · error ${ev.errorCode || ''}`, el('div', { class: 'text', text: ev.errorMessage || ev.errorCode }));
  }
  const text = parts.filter(p => typeof p.text === 'string' && !p.thought).map(p => p.text).join('');
  const thought = parts.filter(p => typeof p.text === 'string' && p.thought).map(p => p.text).join('');
  if (ev.partial) {
    if (!text && !thought) return;
    let growing = streams.get(author);
    if (!growing) {
      growing = bubble('model partial', node, el('div', { class: 'text' }));
      streams.set(author, growing);
    }
    const follow = atEnd();
    if (thought) thoughtOf(growing).textContent += thought;
    drawMarkdown(growing.querySelector('.text'), text, true);
    if (follow) $('messages').scrollTop = $('messages').scrollHeight;
    else $('to-end').hidden = false;
    return;
  }
  const growing = streams.get(author);
  streams.delete(author);
  if (text || thought) {
    const item = growing
      || bubble(author === 'user' ? 'user' : 'model', author === 'user' ? author : node, el('div', { class: 'text' }));
    item.classList.remove('partial');
    if (author === 'user') item.querySelector('.text').textContent = text;
    else drawMarkdown(item.querySelector('.text'), text);
    // The bubble that grew keeps its text element; a structured reply fills it anew.
    const view = structured(node, text);
    if (view) {
      const box = item.querySelector('.text');
      box.className = view.className;
      box.replaceChildren(...view.childNodes);
    }
    if (thought) thoughtOf(item).textContent = thought;
    else item.querySelector('details.thought')?.remove();
  } else if (growing) {
    growing.remove();
  }
  const longRunning = new Set(ev.longRunningToolIds || []);
  for (const p of parts) {
    if (p.functionCall) {
      const call = p.functionCall;
      if (STEERING.has(call.name)) continue;
      const waits = longRunning.has(call.id);
      const item = bubble('tool', waits ? `${node} calls a long-running tool: answer it below` : `${node} calls a tool`,
        el('div', { class: 'text' }, el('code', { text: `${call.name}(${argsText(call.args)})` })));
      if (waits) item.append(answerForm(call));
    }
    if (p.functionResponse) {
      const r = p.functionResponse;
      // A long-running call answered: its form is done.
      const form = r.id && $('messages').querySelector(`form[data-call="${CSS.escape(r.id)}"]`);
      if (form) answered(form);
      // A transfer, escalation or route that happened says so below; one that failed
      // shows why.
      const steered = actions.transferToAgent || actions.escalate || (actions.route !== undefined && actions.route !== null);
      if (STEERING.has(r.name) && steered) continue;
      bubble('tool', `${r.name} answered`, folded(pretty(r.response), `${r.name}'s result`));
    }
  }
  if (actions.transferToAgent) {
    bubble('transfer', 'transfer', el('div', { class: 'text', text: `${node} transferred to ${actions.transferToAgent}` }));
  }
  if (actions.escalate) {
    const loop = loopAbove(node);
    bubble('transfer escalate', 'escalation', el('div', { class: 'text',
      text: loop ? `${node} escalated: the loop ${loop} ends` : `${node} escalated: the enclosing loop ends` }));
  }
  // ADK 2 workflow graphs: a node's route and its output (a Router's has no content).
  if (actions.route !== undefined && actions.route !== null) {
    bubble('transfer route', 'route', el('div', { class: 'text', text: `${node} chose the route ${JSON.stringify(actions.route)}` }));
  }
  // A node's output is shown when it says something new: the output of its workflow, or
  // of a Router with an `output` expression (one without passes its input on).
  const of = ((ev.nodeInfo && ev.nodeInfo.outputFor) || []).slice(1).map(p => p.split('/').pop().replace(/@\d+$/, ''));
  const own = ((ui.info && ui.info.nodes) || []).some(n => n.name === node && n.output);
  if (ev.output !== undefined && ev.output !== null && !text && (of.length || own)) {
    bubble('model output', of.length ? `${node} · the output of ${of.join(', ')}` : `${node} · output`,
      fields(ev.output, 'The output as JSON')
        || (typeof ev.output === 'string' ? el('div', { class: 'text' }, markdown(ev.output))
          : el('div', { class: 'text' }, el('pre', { text: pretty(ev.output) }))));
  }
}

// A long-running call's form once answered: the call says so, the form goes.
function answered(form) {
  const who = form.closest('li').querySelector('.who');
  who.textContent = who.textContent.replace(': answer it below', ' · answered');
  form.remove();
}

// What the user typed into each waiting call's answer, by call id: the conversation is
// drawn again when the session list or the app reloads, and the answer must survive it.
const drafts = new Map();

// The client's answer to a long-running call: a function response sent as the next message.
function answerForm(call) {
  const id = `answer-${call.id}`;
  const area = el('textarea', { id, rows: 3 });
  area.value = drafts.has(call.id) ? drafts.get(call.id) : '{"status": "approved"}';
  area.addEventListener('input', () => drafts.set(call.id, area.value));
  return el('form', {
    'data-call': call.id,
    onsubmit: async e => {
      e.preventDefault();
      let response;
      try { response = JSON.parse(area.value); } catch (err) { showError(`The answer is not JSON: ${err.message}`); return; }
      drafts.delete(call.id);
      answered(e.target);
      await runTurn({ role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response } }] },
        `answer to ${call.name}: ${area.value}`);
    },
  }, el('label', { for: id, text: `Answer to ${call.name} (JSON)` }), area,
  el('button', { type: 'submit', text: 'Send answer' }));
}

// The stream's last frame when the run failed: said once, after the error event that
// usually says the same.
function runFailed(message) {
  const last = [...$('messages').querySelectorAll(':scope > li:not(.pending)')].pop();
  if (last && last.classList.contains('error') && last.querySelector('.text').textContent === message) return;
  bubble('error', 'the run stopped', el('div', { class: 'text', text: message }));
}

export async function runTurn(newMessage, shown) {
  if (ui.running || !ui.session) return;
  ui.running = true;
  $('send').disabled = true;
  // A session still being drawn from the store is drawn first; the turn's events follow.
  await ui.opening;
  if (!ui.session) { ui.running = false; $('send').disabled = ui.loads === false; return; }
  // Screen readers hear the turn when it is done, not every streamed piece.
  $('messages').setAttribute('aria-busy', 'true');
  $('messages').querySelector('li.intro')?.remove();
  bubble('user', ui.user, el('div', { class: 'text', text: shown }));
  // Until the turn ends: a line that says the app is working, and its root agent lit
  // (every invocation starts there) until an event says who is answering.
  $('messages').append(el('li', { class: 'msg note pending', role: 'status', text: `${ui.app} is working…` }));
  $('messages').scrollTop = $('messages').scrollHeight;
  if (ui.info) highlight({ author: ui.info.root });
  const streams = new Map();
  // The user may open another session (or app) while the turn runs: its events then
  // stay out of that one's chat, events and graph.
  const where = `${ui.app}/${ui.user}/${ui.session}`;
  const here = () => `${ui.app}/${ui.user}/${ui.session}` === where;
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
        if (!here()) continue;
        if (ev.error && !ev.author) { runFailed(ev.error); continue; }
        // An event already drawn from the store (the session was opened again during the
        // turn, after the runner committed it) is not drawn twice.
        if (!ev.partial && ev.id && ui.events.some(e => e.id === ev.id)) {
          streams.get(ev.author || '')?.remove();
          streams.delete(ev.author || '');
          continue;
        }
        highlight(ev);
        renderEvent(ev, streams);
        if (!ev.partial) addEvent(ev);
      }
    }
  } catch (e) {
    if (here()) showError(e.message);
  } finally {
    ui.running = false;
    $('send').disabled = ui.loads === false;
    $('messages').removeAttribute('aria-busy');
    for (const p of document.querySelectorAll('#messages li.pending')) p.remove();
    if (here()) {
      highlight(null);
      try { await refreshSession(); } catch (e) { showError(e.message); }
      document.dispatchEvent(new Event('adk-flow:turn-ended'));
    }
  }
}

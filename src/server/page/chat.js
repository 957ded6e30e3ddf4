// The chat: one event at a time as the user sees it, a turn over /run_sse, and the
// client's answers to long-running calls.
import { $, ui, el, pretty, addMessage, showError } from './core.js';
import { addEvent, highlight, refreshSession } from './inspect.js';

function argsText(args) {
  return Object.entries(args || {}).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(', ');
}

// Shows one event in the chat. `streams` maps an author to its growing partial bubble.
export function renderEvent(ev, streams) {
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
      // A long-running call answered: its form is done.
      const form = r.id && $('messages').querySelector(`form[data-call="${CSS.escape(r.id)}"]`);
      if (form) form.replaceWith(el('div', { class: 'who', text: 'answered' }));
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
    'data-call': call.id,
    onsubmit: async e => {
      e.preventDefault();
      let response;
      try { response = JSON.parse(area.value); } catch (err) { showError(`The answer is not JSON: ${err.message}`); return; }
      e.target.replaceWith(el('div', { class: 'who', text: 'answered' }));
      await runTurn({ role: 'user', parts: [{ functionResponse: { id: call.id, name: call.name, response } }] },
        `answer to ${call.name}: ${area.value}`);
    },
  }, el('label', { for: id, text: `Answer to ${call.name} (JSON)` }), area,
  el('button', { type: 'submit', text: 'Send answer' }));
}

export async function runTurn(newMessage, shown) {
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
        if (!ev.partial) addEvent(ev);
      }
    }
  } catch (e) {
    showError(e.message);
  } finally {
    ui.running = false;
    $('send').disabled = false;
    highlight('');
    try { await refreshSession(); } catch (e) { showError(e.message); }
    document.dispatchEvent(new Event('adk-flow:turn-ended'));
  }
}

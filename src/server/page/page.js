// adk-flow's web page: the tabs and the start. See core.js for what the page speaks.
import { $, ui, showError, saveLocation, atEnd } from './core.js';
import { runTurn } from './chat.js';
import { runTests } from './inspect.js';
import { renderTimeline } from './timeline.js';
import { loadApps, openApp, loadSessions, newSession, refreshStatus, reloadApp } from './sessions.js';

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
      // Arrows move to the next or previous tab, Home and End to the first or last.
      const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: tabs.length - 1 }[e.key];
      if (to === undefined) return;
      e.preventDefault();
      const next = tabs[(to + tabs.length) % tabs.length];
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
  // Messages that came while the user read above: a button takes them to the end.
  $('messages').addEventListener('scroll', () => { if (atEnd()) $('to-end').hidden = true; });
  $('to-end').addEventListener('click', () => {
    $('messages').scrollTop = $('messages').scrollHeight;
    $('to-end').hidden = true;
    $('message').focus();
  });
  // The graph fitted to its pane, or at its own size (a wide one is unreadable fitted):
  // kept in this browser.
  const zoom = on => {
    $('graph-zoom').setAttribute('aria-pressed', on ? 'true' : 'false');
    $('graph').classList.toggle('actual', on);
    localStorage.setItem('adk-flow:graph-size', on ? 'actual' : 'fit');
  };
  zoom(localStorage.getItem('adk-flow:graph-size') === 'actual');
  $('graph-zoom').addEventListener('click', () => zoom($('graph-zoom').getAttribute('aria-pressed') !== 'true'));
  // Streaming on or off is a preference: kept in this browser.
  $('streaming').checked = localStorage.getItem('adk-flow:streaming') === 'on';
  $('streaming').addEventListener('change', e => localStorage.setItem('adk-flow:streaming', e.target.checked ? 'on' : 'off'));
  $('send-form').addEventListener('submit', e => {
    e.preventDefault();
    const text = $('message').value.trim();
    // While a turn runs (Send is disabled), Enter keeps the text for later.
    if (!text || ui.running || !ui.session || ui.loads === false) return;
    $('message').value = '';
    runTurn({ role: 'user', parts: [{ text }] }, text);
  });
  $('message').addEventListener('keydown', e => {
    if (e.key === 'Enter' && !e.shiftKey) { e.preventDefault(); $('send-form').requestSubmit(); }
  });
  try { await loadApps(); } catch (e) { showError(e.message); }
  // Hot reload: the server checks the files; the page shows what it found.
  // A new version of the app now shown (not another app picked meanwhile) replaces its
  // graph and details; the chat stays.
  setInterval(async () => {
    const app = ui.app;
    const me = await refreshStatus();
    if (ui.app !== app || ui.running || !me || me.status !== 'ok') return;
    // A new version, or the first one of an app that did not load.
    if (me.version && me.version !== ui.version) await reloadApp();
  }, 3000);
});

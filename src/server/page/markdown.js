// A model's text as the Markdown it usually is: paragraphs, headings, lists, quotes,
// fenced code, `code`, **bold**, *emphasis* and links, built as DOM nodes (never HTML
// from the text, so nothing in a reply can run or load). Text without Markdown is one
// paragraph with its line breaks.
import { el } from './core.js';

// Inline spans: `code`, **bold**, *emphasis*, [text](http…) links; the rest as text.
const INLINE = /`([^`\n]+)`|\*\*(?=\S)([^*\n]+?)\*\*|\*(?=[^\s*])([^*\n]+?)\*|\[([^\]\n]+)\]\((https?:\/\/[^\s)]+)\)/g;

function inline(text) {
  const out = [];
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) out.push(text.slice(last, m.index));
    if (m[1] !== undefined) out.push(el('code', { text: m[1] }));
    else if (m[2] !== undefined) out.push(el('strong', {}, inline(m[2])));
    else if (m[3] !== undefined) out.push(el('em', {}, inline(m[3])));
    else out.push(el('a', { href: m[5], target: '_blank', rel: 'noopener noreferrer' }, m[4]));
    last = m.index + m[0].length;
  }
  if (last < text.length) out.push(text.slice(last));
  return out;
}

const BULLET = /^\s{0,3}[-*+]\s+(.*)$/;
const NUMBER = /^\s{0,3}\d{1,9}[.)]\s+(.*)$/;
const HEADING = /^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$/;
const FENCE = /^\s{0,3}(```|~~~)/;
const QUOTE = /^\s{0,3}>\s?(.*)$/;

// Quotes nest this deep at most: a line of thousands of `>` must not recurse thousands of
// times (a RangeError would leave the whole session undrawable).
const MAX_QUOTE_DEPTH = 8;

// The blocks of `text`, as nodes.
export function markdown(text, depth = 0) {
  return parse(text, depth).blocks;
}

// The blocks of `text`, and where it may be cut: `cut` characters (up to and including the
// last complete blank line the top level reached) end its first `kept` blocks. The top
// level holds no state past a blank line, so what follows the cut draws the same on its own.
function parse(text, depth) {
  const lines = text.split('\n');
  const blocks = [];
  let i = 0;
  let cutLine = -1;
  let kept = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (!line.trim()) {
      // The last line may still grow (more text may come after it): not a cut.
      if (i < lines.length - 1) { cutLine = i; kept = blocks.length; }
      i += 1;
      continue;
    }
    const fence = line.match(FENCE);
    if (fence) {
      const body = [];
      i += 1;
      while (i < lines.length && !lines[i].trimStart().startsWith(fence[1])) body.push(lines[i++]);
      i += 1;
      blocks.push(el('pre', { class: 'md-code' }, el('code', { text: body.join('\n') })));
      continue;
    }
    const heading = line.match(HEADING);
    if (heading) {
      blocks.push(el('p', { class: `md-h md-h${heading[1].length}` }, el('strong', {}, inline(heading[2]))));
      i += 1;
      continue;
    }
    const list = line.match(BULLET) ? BULLET : line.match(NUMBER) ? NUMBER : null;
    if (list) {
      const items = [];
      while (i < lines.length && lines[i].match(list)) {
        let item = lines[i].match(list)[1];
        i += 1;
        // A line that goes on an item (indented, not a new item).
        while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !lines[i].match(BULLET) && !lines[i].match(NUMBER)) {
          item += `\n${lines[i].trim()}`;
          i += 1;
        }
        items.push(el('li', {}, inline(item)));
      }
      const start = list === NUMBER ? Number(line.match(/\d+/)[0]) : 1;
      blocks.push(el(list === NUMBER ? 'ol' : 'ul', { class: 'md-list', start: start !== 1 ? start : undefined }, items));
      continue;
    }
    if (line.match(QUOTE)) {
      const quoted = [];
      while (i < lines.length && lines[i].match(QUOTE)) quoted.push(lines[i++].match(QUOTE)[1]);
      const body = quoted.join('\n');
      const inner = depth < MAX_QUOTE_DEPTH ? markdown(body, depth + 1) : [el('p', {}, body)];
      blocks.push(el('blockquote', { class: 'md-quote' }, inner));
      continue;
    }
    // A paragraph: lines up to a blank one or another block.
    const para = [];
    while (i < lines.length && lines[i].trim() && !(para.length
      && (lines[i].match(FENCE) || lines[i].match(HEADING) || lines[i].match(BULLET) || lines[i].match(NUMBER) || lines[i].match(QUOTE)))) {
      para.push(lines[i++]);
    }
    blocks.push(el('p', {}, inline(para.join('\n'))));
  }
  const cut = cutLine < 0 ? 0 : lines.slice(0, cutLine + 1).reduce((n, l) => n + l.length + 1, 0);
  return { blocks, cut, kept };
}

// What each box drawn by `drawMarkdown` holds: its text, and how much of it (characters,
// nodes) is drawn for good.
const drawn = new WeakMap();

// Draws `text` in `box` as Markdown; `more` adds it to what the box holds (a streamed
// reply). Blocks before the last blank line are kept and only the rest is drawn again, so a
// long streamed reply costs about its length, not its length once per chunk.
export function drawMarkdown(box, text, more = false) {
  const was = more ? drawn.get(box) : undefined;
  const now = was ? { text: was.text + text, done: was.done, kept: was.kept } : { text, done: 0, kept: 0 };
  const { blocks, cut, kept } = parse(now.text.slice(now.done), 0);
  while (box.childNodes.length > now.kept) box.lastChild.remove();
  box.append(...blocks);
  now.done += cut;
  now.kept += kept;
  drawn.set(box, now);
}

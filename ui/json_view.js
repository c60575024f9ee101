// nodeflow JSON viewer: a collapsible tree built lazily (a branch's children are made when it
// is first opened, and long ones a chunk at a time), long strings cut with "show all", and a
// Copy button. Everything is text nodes; nothing from the value reaches innerHTML.

const CHUNK = 200;       // children rendered per "show more"
const STR_MAX = 300;     // characters shown before "show all"

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function scalar(v) {
  if (v === null) return el('span', 'jv-null', 'null');
  switch (typeof v) {
    case 'number': return el('span', 'jv-num', String(v));
    case 'boolean': return el('span', 'jv-bool', String(v));
    case 'string': return stringNode(v);
    default: return el('span', 'jv-null', String(v));
  }
}

function stringNode(s) {
  const wrap = el('span', 'jv-str');
  if (s.length <= STR_MAX) {
    wrap.textContent = JSON.stringify(s);
    return wrap;
  }
  const text = el('span', null, `${JSON.stringify(s.slice(0, STR_MAX)).slice(0, -1)}…"`);
  const more = el('button', 'jv-more', `show all (${s.length.toLocaleString()} chars)`);
  more.type = 'button';
  more.addEventListener('click', () => {
    text.textContent = JSON.stringify(s);
    more.remove();
  });
  wrap.append(text, ' ', more);
  return wrap;
}

function summary(v) {
  if (Array.isArray(v)) return `[ ${v.length.toLocaleString()} item${v.length === 1 ? '' : 's'} ]`;
  const n = Object.keys(v).length;
  return `{ ${n.toLocaleString()} key${n === 1 ? '' : 's'} }`;
}

function keyNode(k, isIndex) {
  return el('span', isIndex ? 'jv-idx' : 'jv-key', isIndex ? `${k}:` : `${JSON.stringify(k).slice(1, -1)}:`);
}

// One entry: a leaf line, or a <details> whose children are built on first open.
function entry(key, v, depth, collapsedDepth, isIndex) {
  if (v === null || typeof v !== 'object') {
    const line = el('div', 'jv-line');
    if (key !== null) line.append(keyNode(key, isIndex), ' ');
    line.appendChild(scalar(v));
    return line;
  }
  const empty = Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0;
  if (empty) {
    const line = el('div', 'jv-line');
    if (key !== null) line.append(keyNode(key, isIndex), ' ');
    line.appendChild(el('span', 'jv-punct', Array.isArray(v) ? '[]' : '{}'));
    return line;
  }
  const d = el('details', 'jv-node');
  const s = el('summary', 'jv-line');
  if (key !== null) s.append(keyNode(key, isIndex), ' ');
  s.appendChild(el('span', 'jv-sum', summary(v)));
  d.appendChild(s);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const body = el('div', 'jv-children');
    const isArr = Array.isArray(v);
    const keys = isArr ? null : Object.keys(v);
    const n = isArr ? v.length : keys.length;
    let shown = 0;
    const more = el('button', 'jv-more');
    more.type = 'button';
    const chunk = () => {
      const frag = document.createDocumentFragment();
      const stop = Math.min(n, shown + CHUNK);
      for (let i = shown; i < stop; i++) {
        frag.appendChild(isArr ? entry(i, v[i], depth + 1, collapsedDepth, true)
          : entry(keys[i], v[keys[i]], depth + 1, collapsedDepth, false));
      }
      shown = stop;
      body.insertBefore(frag, more.isConnected ? more : null);
      if (shown < n) {
        more.textContent = `show ${Math.min(CHUNK, n - shown)} more (${(n - shown).toLocaleString()} left)`;
        if (!more.isConnected) body.appendChild(more);
      } else if (more.isConnected) {
        more.remove();
      }
    };
    more.addEventListener('click', chunk);
    chunk();
    d.appendChild(body);
  };
  d.addEventListener('toggle', () => { if (d.open) build(); });
  if (depth < collapsedDepth) { build(); d.open = true; }
  return d;
}

async function copyText(text) {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const ta = document.createElement('textarea');
  ta.value = text;
  ta.setAttribute('readonly', '');
  ta.className = 'jv-offscreen';
  document.body.appendChild(ta);
  ta.select();
  const ok = document.execCommand('copy');
  ta.remove();
  if (!ok) throw new Error('copy refused');
}

/** A collapsible tree of `value`, opened down to collapsedDepth, with a Copy button. */
// label names the value for assistive technology (the Copy button and the tree); the
// surrounding heading shows it.
export function jsonView(value, { collapsedDepth = 2, label = null } = {}) {
  const wrap = el('div', 'jv');
  const bar = el('div', 'jv-bar');
  const copy = el('button', 'btn btn-small jv-copy', 'Copy');
  copy.type = 'button';
  if (label) copy.setAttribute('aria-label', `Copy ${label}`);
  copy.addEventListener('click', async () => {
    try {
      await copyText(JSON.stringify(value, null, 2) ?? 'null');
      copy.textContent = 'Copied';
    } catch {
      copy.textContent = 'Copy failed';
    }
    setTimeout(() => { copy.textContent = 'Copy'; }, 1500);
  });
  bar.appendChild(copy);
  wrap.appendChild(bar);
  const tree = el('div', 'jv-tree');
  if (label) tree.setAttribute('aria-label', label);
  if (value === undefined) tree.appendChild(el('span', 'jv-null', '(none)'));
  else tree.appendChild(entry(null, value, 0, collapsedDepth, false));
  wrap.appendChild(tree);
  return wrap;
}

export default jsonView;

// DOM building without innerHTML: every string becomes a text node or an attribute value, so
// nothing the API returns is ever parsed as markup.

export const SVG_NS = 'http://www.w3.org/2000/svg';

const PROPS = new Set(['value', 'checked', 'selected', 'disabled', 'hidden', 'indeterminate', 'open']);

function apply(el, props) {
  for (const [k, v] of Object.entries(props || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') {
      el.setAttribute('class', Array.isArray(v) ? v.filter(Boolean).join(' ') : v);
    } else if (k === 'dataset') {
      for (const [dk, dv] of Object.entries(v)) if (dv !== undefined && dv !== null) el.dataset[dk] = String(dv);
    } else if (k === 'style') {
      // CSSOM, not a style attribute: allowed by the page's Content-Security-Policy.
      for (const [sk, sv] of Object.entries(v)) el.style.setProperty(sk, String(sv));
    } else if (k.startsWith('on') && typeof v === 'function') {
      el.addEventListener(k.slice(2).toLowerCase(), v);
    } else if (PROPS.has(k)) {
      el[k] = v;
    } else {
      el.setAttribute(k, v === true ? '' : String(v));
    }
  }
}

function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false || c === true) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

// h('a', {href: '#/', class: 'x', onclick() {}}, 'text', child...) builds an HTML element.
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  apply(el, props);
  append(el, children);
  return el;
}

// s('path', {d: ...}) builds an SVG element.
export function s(tag, props, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  apply(el, props);
  append(el, children);
  return el;
}

export function clear(el) {
  while (el.firstChild) el.removeChild(el.firstChild);
  return el;
}

export function replace(el, ...children) {
  clear(el);
  append(el, children);
  return el;
}

// Short unique IDs for label/aria wiring.
let seq = 0;
export function uid(prefix = 'id') {
  seq += 1;
  return `${prefix}-${seq}`;
}

// A titled card section.
export function card({ title, id, actions, description, cls, headingLevel = 2 }, ...body) {
  const hid = id ? `${id}-title` : uid('card');
  return h('section', { class: ['card', cls], id, 'aria-labelledby': hid },
    h('div', { class: 'card-head' },
      h('div', { class: 'card-titles' },
        h(`h${headingLevel}`, { id: hid, class: 'card-title', tabindex: '-1' }, title),
        description ? h('p', { class: 'card-desc' }, description) : null),
      actions ? h('div', { class: 'card-actions' }, actions) : null),
    ...body);
}

// A labelled form field.
export function field(label, control, hint) {
  const id = control.id || uid('f');
  control.id = id;
  let hintEl = null;
  if (hint) {
    const hid = `${id}-hint`;
    hintEl = h('span', { class: 'field-hint', id: hid }, hint);
    control.setAttribute('aria-describedby', hid);
  }
  return h('div', { class: 'field' }, h('label', { for: id }, label), control, hintEl);
}

export function debounce(fn, ms) {
  let t;
  return (...args) => {
    clearTimeout(t);
    t = setTimeout(() => fn(...args), ms);
  };
}

// Calls fn with the element's width now and whenever it changes by more than `step` pixels,
// until signal aborts.
export function onWidth(el, signal, fn, step = 24) {
  let last = -1;
  const check = () => {
    const w = Math.floor(el.clientWidth);
    if (w > 0 && Math.abs(w - last) >= step) {
      last = w;
      fn(w);
    }
  };
  const ro = new ResizeObserver(() => check());
  ro.observe(el);
  signal?.addEventListener('abort', () => ro.disconnect());
  requestAnimationFrame(check);
}

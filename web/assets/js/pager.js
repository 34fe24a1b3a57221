// The "load more" footer of a table paged by cursor: the first page's rows at once, each later
// page appended on a click, the summary rewritten after every page, and focus moved to the
// first new row.
import { h, replace } from './dom.js';
import { inlineError } from './errors.js';

// loadMore fills tbody with conn's rows (row makes one) and returns the footer's button box.
// next(cursor) resolves to the following connection page; describe(count, pageInfo) rewrites
// the summary; label is the button's text and testid its data-testid (optional).
export function loadMore({ tbody, row, conn, next, describe, label, testid }) {
  const add = (nodes) => nodes.forEach((n) => tbody.appendChild(row(n)));
  add(conn.nodes);
  let count = conn.nodes.length;
  const box = h('div', { class: 'load-more' });
  const foot = (info) => {
    describe(count, info);
    replace(box, info.hasNextPage ? h('button', {
      type: 'button', class: 'btn', dataset: testid ? { testid } : {},
      async onclick(e) {
        e.currentTarget.disabled = true;
        try {
          const page = await next(info.endCursor);
          const firstNew = tbody.children.length;
          add(page.nodes);
          count += page.nodes.length;
          foot(page.pageInfo);
          tbody.children[firstNew]?.querySelector('a')?.focus();
        } catch (err) {
          if (err?.name !== 'AbortError') replace(box, inlineError(err));
        }
      },
    }, label) : null);
  };
  foot(conn.pageInfo);
  return box;
}

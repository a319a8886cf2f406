// A document's page: an article, a memory note or a changelog entry, as the service's `fetch` tool and
// search results link to it (#/ws/<workspace>/articles/<slug>, …/notes/<path>, …/changelog/<id>).
// Opening such a link chooses its workspace when the person can reach it; a long text reads on a part
// at a time.
import { fill, h, message, time } from './dom.js';
import { chosenWorkspace } from './session.js';
import { ORGANIZATIONS, WORKSPACES } from './workspaceQueries.js';

/** The pages a link may name, and the id prefix `fetchDocument` takes for each. */
const PAGES = { articles: 'article', notes: 'note', changelog: 'changelog' };

/** The address's parts (`<workspace>/<page>/<key>`), or null when it names no document. */
export function documentAddress(arg) {
  const match = /^([^/]+)\/(articles|notes|changelog)\/(.+)$/.exec(arg ?? '');
  return match ? { workspaceId: match[1], page: match[2], key: match[3] } : null;
}

/** The FetchedDocument the page shows, a part at a time. */
const FETCH = `query ConsoleDocument($w: String!, $id: String!, $offset: Int) {
  fetchDocument(workspace: $w, id: $id, offset: $offset) {
    id title text url metadata { type key version status section updatedAt offset totalChars truncated nextOffset }
  }
}`;

/** Makes workspace `id` the chosen one when the person can reach it (organizations and workspaces read a page of 100 at a time); false when not. */
export async function adoptWorkspace(gql, id) {
  if (chosenWorkspace.get()?.id === id) return true;
  for (let after = null, more = true; more;) {
    const orgs = (await gql(ORGANIZATIONS, { first: 100, after })).organizations;
    for (const { node: org } of orgs.edges) {
      const found = await workspaceIn(gql, org.id, id);
      if (found) {
        chosenWorkspace.set({ id: found.id, name: found.name, organizationId: org.id, organizationName: org.name });
        return true;
      }
    }
    ({ hasNextPage: more, endCursor: after } = orgs.pageInfo);
  }
  return false;
}

async function workspaceIn(gql, org, id) {
  for (let after = null, more = true; more;) {
    const page = (await gql(WORKSPACES, { org, first: 100, after })).workspaces;
    const found = page.edges.find((e) => e.node.id === id);
    if (found) return found.node;
    ({ hasNextPage: more, endCursor: after } = page.pageInfo);
  }
  return null;
}

/** The document screen: `ctx.arg` is the address after `#/ws/`; the workspace was adopted (or not: `ctx.reachable`). */
export async function documentScreen(ctx) {
  const { main, gql, view } = ctx;
  const address = documentAddress(ctx.arg);
  if (!address || !ctx.reachable) {
    fill(
      main,
      h('h1', { tabindex: '-1' }, 'Document not found'),
      message(
        'warning',
        address
          ? 'This link names a workspace you cannot reach: sign in as a member of its organization, or ask an owner to add you.'
          : 'This link names no document: a document’s address is #/ws/<workspace>/articles/<slug>, …/notes/<path> or …/changelog/<id>.',
      ),
      h('p', {}, h('a', { href: '#/proposals' }, 'Go to the proposals')),
    );
    return;
  }
  const id = `${PAGES[address.page]}:${address.key}`;
  const text = h('pre', { class: 'markdown document-text' });
  const more = h('div', { class: 'document-more' });
  let first;
  try {
    first = (await gql(FETCH, { w: address.workspaceId, id, offset: 0 })).fetchDocument;
  } catch (error) {
    if (!view.alive) return;
    fill(main, h('h1', { tabindex: '-1' }, id), message('error', error.message));
    return;
  }
  if (!view.alive) return;
  text.textContent = first.text;
  fill(main, h('h1', { tabindex: '-1' }, first.title), facts(first.metadata), text, more);
  readOn(first.metadata, { gql, view, w: address.workspaceId, id, text, more });
}

/** A "Read on" button while the text goes on past what is shown. */
function readOn(metadata, part) {
  if (!metadata.truncated || metadata.nextOffset === null) return fill(part.more);
  const button = h(
    'button',
    { type: 'button', class: 'button-quiet' },
    `Read on (${metadata.nextOffset} of ${metadata.totalChars} characters shown)`,
  );
  button.addEventListener('click', async () => {
    button.disabled = true;
    try {
      const next = (await part.gql(FETCH, { w: part.w, id: part.id, offset: metadata.nextOffset })).fetchDocument;
      if (!part.view.alive) return;
      part.text.textContent += next.text;
      readOn(next.metadata, part);
    } catch (error) {
      if (part.view.alive) fill(part.more, message('error', error.message));
    }
  });
  fill(part.more, button);
}

function facts(m) {
  const what = { article: 'Article', note: 'Memory note', changelog: 'Changelog entry' }[m.type] ?? m.type;
  return h(
    'p',
    { class: 'pick-meta' },
    `${what} `,
    h('code', {}, m.key),
    m.version === null ? '' : ` · version ${m.version}`,
    m.status ? ` · ${m.status}` : '',
    m.section ? [m.type === 'note' ? ' · kind ' : ' · section ', h('code', {}, m.section)] : '',
    ' · updated ',
    time(m.updatedAt),
  );
}

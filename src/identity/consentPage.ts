import type { Permission } from '../auth/permissions.js';
import type { AuthorizationRequest } from './authorizationRequest.js';
import type { Resources } from './resources.js';
import { redirectDestination } from './clients.js';

/** What each permission lets a client do, as a person reads it on the consent screen. */
const MEANING: Record<Permission, string> = {
  'article.read': 'Read articles and the sidebar',
  'article.create': 'Create draft articles',
  'article.update': 'Edit and move articles',
  'article.publish': 'Change the status of articles (publish)',
  'proposal.read': 'Read its edit proposals',
  'proposal.create': 'Propose edits for review',
  'section.create': 'Create sidebar sections',
  'upload.image': 'Upload images',
  'changelog.read': 'Read the changelog',
  'changelog.update': 'Write changelog drafts',
  'changelog.publish': 'Publish changelog entries',
  'memory.read': 'Read shared memory notes',
  'memory.write': 'Write and delete shared memory notes',
  'search.read': 'Search the workspace',
  'content_gap.report': 'Report unanswered questions',
  'openapi.read': 'Read the API reference',
  'openapi.manage': 'Attach specs and manage API-reference pages',
  'guidance.update': "Rewrite the workspace's guidance for agents",
};

const escape = (value: string) =>
  value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

const STYLE = `body{font:15px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2330}
main{max-width:34rem;margin:3rem auto;background:#fff;border-radius:10px;padding:2rem;box-shadow:0 1px 4px #0002}
h1{font-size:1.3rem;margin:0 0 1rem}.who{color:#555}ul{padding-left:1.2rem}li.no{color:#999}li.no .what{text-decoration:line-through}
li small{color:#a33;display:block}.box{background:#f7f7fa;border-radius:6px;padding:.6rem .8rem;margin:.8rem 0}
code{font-size:.85em;word-break:break-all}.warn{color:#8a5a00}select{font:inherit;padding:.3rem}
.buttons{display:flex;gap:.8rem;margin-top:1.4rem}
button{font:inherit;padding:.55rem 1.3rem;border-radius:6px;border:1px solid #888;background:#fff;cursor:pointer}
button.allow{background:#1f5fd1;border-color:#1f5fd1;color:#fff}`;

/** A page of the authorization server (consent or refusal), with its own strict CSP. */
function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escape(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/** The Content-Security-Policy of these pages: no scripts; the consent form may post here and lead on to the client's redirect URI. */
export function pageCsp(redirectUri?: string): string {
  let target = '';
  if (redirectUri) {
    const url = new URL(redirectUri);
    target = url.protocol === 'http:' || url.protocol === 'https:' ? ` ${url.origin}` : ` ${url.protocol}`;
  }
  return `default-src 'none'; style-src 'unsafe-inline'; form-action 'self'${target}; frame-ancestors 'none'; base-uri 'none'`;
}

/** What the consent screen shows. */
export interface ConsentView {
  request: AuthorizationRequest;
  resources: Resources;
  member: { email: string; role: string; organizationName: string };
  workspaces: { id: string; name: string }[];
  /** The asked scopes the member's role allows (what a grant gets). */
  granted: string[];
  csrfToken: string;
  /** The request's parameters, carried back by the form. */
  params: Record<string, string>;
}

function clientLine(request: Pick<AuthorizationRequest, 'client' | 'redirectUri'>): string {
  const { client } = request;
  if (client.kind === 'metadata') {
    const host = escape(new URL(client.id).host);
    return `<b>${escape(client.name)}</b> <span class="who">(identified by <code>${host}</code>, which publishes its metadata)</span>`;
  }
  // A client that registered without a name is named by where it returns to (its registration said nothing else).
  if (client.name === redirectDestination(request.redirectUri))
    return `An app returning to <b>${escape(client.name)}</b> <span class="warn">(registered itself without a name)</span>`;
  return `<b>${escape(client.name)}</b> <span class="warn">(registered itself; this name is not verified)</span>`;
}

function resourceLine(view: ConsentView): string {
  const { resource } = view.request;
  const { resources } = view;
  if (resource === resources.mcp) return 'the MCP server (agent tools)';
  if (resource === resources.api) return 'the REST API';
  return 'the MCP server and the REST API';
}

function workspacePicker(workspaces: ConsentView['workspaces']): string {
  if (workspaces.length === 1)
    return `<b>${escape(workspaces[0].name)}</b><input type="hidden" name="workspace" value="${escape(workspaces[0].id)}">`;
  const options = workspaces.map((w) => `<option value="${escape(w.id)}">${escape(w.name)}</option>`).join('');
  return `<select name="workspace" aria-label="Workspace">${options}</select>`;
}

/** The consent screen: who asks, for which workspace, which permissions (those the role does not allow struck out), and where it goes back to. */
export function consentPage(view: ConsentView): string {
  const granted = new Set(view.granted);
  const items = view.request.scopes
    .map((scope) => {
      const label = `${escape(MEANING[scope as Permission] ?? scope)} <code>${escape(scope)}</code>`;
      return granted.has(scope)
        ? `<li>${label}</li>`
        : `<li class="no"><span class="what">${label}</span><small>not granted: your role (${escape(view.member.role)}) does not allow it</small></li>`;
    })
    .join('');
  const hidden = Object.entries(view.params)
    .map(([name, value]) => `<input type="hidden" name="${escape(name)}" value="${escape(value)}">`)
    .join('');
  const back = new URL(view.request.redirectUri);
  const body = `<h1>Allow access to ${escape(view.member.organizationName)}?</h1>
<p>${clientLine(view.request)} asks to act as you, <b>${escape(view.member.email)}</b>, through ${resourceLine(view)}.</p>
<form method="post" action="/oauth/authorize">${hidden}<input type="hidden" name="csrf_token" value="${escape(view.csrfToken)}">
<div class="box">Workspace: ${workspacePicker(view.workspaces)}</div>
<p>It will be able to:</p><ul>${items}</ul>
<p class="who">After you decide you go back to <code>${escape(back.protocol === 'http:' || back.protocol === 'https:' ? back.host : back.protocol)}</code>.
You can revoke this access at any time in the console (Connected apps).</p>
<div class="buttons"><button class="allow" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></div></form>`;
  return page('Allow access?', body);
}

/** The way back to the client from a refusal page: the client, and the redirect URI carrying the error. */
export interface WayBack {
  client: AuthorizationRequest['client'];
  /** The redirect URI with `error`, `error_description`, `state` and `iss`. */
  href: string;
}

/**
 * A refusal page. With a way back (a signed-in person, the client established), it names the client
 * and where the link leads; the person decides whether to follow it (the service never redirects there by itself).
 */
export function errorPage(title: string, message: string, back?: WayBack): string {
  const where = back ? escape(redirectDestination(back.href)) : '';
  const link = back
    ? `<p>The request came from ${clientLine({ client: back.client, redirectUri: back.href })}.</p>
<p><a class="back" href="${escape(back.href)}">Return to the application</a> <span class="who">(<code>${where}</code>)</span></p>`
    : '';
  return page(title, `<h1>${escape(title)}</h1><p>${escape(message)}</p>${link}`);
}

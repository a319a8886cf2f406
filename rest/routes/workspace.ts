import { schemaOf } from '../../src/contract/jsonSchema.js';
import { RULES } from '../../src/contract/rules.js';
import { GetWorkspaceGuidance } from '../../schema/operations/GetWorkspaceGuidance.js';
import { SetWorkspaceGuidance } from '../../schema/operations/SetWorkspaceGuidance.js';
import { defineRoute, jsonBody, type Route } from '../routeDefinition.js';

const guidance = {
  markdown:
    '# How to use this workspace\n\nSearch before you write. Propose edits to published articles rather than changing them; keep runbooks in ' +
    'memory under `runbooks/`.',
};

/** The workspace's guidance for agents (beyond the specification's endpoints). */
export const WORKSPACE_ROUTES: Route[] = [
  defineRoute({
    name: 'guidance_get',
    method: 'GET',
    path: '/workspaces/{workspace}/guidance',
    operation: GetWorkspaceGuidance,
    tag: 'Workspace',
    summary: "Read the workspace's guidance for agents",
    description:
      "How this workspace's administrators ask agents to use it, in Markdown (empty when there is none); any key of the " +
      "workspace may read it. MCP hands it out in the server's instructions, and `/llms.txt` shows it to a key.",
    exampleValues: guidance,
    status: 200,
  }),
  defineRoute({
    name: 'guidance_set',
    method: 'PUT',
    path: '/workspaces/{workspace}/guidance',
    operation: SetWorkspaceGuidance,
    tag: 'Workspace',
    summary: "Replace the workspace's guidance for agents",
    description:
      'Needs `guidance.update` (admins and owners; no key has it unless given it). At most 4 KiB of Markdown; empty removes it. ' +
      'Sends the `workspace.guidance_updated` event with the guidance before and after.',
    body: jsonBody({
      variable: 'input',
      properties: { markdown: schemaOf(RULES.guidance, { description: 'The guidance, Markdown, at most 4 KiB (UTF-8).' }) },
      required: ['markdown'],
    }),
    exampleValues: guidance,
    status: 200,
  }),
];

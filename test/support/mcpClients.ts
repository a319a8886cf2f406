import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { Client as ClientV1 } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as TransportV1 } from '@modelcontextprotocol/sdk/client/streamableHttp.js';

/** What the MCP tests ask of a client, whichever SDK and revision it is. */
export interface McpTestClient {
  listTools(): Promise<{ tools: any[] }>;
  callTool(params: { name: string; arguments?: Record<string, unknown> }): Promise<any>;
  getInstructions(): string | undefined;
  close(): Promise<void>;
}

/** How one kind of host connects: the official SDK clients, on each protocol revision the service speaks. */
export interface McpClientKind {
  name: string;
  /** The revision it ends up speaking. */
  revision: '2025-11-25' | '2026-07-28';
  connect(url: string, bearer: string): Promise<McpTestClient>;
}

const headers = (bearer: string) => ({ requestInit: { headers: { authorization: `Bearer ${bearer}` } } });

/** A v2 client; `pin` makes it speak 2026-07-28 only (its default is the 2025 handshake, byte for byte). */
async function v2(url: string, bearer: string, pin: boolean): Promise<McpTestClient> {
  const client = new ClientV2(
    { name: 'test-agent', version: '1.0.0' },
    pin ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : undefined,
  );
  await client.connect(new TransportV2(new URL(`${url}/mcp`), headers(bearer)));
  const era = client.getProtocolEra();
  if (era !== (pin ? 'modern' : 'legacy')) throw new Error(`the v2 client speaks the ${era} era`);
  return client as unknown as McpTestClient;
}

/** The three clients every MCP acceptance test runs with. */
export const MCP_CLIENTS: McpClientKind[] = [
  {
    name: 'SDK v1 client (2025-11-25, what most hosts run)',
    revision: '2025-11-25',
    async connect(url, bearer) {
      const client = new ClientV1({ name: 'test-agent', version: '1.0.0' });
      await client.connect(new TransportV1(new URL(`${url}/mcp`), headers(bearer)));
      return client as unknown as McpTestClient;
    },
  },
  { name: 'SDK v2 client on 2025-11-25', revision: '2025-11-25', connect: (url, bearer) => v2(url, bearer, false) },
  { name: 'SDK v2 client on 2026-07-28', revision: '2026-07-28', connect: (url, bearer) => v2(url, bearer, true) },
];

// An example MCP server over stdio for the README's walk-throughs (MCP 2025-11-25, tools): it presents the tools of
// manifests/payments.json exactly as that file writes them and answers calls with made-up results, touching no
// network and no real payment provider. It exists so that `toolseal guard … -- node examples/payments-server.mjs`
// has something real to guard; a vendor's server would call Stripe here.
//
//   node examples/payments-server.mjs

import { readFileSync } from 'node:fs';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const manifest = JSON.parse(readFileSync(new URL('../manifests/payments.json', import.meta.url), 'utf8'));
/** The tools as an MCP server lists them: the manifest's tools without toolseal's own members. */
const withOutputSchema = new Set(manifest.tools.filter((tool) => tool.outputSchema).map((tool) => tool.name));
const tools = manifest.tools.map(({ capabilities: _capabilities, approval: _approval, ...tool }) => tool);

/** Made-up answers, one per tool; a tool with an outputSchema gets its answer as structured content too. */
const answers = {
  create_payment: (args) => ({
    payment_id: 'pi_example000001',
    status: 'succeeded',
    amount_minor: args.amount_minor,
    currency: args.currency,
  }),
  refund_payment: (args) => ({ refund_id: 're_example000001', status: 'succeeded', amount_minor: args.amount_minor }),
  get_payment: (args) => ({ payment_id: args.payment_id, status: 'succeeded' }),
  list_payments: () => ({ payments: [], has_more: false }),
};

const server = new Server(
  { name: 'toolseal-example-payments', version: manifest.version },
  { capabilities: { tools: {} } },
);

server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));

server.setRequestHandler(CallToolRequestSchema, async (request) => {
  const { name, arguments: args = {} } = request.params;
  const answer = answers[name];
  if (answer === undefined) throw new McpError(ErrorCode.InvalidParams, `unknown tool ${name}`);
  const result = answer(args);
  const content = [{ type: 'text', text: JSON.stringify(result) }];
  return withOutputSchema.has(name) ? { content, structuredContent: result } : { content };
});

process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());

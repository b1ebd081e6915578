// The approval service's routes (issue 13 §3, docs/approvals.md) and GET /v1/whoami. Bearer tokens per RFC 6750 §2.1
// (a host's for asking and consuming, an operator's for listing and deciding, either for reading one request); bodies
// are read as exact bytes within 64 KiB and parsed strictly by the registry. Answers are never cached (RFC 9111
// §5.2.2.5 no-store): they hold the commitment salt and the arguments of a call.

import { ToolsealError } from '../../core/errors.ts';
import { approvalPath } from '../../protocol/routes.ts';
import {
  APPROVAL_STATUSES,
  type ApprovalCreatedResponse,
  type ApprovalStatus,
  type WhoamiResponse,
} from '../../protocol/wire.ts';
import { MAX_APPROVAL_LIST_LIMIT, type Registry } from '../../registry/index.ts';
import { type App, type AppContext, readQuery } from '../app-env.ts';
import { readBearerToken } from '../auth.ts';
import { readBodyWithin } from '../body.ts';
import { mountOperation } from '../operations.ts';

const MAX_APPROVAL_BODY_BYTES = 64 * 1024;
const DEFAULT_LIST_LIMIT = 100;
const NO_STORE = { 'Cache-Control': 'no-store' };

export function mountApprovalRoutes(app: App, registry: Registry): void {
  mountOperation(app, 'whoami', async (c) =>
    c.json((await registry.whoami(tokenOf(c))) satisfies WhoamiResponse, 200, NO_STORE),
  );

  mountOperation(app, 'requestApproval', async (c) => {
    const host = await registry.authenticatePrincipal(tokenOf(c), 'host');
    const body = await readBodyWithin(c, MAX_APPROVAL_BODY_BYTES, 'approval request');
    const { created, ...outcome } = await registry.requestApproval(host, body);
    const url = new URL(approvalPath(outcome.id), registry.origin).href;
    const headers = created ? { ...NO_STORE, Location: url } : NO_STORE;
    return c.json({ ...outcome, url } satisfies ApprovalCreatedResponse, created ? 201 : 200, headers);
  });

  mountOperation(app, 'listApprovals', async (c) => {
    await registry.authenticatePrincipal(tokenOf(c), 'operator');
    return c.json(await registry.listApprovals(readStatus(c), readLimit(c)), 200, NO_STORE);
  });

  mountOperation(app, 'approval', async (c) => {
    const principal = await registry.authenticatePrincipal(tokenOf(c), 'any');
    return c.json(await registry.getApproval(principal, c.req.param('id')), 200, NO_STORE);
  });

  mountOperation(app, 'approvalDecision', async (c) => {
    const operator = await registry.authenticatePrincipal(tokenOf(c), 'operator');
    const body = await readBodyWithin(c, MAX_APPROVAL_BODY_BYTES, 'decision');
    return c.json(await registry.decideApproval(operator, c.req.param('id'), body), 200, NO_STORE);
  });

  mountOperation(app, 'approvalConsume', async (c) => {
    const host = await registry.authenticatePrincipal(tokenOf(c), 'host');
    const body = await readBodyWithin(c, MAX_APPROVAL_BODY_BYTES, 'approval consumption');
    return c.json(await registry.consumeApproval(host, c.req.param('id'), body), 200, NO_STORE);
  });
}

function tokenOf(c: AppContext): string | undefined {
  return readBearerToken(c.req.header('Authorization'));
}

function readStatus(c: AppContext): ApprovalStatus | undefined {
  const status = readQuery(c, 'status');
  if (status === undefined) return undefined;
  if (!(APPROVAL_STATUSES as readonly string[]).includes(status)) {
    throw new ToolsealError('BAD_REQUEST', `status must be one of ${APPROVAL_STATUSES.join(', ')}`);
  }
  return status as ApprovalStatus;
}

function readLimit(c: AppContext): number {
  const text = readQuery(c, 'limit');
  if (text === undefined) return DEFAULT_LIST_LIMIT;
  if (!/^[1-9][0-9]{0,2}$/.test(text) || Number(text) > MAX_APPROVAL_LIST_LIMIT) {
    throw new ToolsealError('BAD_REQUEST', `limit must be 1 to ${MAX_APPROVAL_LIST_LIMIT} in decimal digits`);
  }
  return Number(text);
}

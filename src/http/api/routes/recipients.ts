import type { FastifyInstance } from 'fastify';
import type { Product } from '../../../domain/products.js';
import { parseUsername } from '../../../domain/username.js';
import { checkRecipient, liveChecksUnavailable } from '../../../providers/recipient-check.js';
import type { ApiContext } from '../context.js';
import { VALIDATE_RECIPIENT } from '../openapi/operations.js';
import { validateRecipientBody } from '../schemas.js';

export function recipientRoutes(app: FastifyInstance, ctx: ApiContext): void {
  app.post<{ Body: { product: Product; recipient: string; quantity: number } }>(
    '/recipients/validate',
    { schema: { body: validateRecipientBody }, config: { openapi: VALIDATE_RECIPIENT } },
    async (request) => {
      const { product, quantity } = request.body;
      const username = parseUsername(request.body.recipient) as string;
      const directory = ctx.directories[request.caller.mode];
      if (!directory) throw liveChecksUnavailable();
      // Refusals (400 recipient_invalid with details.reason) and 503 come from checkRecipient.
      const found = await checkRecipient(directory, username, product, quantity);
      return { ok: true, recipient: { username: found.username, display_name: found.displayName, eligible: true } };
    },
  );
}

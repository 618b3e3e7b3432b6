import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../domain/api-error.js';
import type { Product } from '../../../domain/products.js';
import { parseUsername } from '../../../domain/username.js';
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
      if (!directory) {
        throw new ApiError('live_unavailable', 'Live recipient checks are not available right now. Retry later.');
      }
      const found = await directory.lookup(username, product, quantity);
      if (!found?.eligible) {
        throw new ApiError(
          'recipient_invalid',
          found ? `@${username} cannot receive ${product} right now.` : `No account @${username} exists.`,
          'recipient',
        );
      }
      return { ok: true, recipient: { username: found.username, display_name: found.displayName, eligible: true } };
    },
  );
}

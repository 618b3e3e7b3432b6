import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../../domain/api-error.js';
import type { Product } from '../../../domain/products.js';
import { parseUsername } from '../../../domain/username.js';
import { type RecipientDirectory, UpstreamUnavailableError } from '../../../providers/ports.js';
import type { ApiContext } from '../context.js';
import { VALIDATE_RECIPIENT } from '../openapi/operations.js';
import { validateRecipientBody } from '../schemas.js';

/** A live upstream that cannot answer is 503 live_unavailable (nothing is written). */
async function lookup(directory: RecipientDirectory, username: string, product: Product, quantity: number) {
  try {
    return await directory.lookup(username, product, quantity);
  } catch (error) {
    if (error instanceof UpstreamUnavailableError) {
      throw new ApiError('live_unavailable', 'Live recipient checks are not available right now. Retry later.');
    }
    throw error;
  }
}

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
      const found = await lookup(directory, username, product, quantity);
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

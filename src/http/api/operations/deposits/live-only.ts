import type { FastifyRequest } from 'fastify';
import { ApiError } from '../../../../domain/api-error.js';

/** The deposit operations are live-only: a test key gets 403 live_key_required (route preValidation). */
export async function requireLiveKey(request: FastifyRequest): Promise<void> {
  if (request.caller.mode !== 'live') throw new ApiError('live_key_required');
}

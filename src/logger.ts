import pino, { type Logger } from 'pino';

/**
 * JSON logs. Secrets never reach them: request logs carry method, url, host and remote address (Fastify's
 * serializers), and these paths are redacted wherever an object with them is logged.
 */
export function createLogger(level: string, destination: pino.DestinationStream | number = 1): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'apiKey', 'api_key', 'password', 'mnemonic', 'cookie'],
        censor: '[redacted]',
      },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination,
  );
}

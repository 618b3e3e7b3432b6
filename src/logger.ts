import pino, { type Logger } from 'pino';

/**
 * JSON logs. Secrets never reach them: request logs carry method, url, host and remote address
 * (the `req` serializer below), and these paths are redacted wherever an object with them is
 * logged.
 */
export function createLogger(level: string, destination: pino.DestinationStream | number = 1): Logger {
  return pino(
    {
      level,
      redact: {
        paths: ['req.headers.authorization', 'headers.authorization', 'authorization', 'key', 'apiKey', 'api_key', 'password', 'mnemonic', 'cookie'],
        censor: '[redacted]',
      },
      // Fastify's own request serializer, with the URL cleaned: it takes precedence over
      // Fastify's (a logger instance's serializers win), so every request line goes through it.
      serializers: { req: serializeRequest },
    },
    typeof destination === 'number' ? pino.destination({ fd: destination, sync: false }) : destination,
  );
}

interface LoggedRequest {
  method?: string;
  url?: string;
  host?: string;
  ip?: string;
  socket?: { remotePort?: number };
}

function serializeRequest(req: LoggedRequest) {
  return {
    method: req.method,
    url: typeof req.url === 'string' ? redactUrl(req.url) : req.url,
    host: req.host,
    remoteAddress: req.ip,
    remotePort: req.socket?.remotePort,
  };
}

/** Query parameters whose values are secrets by their name. */
const SECRET_PARAMETER = /key|token|secret|password|passwd|auth|session|mnemonic|signature/i;

/**
 * A URL as it may be logged: an API key pasted anywhere in it (path or query, by a client's
 * mistake) and the values of secret-sounding query parameters become `[redacted]`. Found by the
 * reliability suite: `GET /api/v1/balance?api_key=sk_test_…` used to log the key in clear.
 */
export function redactUrl(url: string): string {
  const cleaned = url.replace(/sk_(live|test)_[0-9A-Za-z]+/g, 'sk_$1_[redacted]');
  const queryStart = cleaned.indexOf('?');
  if (queryStart < 0) return cleaned;
  const pairs = cleaned
    .slice(queryStart + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name = pair.slice(0, eq);
      try {
        name = decodeURIComponent(name);
      } catch {
        // A malformed escape: judge the name as written.
      }
      return SECRET_PARAMETER.test(name) ? `${pair.slice(0, eq)}=[redacted]` : pair;
    });
  return `${cleaned.slice(0, queryStart + 1)}${pairs.join('&')}`;
}

import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A Bot API stand-in on 127.0.0.1 speaking the Bot API's JSON (getMe, getUpdates with long
 * polling, sendMessage, setWebhook, deleteWebhook). Faults: a number of 429 answers with
 * retry_after, 5xx answers, chats that blocked the bot (403), sendMessage left unanswered (`hold`).
 */
export interface SentMessage {
  chatId: string;
  text: string;
  parseMode: string | undefined;
}

export interface TestBotApi {
  /** TELEGRAM_API_URL for the service. */
  url: string;
  token: string;
  username: string;
  sent: SentMessage[];
  /** Every call seen: method names in order. */
  calls: string[];
  /** The next N sendMessage calls answer 429 with this retry_after. */
  rateLimit: { remaining: number; retryAfter: number };
  /** The next N sendMessage calls (of texts matching `serverErrorsFor`, when set) answer 502. */
  serverErrors: number;
  serverErrorsFor: RegExp | undefined;
  /** Chats that blocked the bot: sendMessage answers 403. */
  blocked: Set<string>;
  webhook: { url: string; secretToken: string } | undefined;
  /** While set, sendMessage gets no answer (a hung Bot API); `onHeld` is told when one arrives. */
  hold: boolean;
  onHeld: (() => void) | undefined;
  /** sendMessage calls received, answered or not. */
  sendCalls: number;
  /** An update for getUpdates: `/start <payload>` from this chat. */
  pushStart(chatId: string, payload: string, title?: string): void;
  close(): Promise<void>;
}

export const TEST_BOT_TOKEN = '123456789:AAHtestTOKENtestTOKENtestTOKENtest12';

export async function startBotApi(): Promise<TestBotApi> {
  let nextUpdateId = 1000;
  const updates: Array<{ update_id: number; message: unknown }> = [];
  const waiting = new Set<() => void>();
  const api: TestBotApi = {
    url: '',
    token: TEST_BOT_TOKEN,
    username: 'starport_test_bot',
    sent: [],
    calls: [],
    rateLimit: { remaining: 0, retryAfter: 1 },
    serverErrors: 0,
    serverErrorsFor: undefined,
    blocked: new Set(),
    webhook: undefined,
    hold: false,
    onHeld: undefined,
    sendCalls: 0,
    pushStart(chatId, payload, title) {
      updates.push({
        update_id: nextUpdateId++,
        message: {
          message_id: nextUpdateId,
          date: Math.floor(Date.now() / 1000),
          text: `/start ${payload}`,
          chat: { id: Number(chatId), type: 'private', first_name: title ?? 'Tester' },
        },
      });
      for (const wake of [...waiting]) wake();
    },
    close: async () => undefined,
  };
  const reply = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const match = /^\/bot([^/]+)\/(\w+)$/.exec(req.url ?? '');
      if (!match || match[1] !== api.token) return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
      const method = match[2] as string;
      api.calls.push(method);
      const body = chunks.length ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
      switch (method) {
        case 'getMe':
          return reply(res, 200, { ok: true, result: { id: 123456789, is_bot: true, first_name: 'Starport', username: api.username } });
        case 'sendMessage': {
          const chatId = String(body.chat_id);
          api.sendCalls++;
          if (api.hold) {
            api.onHeld?.();
            return;
          }
          if (api.rateLimit.remaining > 0) {
            api.rateLimit.remaining--;
            return reply(res, 429, {
              ok: false,
              error_code: 429,
              description: `Too Many Requests: retry after ${api.rateLimit.retryAfter}`,
              parameters: { retry_after: api.rateLimit.retryAfter },
            });
          }
          if (api.serverErrors > 0 && (api.serverErrorsFor === undefined || api.serverErrorsFor.test(String(body.text)))) {
            api.serverErrors--;
            return reply(res, 502, { ok: false, error_code: 502, description: 'Bad Gateway' });
          }
          if (api.blocked.has(chatId)) return reply(res, 403, { ok: false, error_code: 403, description: 'Forbidden: bot was blocked by the user' });
          api.sent.push({ chatId, text: String(body.text), parseMode: body.parse_mode as string | undefined });
          return reply(res, 200, { ok: true, result: { message_id: api.sent.length, chat: { id: Number(chatId) }, text: body.text } });
        }
        case 'getUpdates': {
          if (api.webhook) return reply(res, 409, { ok: false, error_code: 409, description: "Conflict: can't use getUpdates method while webhook is active" });
          const offset = Number(body.offset ?? 0);
          const timeout = Number(body.timeout ?? 0);
          const answer = () => {
            const ready = updates.filter((u) => u.update_id >= offset);
            reply(res, 200, { ok: true, result: ready });
          };
          if (updates.some((u) => u.update_id >= offset) || timeout === 0) return answer();
          const wake = () => {
            clearTimeout(timer);
            waiting.delete(wake);
            answer();
          };
          const timer = setTimeout(wake, timeout * 1000);
          waiting.add(wake);
          res.on('close', () => {
            clearTimeout(timer);
            waiting.delete(wake);
          });
          return;
        }
        case 'setWebhook':
          api.webhook = { url: String(body.url), secretToken: String(body.secret_token) };
          return reply(res, 200, { ok: true, result: true });
        case 'deleteWebhook':
          api.webhook = undefined;
          return reply(res, 200, { ok: true, result: true });
        default:
          return reply(res, 404, { ok: false, error_code: 404, description: 'Not Found: method not found' });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  api.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  api.close = () =>
    new Promise<void>((resolve) => {
      for (const wake of [...waiting]) wake();
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return api;
}

import { type SendOutcome, withDeadline } from './channels.js';

/**
 * The few Bot API methods Starport uses (docs/operations.md "Notifications"), over fetch:
 * `POST {TELEGRAM_API_URL}/bot<token>/<method>` with JSON. The token is in the path only, and
 * no error text made here holds it.
 */
export interface BotAnswer<T> {
  ok: boolean;
  result?: T;
  error_code?: number;
  description?: string;
  parameters?: { retry_after?: number };
}

export interface TelegramUpdate {
  update_id: number;
  message?: { text?: string; chat: { id: number | string; title?: string; username?: string; first_name?: string; type?: string } };
}

export class BotApiError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
  ) {
    super(message);
  }
}

export class TelegramBot {
  private username: string | undefined;

  constructor(
    private readonly apiUrl: string,
    private readonly token: string,
  ) {}

  /** Calls one method; throws BotApiError on a network failure, a timeout or an unreadable answer. */
  async call<T>(method: string, body: Record<string, unknown>, timeoutMs: number, signal?: AbortSignal): Promise<{ status: number; answer: BotAnswer<T> }> {
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const onAbort = () => controller.abort();
    signal?.addEventListener('abort', onAbort);
    try {
      const response = await fetch(`${this.apiUrl}/bot${this.token}/${method}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: controller.signal,
      });
      const text = await response.text();
      let answer: BotAnswer<T>;
      try {
        answer = JSON.parse(text) as BotAnswer<T>;
      } catch {
        throw new BotApiError(`${method}: HTTP ${response.status}, not a Bot API answer`, response.status);
      }
      return { status: response.status, answer };
    } catch (error) {
      if (error instanceof BotApiError) throw error;
      const reason = controller.signal.aborted ? `no answer within ${timeoutMs} ms` : ((error as { cause?: { code?: string } }).cause?.code ?? 'network error');
      throw new BotApiError(`${method}: ${reason}`, undefined);
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }

  async sendMessage(chatId: string, html: string, timeoutMs: number): Promise<SendOutcome> {
    const attempt = this.call<unknown>('sendMessage', { chat_id: chatId, text: html, parse_mode: 'HTML', link_preview_options: { is_disabled: true } }, timeoutMs)
      .then(({ status, answer }): SendOutcome => {
        if (answer.ok) return { ok: true };
        const code = answer.error_code ?? status;
        const error = `${code} ${(answer.description ?? '').slice(0, 200)}`.trim();
        if (code === 429) return { ok: false, permanent: false, error, retryAfterMs: Math.max(1, answer.parameters?.retry_after ?? 1) * 1000 };
        if (code === 403) return { ok: false, permanent: true, error, chatGone: true };
        if (code === 400 && /chat not found|user is deactivated|bot was kicked/i.test(answer.description ?? '')) return { ok: false, permanent: true, error, chatGone: true };
        if (code === 400) return { ok: false, permanent: true, error };
        return { ok: false, permanent: false, error };
      })
      .catch((error: unknown): SendOutcome => ({ ok: false, permanent: false, error: (error as Error).message }));
    return withDeadline(attempt, timeoutMs + 1000, () => ({ ok: false, permanent: false, error: `sendMessage: no answer within ${timeoutMs} ms` }));
  }

  /** The bot's @username (getMe, asked once), for deep links. */
  async botUsername(timeoutMs = 10_000): Promise<string> {
    if (this.username) return this.username;
    const { answer } = await this.call<{ username?: string }>('getMe', {}, timeoutMs);
    if (!answer.ok || !answer.result?.username) throw new BotApiError(`getMe: ${answer.error_code ?? ''} ${answer.description ?? 'no username'}`.trim(), answer.error_code);
    this.username = answer.result.username;
    return this.username;
  }

  async getUpdates(offset: number, timeoutSeconds: number, signal?: AbortSignal): Promise<TelegramUpdate[]> {
    const { status, answer } = await this.call<TelegramUpdate[]>(
      'getUpdates',
      { offset, timeout: timeoutSeconds, allowed_updates: ['message'] },
      timeoutSeconds * 1000 + 10_000,
      signal,
    );
    if (!answer.ok) throw new BotApiError(`getUpdates: ${answer.error_code ?? status} ${answer.description ?? ''}`.trim(), answer.error_code ?? status);
    return answer.result ?? [];
  }

  async setWebhook(url: string, secretToken: string): Promise<void> {
    const { status, answer } = await this.call<boolean>('setWebhook', { url, secret_token: secretToken, allowed_updates: ['message'] }, 10_000);
    if (!answer.ok) throw new BotApiError(`setWebhook: ${answer.error_code ?? status} ${answer.description ?? ''}`.trim(), answer.error_code ?? status);
  }

  async deleteWebhook(): Promise<void> {
    await this.call<boolean>('deleteWebhook', {}, 10_000);
  }
}

/** What one attempt to send a notification came to (worker.ts records it). */
export type SendOutcome =
  | { ok: true }
  | {
      ok: false;
      /** The receiving side refused this message for good (a bad address, a blocked bot): no retry. */
      permanent: boolean;
      /** The server's answer, or what went wrong; never holds a password, token or message body. */
      error: string;
      /** The server asked to wait this long (Telegram's retry_after). */
      retryAfterMs?: number;
      /** The person blocked the bot, or the chat is gone: the chat is unlinked. */
      chatGone?: boolean;
    };

export interface MailTransport {
  send(mail: { to: string; subject: string; text: string; html: string | null; id: string }, timeoutMs: number): Promise<SendOutcome>;
  close(): void;
}

/** Runs `work` with a deadline: an attempt always ends before its lease can (worker.ts). */
export async function withDeadline<T>(work: Promise<T>, ms: number, onTimeout: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(onTimeout()), ms);
  });
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}

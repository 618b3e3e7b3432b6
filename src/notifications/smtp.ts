import nodemailer, { type Transporter } from 'nodemailer';
import type { SmtpConfig } from './config.js';
import { type MailTransport, type SendOutcome, withDeadline } from './channels.js';

/**
 * E-mail over SMTP with nodemailer: one connection per message (no pool to go stale between
 * alerts), its timeouts within the attempt's deadline. A 5xx answer to the envelope or the
 * message (a bad recipient, a refused message) is permanent; anything else (refused or dropped
 * connection, 4xx, timeouts, authentication) is retried.
 */
export class SmtpTransport implements MailTransport {
  private readonly transporter: Transporter;

  constructor(
    private readonly config: SmtpConfig,
    private readonly from: string,
    timeoutMs: number,
  ) {
    this.transporter = nodemailer.createTransport({
      host: config.host,
      port: config.port,
      secure: config.secure,
      auth: config.user ? { user: config.user, pass: config.password ?? '' } : undefined,
      connectionTimeout: Math.min(10_000, timeoutMs),
      greetingTimeout: Math.min(10_000, timeoutMs),
      socketTimeout: timeoutMs,
      disableFileAccess: true,
      disableUrlAccess: true,
    });
  }

  async send(mail: { to: string; subject: string; text: string; html: string | null; id: string }, timeoutMs: number): Promise<SendOutcome> {
    const attempt = this.transporter
      .sendMail({
        from: this.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        ...(mail.html && { html: mail.html }),
        // The same Message-ID on every attempt: a receiver may drop the duplicate of a retry.
        messageId: `<${mail.id}@starport>`,
        headers: { 'X-Starport-Notification': mail.id },
      })
      .then((): SendOutcome => ({ ok: true }))
      .catch((error: unknown): SendOutcome => classify(error));
    // nodemailer's own timeouts end a hung attempt and close its socket, so an attempt given up
    // cannot complete later (a duplicate); this outer deadline only bounds a server that
    // answers, slowly, every step (the lease outlasts it: NotificationWorker.leaseMs).
    return withDeadline(attempt, timeoutMs + 1000, () => ({ ok: false, permanent: false, error: `no answer from ${this.config.display} within ${timeoutMs} ms` }));
  }

  close(): void {
    this.transporter.close();
  }
}

function classify(error: unknown): SendOutcome {
  const e = error as { code?: string; responseCode?: number; response?: string; message?: string };
  const answer = (e.response ?? e.message ?? String(error)).replace(/\s+/g, ' ').slice(0, 300);
  const permanent = typeof e.responseCode === 'number' && e.responseCode >= 500 && (e.code === 'EENVELOPE' || e.code === 'EMESSAGE');
  return { ok: false, permanent, error: `${e.code ?? 'error'}: ${answer}` };
}

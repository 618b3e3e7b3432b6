import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

/**
 * A real SMTP server (the smtp-server package) on 127.0.0.1 for the notification suites: what
 * arrives is parsed with mailparser. Faults: refuse recipients matching a pattern (550),
 * answer every message 451 for a while, or hold the DATA answer until released (a server that
 * hangs mid-message).
 */
export interface ReceivedMail {
  to: string[];
  subject: string;
  text: string;
  html: string;
  messageId: string | undefined;
  notificationId: string | undefined;
  parsed: ParsedMail;
}

export interface TestSmtpServer {
  url: string;
  port: number;
  mails: ReceivedMail[];
  /** RCPT TO answers 550 for addresses matching this. */
  rejectRecipients: RegExp | undefined;
  /** Every message answers 451 (try again later) while true. */
  tempFail: boolean;
  /** While set, a message's DATA answer waits; `onHeld` is told when one arrives. */
  hold: boolean;
  onHeld: (() => void) | undefined;
  releaseHeld(): void;
  /** Messages whose DATA arrived (accepted or not). */
  dataCount: number;
  close(): Promise<void>;
}

export async function startSmtpServer(port = 0): Promise<TestSmtpServer> {
  const held: Array<() => void> = [];
  const state: TestSmtpServer = {
    url: '',
    port: 0,
    mails: [],
    rejectRecipients: undefined,
    tempFail: false,
    hold: false,
    onHeld: undefined,
    dataCount: 0,
    releaseHeld() {
      for (const release of held.splice(0)) release();
    },
    close: async () => undefined,
  };
  const server = new SMTPServer({
    disabledCommands: ['STARTTLS', 'AUTH'],
    authOptional: true,
    logger: false,
    onRcptTo(address, _session, callback) {
      if (state.rejectRecipients?.test(address.address)) {
        const error = new Error('5.1.1 No such user here') as Error & { responseCode: number };
        error.responseCode = 550;
        return callback(error);
      }
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', async () => {
        state.dataCount++;
        const answer = async () => {
          if (state.tempFail) {
            const error = new Error('4.3.0 Try again later') as Error & { responseCode: number };
            error.responseCode = 451;
            return callback(error);
          }
          const parsed = await simpleParser(Buffer.concat(chunks));
          const to = (Array.isArray(parsed.to) ? parsed.to : parsed.to ? [parsed.to] : []).flatMap((a) => a.value.map((v) => v.address ?? ''));
          const header = parsed.headers.get('x-starport-notification');
          state.mails.push({
            to,
            subject: parsed.subject ?? '',
            text: parsed.text ?? '',
            html: typeof parsed.html === 'string' ? parsed.html : '',
            messageId: parsed.messageId,
            notificationId: typeof header === 'string' ? header : undefined,
            parsed,
          });
          callback();
        };
        if (state.hold) {
          held.push(() => void answer());
          state.onHeld?.();
        } else await answer();
      });
    },
  });
  // A connection the client (or a test's proxy) cuts is an 'error' of the server's: not the test's.
  server.on('error', () => undefined);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const address = server.server.address() as AddressInfo;
  state.port = address.port;
  state.url = `smtp://127.0.0.1:${address.port}`;
  state.close = () =>
    new Promise<void>((resolve) => {
      state.releaseHeld();
      server.close(() => resolve());
    });
  return state;
}

import { loadConfig } from '../../config.js';
import { formatTimestamp } from '../../domain/time.js';
import { type NewOperatorLink, newOperatorLink, createOperator, OperatorError } from '../../operator/operators.js';
import { type Command, type CommandIo, required, UsageError } from '../command.js';
import { withDatabase } from '../database.js';
import { ACTOR_HELP, actorOf, actorOption } from '../operator.js';

/**
 * The operator console's people (docs/operations.md "Operator console"): `operator create` and
 * `operator link` print a one-time set-password link. Its origin is the console's own listener
 * (OPERATOR_HOST:OPERATOR_PORT) when the port is fixed; the path alone otherwise, to open on
 * the console wherever it is reached (an SSH tunnel, a private proxy).
 */
function printLink(io: CommandIo, link: NewOperatorLink, what: string): number {
  const { host, port } = loadConfig().operator;
  const path = `/set-password?token=${link.token}`;
  const url = port ? `http://${host.includes(':') ? `[${host}]` : host}:${port}${path}` : null;
  const expiresAt = formatTimestamp(link.expiresAt);
  const where = url ?? `${path}\n(on the console's address: OPERATOR_PORT is not set to a fixed port here)`;
  io.result(
    { operator_id: link.operator.id, email: link.operator.email, role: link.operator.role, path, url, expires_at: expiresAt },
    `${what} ${link.operator.email} (${link.operator.role}):\n${where}\nIt works once, until ${expiresAt}. Two-factor sign-in is set up at the first sign-in.`,
  );
  return 0;
}

const refusals = (error: unknown): never => {
  if (error instanceof OperatorError) throw new UsageError(error.message);
  throw error;
};

export const operatorCreate: Command = {
  path: ['operator', 'create'],
  summary: 'Create a person of the operator console and print their one-time set-password link',
  usage: `starport operator create --email ADDRESS --role admin|support [--actor NAME] [--json]\n\nadmin: everything; support: reads everything, sends links, resets a client's two-factor, moves no money and changes no setting.\n${ACTOR_HELP}`,
  options: { email: { type: 'string' }, role: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const email = required(values, 'email');
    const role = required(values, 'role');
    const actor = actorOf(values);
    const link = await withDatabase((db) => createOperator(db, { email, role, actor })).catch(refusals);
    return printLink(io, link, 'Set-password link of the new operator');
  },
};

export const operatorLink: Command = {
  path: ['operator', 'link'],
  summary: 'Print a new one-time set-password link for an operator (their password and two-factor are set up again)',
  usage: `starport operator link --email ADDRESS [--actor NAME] [--json]\n\nFor a forgotten password or a lost device: the operator's sessions end, their password and two-factor are cleared.\n${ACTOR_HELP}`,
  options: { email: { type: 'string' }, ...actorOption },
  async run(values, io) {
    const email = required(values, 'email');
    const actor = actorOf(values);
    const link = await withDatabase((db) => newOperatorLink(db, { email, actor })).catch(refusals);
    return printLink(io, link, 'New set-password link of');
  },
};

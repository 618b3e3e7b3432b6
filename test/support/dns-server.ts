import dgram from 'node:dgram';
import net from 'node:net';

/**
 * A DNS server on 127.0.0.1 (UDP) that the test controls, for the service's webhook lookups
 * (WEBHOOK_DNS_SERVERS): each name answers with its IPv4 addresses, or stays silent (a name
 * whose servers never answer). Names it does not know answer NXDOMAIN. AAAA questions of a
 * known name answer with no records. Only what a stub resolver's A/AAAA query needs (RFC 1035
 * 4.1): one question, no compression on the way in.
 */
export interface DnsServer {
  /** `127.0.0.1:PORT`, for WEBHOOK_DNS_SERVERS. */
  address: string;
  /** name (lower case, no trailing dot) → IPv4 addresses, or 'silent' to never answer. */
  names: Map<string, string[] | 'silent'>;
  /** Every question received, in order: `${type} ${name}`. */
  questions: string[];
  close(): Promise<void>;
}

const TYPE_A = 1;
const TYPE_AAAA = 28;

export async function startDnsServer(): Promise<DnsServer> {
  const socket = dgram.createSocket('udp4');
  const server: DnsServer = {
    address: '',
    names: new Map(),
    questions: [],
    close: () => new Promise((resolve) => socket.close(() => resolve())),
  };
  socket.on('message', (query, peer) => {
    const question = parseQuestion(query);
    if (!question) return;
    server.questions.push(`${question.type === TYPE_A ? 'A' : question.type === TYPE_AAAA ? 'AAAA' : question.type} ${question.name}`);
    const entry = server.names.get(question.name);
    if (entry === 'silent') return;
    const addresses = entry && question.type === TYPE_A ? entry.filter((a) => net.isIPv4(a)) : [];
    socket.send(answer(query, question.end, entry === undefined ? 3 : 0, addresses), peer.port, peer.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  server.address = `127.0.0.1:${socket.address().port}`;
  return server;
}

function parseQuestion(query: Buffer): { name: string; type: number; end: number } | undefined {
  if (query.length < 12 || query.readUInt16BE(4) !== 1) return undefined;
  const labels: string[] = [];
  let at = 12;
  while (at < query.length) {
    const length = query[at] as number;
    if (length === 0) break;
    if (length > 63) return undefined;
    labels.push(query.subarray(at + 1, at + 1 + length).toString('ascii'));
    at += 1 + length;
  }
  if (at + 5 > query.length) return undefined;
  return { name: labels.join('.').toLowerCase(), type: query.readUInt16BE(at + 1), end: at + 5 };
}

/** The response: the query's id and question, the rcode, and one A record per address. */
function answer(query: Buffer, questionEnd: number, rcode: number, addresses: string[]): Buffer {
  const header = Buffer.alloc(12);
  query.copy(header, 0, 0, 2); // id
  const recursionDesired = (query[2] as number) & 0x01;
  header[2] = 0x84 | recursionDesired; // QR, AA, RD as asked
  header[3] = 0x80 | rcode; // RA
  header.writeUInt16BE(1, 4); // one question
  header.writeUInt16BE(addresses.length, 6);
  const records = addresses.map((address) => {
    const record = Buffer.alloc(16);
    record.writeUInt16BE(0xc00c, 0); // the question's name
    record.writeUInt16BE(TYPE_A, 2);
    record.writeUInt16BE(1, 4); // IN
    record.writeUInt32BE(5, 6); // TTL
    record.writeUInt16BE(4, 10);
    for (const [i, part] of address.split('.').entries()) record.writeUInt8(Number(part), 12 + i);
    return record;
  });
  return Buffer.concat([header, query.subarray(12, questionEnd), ...records]);
}

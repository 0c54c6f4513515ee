/**
 * The connection cap of the HTTP endpoint: at the cap a new connection closes the oldest silent one, else the one
 * idle longest, never one with a request under way; one address never holds more than its share.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { ConnectionGate } from '../../src/mcp/transports/connections';

class FakeSocket extends EventEmitter {
  destroyed = false;
  constructor(readonly remoteAddress: string) {
    super();
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.emit('close');
  }
}

function socket(address = '127.0.0.2'): Socket & FakeSocket {
  return new FakeSocket(address) as unknown as Socket & FakeSocket;
}

/** A request on `on` whose response ends when the returned function is called. */
function request(gate: ConnectionGate, on: Socket): () => void {
  const res = new EventEmitter();
  gate.request({ socket: on } as IncomingMessage, res as unknown as ServerResponse);
  return () => res.emit('close');
}

const gate = (maxConnections: number, maxPerAddress = 0) =>
  new ConnectionGate({ maxConnections, maxPerAddress, firstRequestTimeoutMs: 60_000 });

test('ConnectionGate: at the cap the oldest connection that never sent a request is closed for the new one', () => {
  const connections = gate(3);
  const [spoke, silentOld, silentNew] = [socket(), socket(), socket()];
  for (const held of [spoke, silentOld, silentNew]) connections.admit(held);
  request(connections, spoke)();
  const fresh = socket('127.0.0.1');
  connections.admit(fresh);
  expect([spoke.destroyed, silentOld.destroyed, silentNew.destroyed, fresh.destroyed]).toEqual([false, true, false, false]);
  expect(connections.size).toBe(3);
});

test('ConnectionGate: with none silent the one idle longest goes; busy ones never; all busy refuses the new one', () => {
  const connections = gate(2);
  const [idle, busy] = [socket(), socket()];
  connections.admit(idle);
  connections.admit(busy);
  request(connections, idle)();
  request(connections, busy);
  const first = socket();
  connections.admit(first);
  expect([idle.destroyed, busy.destroyed, first.destroyed]).toEqual([true, false, false]);
  request(connections, first);
  const refused = socket();
  connections.admit(refused);
  expect([busy.destroyed, first.destroyed, refused.destroyed]).toEqual([false, false, true]);
});

test('ConnectionGate: one address holds at most its share; a closed connection gives its place back', () => {
  const connections = gate(10, 2);
  const [a, b, c] = [socket(), socket(), socket()];
  for (const held of [a, b, c]) connections.admit(held);
  expect(c.destroyed).toBe(true);
  a.destroy();
  const d = socket();
  connections.admit(d);
  expect(d.destroyed).toBe(false);
  expect(connections.size).toBe(2);
});

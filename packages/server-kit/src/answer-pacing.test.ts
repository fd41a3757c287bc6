// The unary factory's answers through AnswerPacer, seen from a real grpc-js
// client: answers that a service readies in one turn (as a group commit
// readies its batch's) reach the client over several turns, a group at a
// time, so it can start on the first ones while the rest are encoded.
import { Writable } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencing, SERVICE_NAMES, unaryCall, type SinkClient } from '@fencer/proto';
import { ANSWERS_PER_TURN } from './answer-pacer.js';
import { insecureAuthenticator } from './auth.js';
import { startGrpcServer, type RunningServer } from './server.js';
import { unaryFactory } from './unary.js';

const CALLS = 4 * ANSWERS_PER_TURN;
const log = pino({ level: 'silent' }, new Writable({ write: (_chunk, _encoding, done) => done() }));
let server: RunningServer;
let client: SinkClient;
let arrived = 0;
let releaseAll!: () => void;
const allArrived = new Promise<void>((resolve) => (releaseAll = resolve));

beforeAll(async () => {
  const unary = unaryFactory({ service: 'pacing-test', log });
  server = await startGrpcServer({
    serviceName: SERVICE_NAMES.sink,
    listen: '127.0.0.1:0',
    definition: fencing.Sink.service,
    handlers: {
      // Every call waits for the last, so all answers are ready in one turn.
      GetFence: unary<{ resource: string }, { fence: string }>('GetFence', ['worker'], async () => {
        if (++arrived === CALLS) releaseAll();
        await allArrived;
        return { fence: '1' };
      }),
    },
    authenticator: insecureAuthenticator,
    maxReceiveMessageBytes: 1024 * 1024,
    log,
  });
  client = new fencing.Sink(server.address, grpc.credentials.createInsecure());
});

afterAll(async () => {
  client.close();
  await server.stop(0);
});

describe('unary answers ready together', () => {
  it(`leave at most ${ANSWERS_PER_TURN} per turn, so the client gets them over several turns`, async () => {
    // Counts the client's event-loop turns while the answers come in.
    let turn = 0;
    let counting = true;
    const countTurn = () => {
      if (!counting) return;
      turn++;
      setImmediate(countTurn);
    };
    setImmediate(countTurn);
    const answeredIn: number[] = [];
    await Promise.all(
      Array.from({ length: CALLS }, (_, i) =>
        unaryCall(client, client.GetFence, { resource: `r${i}` }, { timeoutMs: 10_000 }).then(() =>
          answeredIn.push(turn),
        ),
      ),
    );
    counting = false;
    expect(answeredIn).toHaveLength(CALLS);
    // Ready in one turn, all of them would arrive in one or two.
    expect(new Set(answeredIn).size).toBeGreaterThanOrEqual(CALLS / ANSWERS_PER_TURN);
  });
});

// One bidi call whose every message is a request of its own, answered by one
// message naming it (the sink's WriteStream and AdvanceFenceStream): the
// client side of server-kit's message streams. Requests go out as they
// come; each answer is matched to its request by a key both carry, and
// answers arrive in any order.
//
// It fails as a whole, which is what makes a retry safe: when the link
// drops, the server ends the call with a status, an answer is overdue past
// `timeoutMs`, or the server answers a key not waiting, the call is
// cancelled and every request still unanswered on it rejects with that
// failure; whether it landed is unknown, and the caller retries it (keyed
// as before) on a new call.
import * as grpc from '@grpc/grpc-js';

/** Why a call failed: the status the server ended it with, or one decided here. */
export interface StreamFailure {
  readonly code: grpc.status;
  readonly details: string;
  readonly metadata: grpc.Metadata;
}

/** What one MessageStreamCall needs. */
export interface MessageStreamSettings<Req, Res> {
  /** Opens the bidi call (with the caller's credentials). */
  readonly open: () => grpc.ClientDuplexStream<Req, Res>;
  /** How long a request may wait for its answer before the call counts as broken. */
  readonly timeoutMs: number;
  /** The key an answer names, the same as its request's. */
  readonly keyOfAnswer: (answer: Res) => string;
  /** Names a request in a failure's message ("write", "advance"). */
  readonly noun: string;
  /**
   * The channel the calls go on, if the stream should move to a new call
   * whenever it leaves READY: a GOAWAY (a server's max connection age, a
   * server stopping) lets the calls on the old connection finish but closes
   * it after a grace, failing whatever a long-lived call still carries then.
   */
  readonly channel?: grpc.ChannelInterface;
}

/** How one request's promise settles. */
export interface PendingAnswer<Res> {
  resolve(answer: Res): void;
  reject(failure: StreamFailure): void;
}

/** Two ids (resource and result id, resource and grant id) as one map key; the first's length keeps any two different pairs apart. */
export const pairKey = (first: string, second: string) => `${first.length}:${first}${second}`;

/** A failure decided on this side, without a status from the server. */
export function streamFailure(code: grpc.status, details: string): StreamFailure {
  return { code, details, metadata: new grpc.Metadata() };
}

/**
 * One open call and the requests waiting for its answers. Send no second
 * request of a key while the first is unanswered: its answer could not be
 * told apart. Once failed it sends nothing more.
 */
export class MessageStreamCall<Req, Res> {
  readonly #call: grpc.ClientDuplexStream<Req, Res>;
  readonly #settings: MessageStreamSettings<Req, Res>;
  /** Unanswered requests in the order sent, so the first is the one due soonest. */
  readonly #pending = new Map<string, { readonly settle: PendingAnswer<Res>; readonly dueAt: number }>();
  /** Armed while requests are pending, for the first one's due time (one timer, not one per request). */
  #timer: NodeJS.Timeout | undefined;
  readonly #onFailed: (call: MessageStreamCall<Req, Res>) => void;
  #failed = false;

  constructor(settings: MessageStreamSettings<Req, Res>, onFailed: (call: MessageStreamCall<Req, Res>) => void) {
    this.#settings = settings;
    this.#onFailed = onFailed;
    this.#call = settings.open();
    this.#call.on('data', (answer: Res) => this.#answer(answer));
    // 'status' always comes; 'error' repeats a non-OK one (and must be listened to).
    this.#call.on('error', () => undefined);
    this.#call.on('status', (status: grpc.StatusObject) =>
      this.fail(
        status.code === grpc.status.OK
          ? streamFailure(grpc.status.UNAVAILABLE, `the server ended the ${settings.noun} stream`)
          : status,
      ),
    );
  }

  get failed(): boolean {
    return this.#failed;
  }

  /** Sends one request; `pending` settles with its answer or this call's failure. */
  send(key: string, request: Req, pending: PendingAnswer<Res>): void {
    this.#pending.set(key, { settle: pending, dueAt: performance.now() + this.#settings.timeoutMs });
    this.#timer ??= setTimeout(() => this.#checkDue(), this.#settings.timeoutMs);
    this.#call.write(request);
  }

  /** Half-closes: the server answers what it has, then ends the call. */
  end(): void {
    if (!this.#failed) this.#call.end();
  }

  /** Cancels the call and rejects every pending request with `failure`. */
  fail(failure: StreamFailure): void {
    if (this.#failed) return;
    this.#failed = true;
    this.#call.cancel();
    clearTimeout(this.#timer);
    for (const { settle } of this.#pending.values()) settle.reject(failure);
    this.#pending.clear();
    this.#onFailed(this);
  }

  /** Fails the call if its oldest unanswered request is overdue; else waits for that one's due time. */
  #checkDue(): void {
    this.#timer = undefined;
    const oldest = this.#pending.values().next();
    if (oldest.done) return;
    const left = oldest.value.dueAt - performance.now();
    if (left > 0) {
      this.#timer = setTimeout(() => this.#checkDue(), left);
      return;
    }
    const { noun, timeoutMs } = this.#settings;
    this.fail(
      streamFailure(
        grpc.status.DEADLINE_EXCEEDED,
        `no answer to a ${noun} within ${timeoutMs} ms: the ${noun} stream counts as broken`,
      ),
    );
  }

  #answer(answer: Res): void {
    const key = this.#settings.keyOfAnswer(answer);
    const pending = this.#pending.get(key);
    if (!pending) {
      // Not a request this call is waiting for: nothing on it can be trusted to match.
      const { noun } = this.#settings;
      this.fail(
        streamFailure(grpc.status.INTERNAL, `the server answered a ${noun} this stream is not waiting for: ${key}`),
      );
      return;
    }
    this.#pending.delete(key);
    if (this.#pending.size === 0) {
      // Nothing left to time: an idle call holds no timer.
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    pending.settle.resolve(answer);
  }
}

/**
 * Requests on the open call: a new one is opened for the first request and
 * for the first after a failure. A request whose key is still in flight
 * waits for that one to settle, so that no answer can be matched to the
 * wrong one.
 */
export class MessageStream<Req, Res> {
  #call: MessageStreamCall<Req, Res> | undefined;
  /** Per key in flight: settles when its latest request has. */
  readonly #inFlight = new Map<string, Promise<unknown>>();
  #ended = false;

  constructor(private readonly settings: MessageStreamSettings<Req, Res>) {
    if (settings.channel) this.#watch(settings.channel, settings.channel.getConnectivityState(false));
  }

  /** Sends `request`; resolves with its answer or rejects with the StreamFailure of the call it went on. */
  send(key: string, request: Req): Promise<Res> {
    const before = this.#inFlight.get(key);
    const send = () => new Promise<Res>((resolve, reject) => this.#open().send(key, request, { resolve, reject }));
    // After the earlier one settles, whichever way: its failure is its own.
    const sent = before ? before.then(send, send) : send();
    this.#inFlight.set(key, sent);
    const forget = () => {
      if (this.#inFlight.get(key) === sent) this.#inFlight.delete(key);
    };
    sent.then(forget, forget);
    return sent;
  }

  /** Half-closes the open call, if any: the server answers what it has. Stops watching the channel. */
  end(): void {
    this.#ended = true;
    this.#call?.end();
  }

  /** Half-closes the open call when the channel leaves READY: what it carries is answered on it, the next request goes on a new one. */
  #watch(channel: grpc.ChannelInterface, state: grpc.connectivityState): void {
    // No deadline: the callback comes at the next change, the channel's close (SHUTDOWN) included.
    channel.watchConnectivityState(state, Infinity, () => {
      if (this.#ended) return;
      const now = channel.getConnectivityState(false);
      if (state === grpc.connectivityState.READY && now !== state && this.#call) {
        this.#call.end();
        this.#call = undefined;
      }
      if (now !== grpc.connectivityState.SHUTDOWN) this.#watch(channel, now);
    });
  }

  #open(): MessageStreamCall<Req, Res> {
    if (!this.#call || this.#call.failed) {
      this.#call = new MessageStreamCall(this.settings, (failed) => {
        if (this.#call === failed) this.#call = undefined;
      });
    }
    return this.#call;
  }
}

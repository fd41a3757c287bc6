// A port for tracing: core code names the steps a call goes through, and an
// adapter may record each as a span. Core never imports a tracing library.

/** What a step reports about itself once done (e.g. the decision it took). */
export type PhaseAttributes = Readonly<Record<string, string | number | boolean>>;

/** Runs the named steps of a call, recording them or not. */
export interface Phases {
  /** Runs `work` as step `name`; `describe` turns its result into attributes. Rejects as `work` does. */
  run<T>(name: string, work: () => Promise<T>, describe?: (result: T) => PhaseAttributes): Promise<T>;
}

/** Records nothing: the default wherever tracing is off. */
export const unrecorded: Phases = { run: (_name, work) => work() };

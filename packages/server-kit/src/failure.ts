import type { FieldViolation } from '@fencer/proto';
import type { Reason } from '@fencer/common';

/**
 * A protocol refusal: thrown by a handler, turned into a gRPC status with
 * ErrorInfo (and BadRequest) details by the one mapping in unary.ts.
 * `metadata` values travel as ErrorInfo metadata (strings on the wire).
 */
export class Failure extends Error {
  constructor(
    readonly reason: Reason,
    message: string,
    readonly metadata: Readonly<Record<string, string>> = {},
    readonly fieldViolations: readonly FieldViolation[] = [],
  ) {
    super(message);
    this.name = 'Failure';
  }
}

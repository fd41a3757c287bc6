// Tokens and incarnations are uint64 on the wire and bigint in code (T1):
// a value past the largest uint64 cannot be sent without being truncated.

/** 2^64 − 1: the largest uint64, and so the last token a resource can ever be granted (T1). */
export const UINT64_MAX = 2n ** 64n - 1n;

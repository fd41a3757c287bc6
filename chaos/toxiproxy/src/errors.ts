// The one way handlers fail: an HTTP status and Toxiproxy's error text
// (TOXIPROXY-API.md §2, error table).

/** A request the API refuses; `message` becomes the JSON `error` field verbatim. */
export class ApiError extends Error {
  override name = 'ApiError';

  constructor(
    readonly status: 400 | 404 | 409 | 500,
    message: string,
  ) {
    super(message);
  }
}

/** 404 `proxy not found`. */
export const proxyNotFound = () => new ApiError(404, 'proxy not found');
/** 404 `toxic not found`. */
export const toxicNotFound = () => new ApiError(404, 'toxic not found');

// The typed errors of the public API, and how an error crosses the worker
// boundary: the worker posts a plain description ({kind, code, message, ...})
// and the caller's side rebuilds the typed error from it.

// Mirrors wllm::ErrorCode (cpp/core/status.h).
export const ErrorCode = Object.freeze({
  OK: 0,
  INVALID_ARGUMENT: 1,
  BAD_FILE: 2,
  UNSUPPORTED: 3,
  OUT_OF_MEMORY: 4,
  CONTEXT_FULL: 5,
  ABORTED: 6,
  IO: 7,
  NEED_MORE_DATA: 8,
  INTERNAL: 9,
});

const codeNames = Object.fromEntries(Object.entries(ErrorCode).map(([name, code]) => [code, name]));

export function errorCodeName(code) {
  return codeNames[code] ?? `UNKNOWN_${code}`;
}

// An error reported by the C++ engine: its status code and message.
export class EngineError extends Error {
  constructor(code, message) {
    super(message);
    this.name = 'EngineError';
    this.code = errorCodeName(code);
    this.engineCode = code;
  }
}

// Loading failed: a bad or truncated file, an HTTP error, out of memory...
// `cause` holds the underlying error; `status` the HTTP status, if any.
export class LoadError extends Error {
  constructor(message, { cause, status } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'LoadError';
    if (status !== undefined) this.status = status;
  }
}

// The caller aborted the request (through an AbortSignal or by breaking out of a stream).
export class AbortError extends Error {
  constructor(message = 'the operation was aborted') {
    super(message);
    this.name = 'AbortError';
    this.code = 'ABORT_ERR';
  }
}

// Generation (or another request on a loaded model) failed.
export class GenerationError extends Error {
  constructor(message, { cause } = {}) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'GenerationError';
  }
}

// Worker side: a plain, structured-cloneable description of `error`.
export function describeError(error, kind) {
  if (error instanceof AbortError || error?.name === 'AbortError') return { kind: 'abort', message: error.message };
  const description = {
    kind: error instanceof LoadError ? 'load' : kind,
    message: String(error?.message ?? error),
  };
  if (error?.status !== undefined) description.status = error.status;
  const cause = error instanceof LoadError ? error.cause : error;
  if (cause instanceof EngineError) description.engineCode = cause.engineCode;
  else if (cause instanceof Error) description.causeMessage = cause.message;
  return description;
}

// Caller side: the typed error described by `d`.
export function errorFromDescription(d) {
  if (d.kind === 'abort') return new AbortError(d.message);
  let cause;
  if (d.engineCode !== undefined) cause = new EngineError(d.engineCode, d.message);
  else if (d.causeMessage !== undefined) cause = new Error(d.causeMessage);
  if (d.kind === 'load') return new LoadError(d.message, { cause, status: d.status });
  return new GenerationError(d.message, { cause });
}

// Throws the EngineError for a non-OK {code, message} status from the bindings.
export function checkStatus(status) {
  if (status.code !== ErrorCode.OK) throw new EngineError(status.code, status.message);
  return status;
}
